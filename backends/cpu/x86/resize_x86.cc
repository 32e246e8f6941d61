// x86 Resize (ONNX Resize-10/11/13/18/19), 4-D NCHW float32 resizing only H and W: any mode
// (nearest, linear, cubic), coordinate transformation and antialias except
// tf_crop_and_resize with coordinates outside the input (extrapolation), with the
// reference's own taps (ref/resize_kernel.h), so indices and weights agree exactly.
// Nearest is bit-exact; other modes sum in float (the reference in double): error within
// (th * tw + 2) * 2^-24 * sum_taps |w x| (tests/unit/x86_resize_test.cc). Output rows
// (planes * OH) are split over the plan's threads, a row buffer of W floats per thread.
// Algorithm: resize_x86.h. Declines other ranks and dtypes, N or C resized, sizes over
// 2^31, extrapolation, and CPUs without AVX2+FMA.
#include <limits>
#include <memory>
#include <vector>

#include "backends/cpu/ref/resize_kernel.h"
#include "backends/cpu/x86/isa_x86.h"
#include "backends/cpu/x86/parallel_x86.h"
#include "backends/cpu/x86/resize_x86.h"
#include "backends/cpu/x86/x86_kernels.h"

namespace tessera::x86 {

namespace {

inline size_t align64(size_t bytes) { return (bytes + 63) / 64 * 64; }

// True when the taps of a dim map every output index o to input index o with weight 1.
bool identity_taps(const ref::ResizeAxisTaps& a, int64_t n) {
  for (int64_t o = 0; o < n; ++o) {
    if (a.outside[o]) return false;
    for (int j = 0; j < a.taps; ++j) {
      const size_t t = static_cast<size_t>(o * a.taps + j);
      const bool ok = a.w[t] == 0.f || (a.idx[t] == o && a.w[t] == 1.f);
      if (!ok) return false;
    }
  }
  return true;
}

class Resize2dKernel final : public Kernel {
 public:
  Resize2dPlan p;
  std::vector<int32_t> ih, iw;
  std::vector<float> wh, ww;
  Isa isa = Isa::kAvx512;
  int threads = 1;

  size_t scratch_bytes() const override { return static_cast<size_t>(threads) * align64((p.w + 16) * sizeof(float)); }
  Status run(const KernelContext& ctx) const override {
    const float* x = ctx.input(0).data_as<float>();
    float* y = ctx.output(0).data_as<float>();
    const size_t slot_floats = align64((p.w + 16) * sizeof(float)) / sizeof(float);
    float* scratch = static_cast<float*>(ctx.scratch);
    const int slots = threads_for(p.planes * p.oh * p.ow * (p.tw + 1), threads);
    run_slots(ctx.thread_pool, slots, p.planes * p.oh, [&](int64_t slot, int64_t b, int64_t e) {
      float* t = scratch + slot * slot_floats;
      TSR_ISA_DISPATCH(isa, resize2d_rows(p, x, y, t, b, e));
    });
    return Status::ok();
  }
};

// The taps along H and W of ctx's Resize when this file's kernels take it (4-D float32,
// sizes below 2^30, N and C kept, no extrapolation); false otherwise (the reference then
// runs it and reports bad attributes).
bool hw_taps(const CompileContext& ctx, ResizeParams* rp, ref::ResizeAxisTaps* th, ref::ResizeAxisTaps* tw) {
  if (!ctx.has_input(0) || ctx.input(0).dtype != DType::kFloat32 || ctx.input(0).shape.size() != 4) return false;
  auto in = [&](size_t i) { return ctx.has_input(i) ? &ctx.input(i) : nullptr; };
  Result<ResizeParams> pr = ctx.node.opset < 11 ? resize_params(ctx.node, ctx.input(0).shape, nullptr, in(1), nullptr)
                                                : resize_params(ctx.node, ctx.input(0).shape, in(1), in(2), in(3));
  if (!pr.is_ok()) return false;
  *rp = pr.value();
  for (int d = 0; d < 4; ++d)
    if (rp->in[d] <= 0 || rp->out[d] <= 0 || rp->in[d] > std::numeric_limits<int32_t>::max() / 2 ||
        rp->out[d] > std::numeric_limits<int32_t>::max() / 2)
      return false;
  if (rp->in[0] != rp->out[0] || rp->in[1] != rp->out[1]) return false;
  if (!identity_taps(ref::resize_axis_taps(*rp, 0), rp->out[0]) || !identity_taps(ref::resize_axis_taps(*rp, 1), rp->out[1]))
    return false;
  *th = ref::resize_axis_taps(*rp, 2);
  *tw = ref::resize_axis_taps(*rp, 3);
  for (uint8_t o : th->outside)
    if (o) return false;
  for (uint8_t o : tw->outside)
    if (o) return false;
  return true;
}

}  // namespace

bool resize_nearest_indices(const CompileContext& ctx, std::vector<int32_t>* ih, std::vector<int32_t>* iw) {
  ResizeParams rp;
  ref::ResizeAxisTaps t[2];
  if (!hw_taps(ctx, &rp, &t[0], &t[1])) return false;
  for (int d = 0; d < 2; ++d) {
    if (t[d].taps != 1) return false;
    for (float w : t[d].w)
      if (w != 1.f) return false;
    std::vector<int32_t>& idx = d == 0 ? *ih : *iw;
    idx.assign(t[d].idx.begin(), t[d].idx.end());
  }
  return true;
}

Result<std::unique_ptr<Kernel>> make_Resize(const CompileContext& ctx) {
  const Isa isa = best_isa();
  ResizeParams rp;
  ref::ResizeAxisTaps th, tw;
  if (isa == Isa::kScalar || !hw_taps(ctx, &rp, &th, &tw)) return std::unique_ptr<Kernel>();
  auto k = std::make_unique<Resize2dKernel>();
  Resize2dPlan& p = k->p;
  p.planes = rp.in[0] * rp.in[1];
  p.h = rp.in[2], p.w = rp.in[3], p.oh = rp.out[2], p.ow = rp.out[3];
  p.th = th.taps, p.tw = tw.taps;
  k->ih.assign(th.idx.begin(), th.idx.end());
  k->wh = th.w;
  // Columns tap-major, so that a vector of kW outputs loads kW consecutive indices per tap.
  k->iw.resize(static_cast<size_t>(p.tw * p.ow));
  k->ww.resize(k->iw.size());
  for (int64_t o = 0; o < p.ow; ++o)
    for (int j = 0; j < p.tw; ++j) {
      k->iw[static_cast<size_t>(j * p.ow + o)] = static_cast<int32_t>(tw.idx[static_cast<size_t>(o * p.tw + j)]);
      k->ww[static_cast<size_t>(j * p.ow + o)] = tw.w[static_cast<size_t>(o * p.tw + j)];
    }
  p.copy_rows = p.th == 1;
  for (float w : k->wh) p.copy_rows = p.copy_rows && w == 1.f;
  p.copy_cols = p.tw == 1;
  for (float w : k->ww) p.copy_cols = p.copy_cols && w == 1.f;
  p.ih = k->ih.data();
  p.wh = k->wh.data();
  p.iw = k->iw.data();
  p.ww = k->ww.data();
  k->isa = isa;
  k->threads = ctx.threads;
  return std::unique_ptr<Kernel>(std::move(k));
}

}  // namespace tessera::x86
