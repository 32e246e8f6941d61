// x86 MaxPool (ONNX MaxPool-1/8/10/11/12) and AveragePool (AveragePool-1/7/10/11/19) for 2-D
// NCHW float32 with dilation 1 and no Indices output, and GlobalAveragePool /
// GlobalMaxPool (-1) for float32 of any rank >= 3. Same results as the reference kernels
// (ref/max_pool.cc, ref/average_pool.cc, ref/global_*_pool.cc): max is exact (NaN aside:
// maxps does not propagate a NaN that comes after a number); averages sum in float rather
// than double (error <= (taps + 2) * 2^-24 relative to the sum of |x| / count).
// Geometry (pads, auto_pad, ceil_mode) is window_geometry's, as in the reference. Declines
// (null kernel: the reference runs) other ranks, dtypes, dilations, the Indices output, a
// window entirely in the padding, or a CPU without AVX2+FMA.
// Threads: output rows (planes * OH) are split over the plan's threads, one row buffer of
// scratch per thread. Algorithm: pool_x86.h.
#include <algorithm>
#include <memory>
#include <vector>

#include "backends/cpu/x86/isa_x86.h"
#include "backends/cpu/x86/parallel_x86.h"
#include "backends/cpu/x86/pool_x86.h"
#include "backends/cpu/x86/x86_kernels.h"
#include "runtime/ops/spatial_attrs.h"

namespace tessera::x86 {

namespace {

inline size_t align64(size_t bytes) { return (bytes + 63) / 64 * 64; }

// Valid taps of window position o in one dim: [o * s - pad, o * s - pad + k) clipped to [0, in).
int64_t valid_taps(int64_t o, int64_t s, int64_t pad, int64_t k, int64_t in) {
  const int64_t b = std::max<int64_t>(0, o * s - pad), e = std::min(in, o * s - pad + k);
  return e - b;
}

class Pool2dKernel final : public Kernel {
 public:
  Pool2dPlan p;
  std::vector<float> row_inv, col_inv;  // plan-time constants (average without count_include_pad)
  Isa isa = Isa::kAvx512;
  int threads = 1;

  size_t scratch_bytes() const override { return static_cast<size_t>(threads) * align64(p.row_len * sizeof(float)); }
  Status run(const KernelContext& ctx) const override {
    const float* x = ctx.input(0).data_as<float>();
    float* y = ctx.output(0).data_as<float>();
    const size_t slot_floats = align64(p.row_len * sizeof(float)) / sizeof(float);
    float* scratch = static_cast<float*>(ctx.scratch);
    const int64_t rows = p.planes * p.oh;
    const int slots = threads_for(p.planes * p.h * p.w, threads);
    run_slots(ctx.thread_pool, slots, rows, [&](int64_t slot, int64_t b, int64_t e) {
      float* t = scratch + slot * slot_floats;
      TSR_ISA_DISPATCH(isa, pool2d_rows(p, x, y, t, b, e));
    });
    return Status::ok();
  }
};

Result<std::unique_ptr<Kernel>> make_pool2d(const CompileContext& ctx, bool is_max) {
  const Isa isa = best_isa();
  if (isa == Isa::kScalar || !ctx.has_input(0) || ctx.input(0).dtype != DType::kFloat32 ||
      ctx.input(0).shape.size() != 4)
    return std::unique_ptr<Kernel>();
  if (is_max && ctx.node.outputs.size() > 1 && ctx.node.outputs[1] >= 0) return std::unique_ptr<Kernel>();
  const Shape& xs = ctx.input(0).shape;
  TSR_ASSIGN_OR_RETURN(WindowGeometry g, window_geometry(ctx.node, xs, {}, ctx.node.attr_i("ceil_mode", 0) == 1));
  if (g.dilations[0] != 1 || g.dilations[1] != 1) return std::unique_ptr<Kernel>();
  auto k = std::make_unique<Pool2dKernel>();
  Pool2dPlan& p = k->p;
  p.is_max = is_max;
  p.planes = xs[0] * xs[1];
  p.h = g.in[0], p.w = g.in[1], p.oh = g.out[0], p.ow = g.out[1];
  p.kh = g.kernel[0], p.kw = g.kernel[1], p.sh = g.strides[0], p.sw = g.strides[1];
  p.pt = g.pads_begin[0], p.pl = g.pads_begin[1];
  if (p.planes == 0 || p.oh == 0 || p.ow == 0) return std::unique_ptr<Kernel>();
  for (int64_t o = 0; o < p.oh; ++o) {
    const int64_t n = valid_taps(o, p.sh, p.pt, p.kh, p.h);
    if (n <= 0) return std::unique_ptr<Kernel>();  // an all-padding window: the reference's rule
    k->row_inv.push_back(1.f / static_cast<float>(n));
  }
  for (int64_t o = 0; o < p.ow; ++o) {
    const int64_t n = valid_taps(o, p.sw, p.pl, p.kw, p.w);
    if (n <= 0) return std::unique_ptr<Kernel>();
    k->col_inv.push_back(1.f / static_cast<float>(n));
  }
  // Room for the last window, and for the SW = 2 path's two vector loads past it.
  p.row_len = std::max(p.pl + p.w, (p.ow - 1) * p.sw + p.kw) + 2 * 16 + 1;
  p.count_include_pad = !is_max && ctx.node.attr_i("count_include_pad", 0) == 1;
  p.row_inv = k->row_inv.data();
  p.col_inv = k->col_inv.data();
  k->isa = isa;
  k->threads = ctx.threads;
  return std::unique_ptr<Kernel>(std::move(k));
}

Result<std::unique_ptr<Kernel>> make_global_pool(const CompileContext& ctx, bool is_max) {
  const Isa isa = best_isa();
  if (isa == Isa::kScalar || !ctx.has_input(0) || ctx.input(0).dtype != DType::kFloat32 ||
      ctx.input(0).shape.size() < 3)
    return std::unique_ptr<Kernel>();
  const Shape& xs = ctx.input(0).shape;
  const int64_t planes = xs[0] * xs[1];
  int64_t size = 1;
  for (size_t i = 2; i < xs.size(); ++i) size *= xs[i];
  if (size == 0) return std::unique_ptr<Kernel>();  // the reference's empty-plane rule
  const int threads = ctx.threads;
  return make_fn_kernel([=](const KernelContext& kc) {
    const float* x = kc.input(0).data_as<float>();
    float* y = kc.output(0).data_as<float>();
    run_slots(kc.thread_pool, threads_for(planes * size, threads), planes, [&](int64_t, int64_t b, int64_t e) {
      const RowReduce op = is_max ? RowReduce::kMax : RowReduce::kMean;
      TSR_ISA_DISPATCH(isa, reduce_rows(op, x, y, size, b, e));
    });
    return Status::ok();
  });
}

}  // namespace

Result<std::unique_ptr<Kernel>> make_MaxPool(const CompileContext& ctx) { return make_pool2d(ctx, true); }
Result<std::unique_ptr<Kernel>> make_AveragePool(const CompileContext& ctx) { return make_pool2d(ctx, false); }
Result<std::unique_ptr<Kernel>> make_GlobalMaxPool(const CompileContext& ctx) { return make_global_pool(ctx, true); }
Result<std::unique_ptr<Kernel>> make_GlobalAveragePool(const CompileContext& ctx) {
  return make_global_pool(ctx, false);
}

}  // namespace tessera::x86
