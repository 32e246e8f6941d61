// ConvTranspose on the packed SGEMM (ONNX ConvTranspose-1/11), float32, 2-D:
//   Y[n, g*M/group + m, i*stride - pad_begin + k*dilation] += X[n, g*C/group + c, i] * W[g*C/group + c, m, k]
// from Y = B (geometry: conv_transpose_geometry, as the reference ref/conv_transpose.cc).
//
// GEMM + col2im (the adjoint of Conv's im2col; Zeiler et al. / Caffe's "deconvolution"):
// per image n and group g, for a tile of NB input positions j,
//   col (Mg*K x NB) = W_g^T (Mg*K x Cg) * X_g[:, tile] (Cg x NB),   W_g = W[g*Cg .. , :, :] as Cg x (Mg*K)
// then each col row (m, k) is scattered (added) into output plane m at the positions its
// taps reach: Y[m, oy, ox] += col[(m, ky, kx), (iy, ix)] with oy = iy*sh - ph + ky*dh,
// ox = ix*sw - pw + kx*dw (positions outside Y dropped). W^T is sgemm's A operand; when W is
// a plan-time constant it is packed once at compile time. The scatter splits output
// channels over the threads (disjoint planes); the GEMM splits over them too.
// The PP-OCR detector's two 2x2 stride-2 ConvTransposes took 54% of its time on the
// reference's per-element scatter.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "backends/cpu/ref/conv2d_plane.h"
#include "backends/cpu/thread_pool.h"
#include "backends/cpu/x86/fused_tail.h"
#include "backends/cpu/x86/sgemm.h"
#include "backends/cpu/x86/x86_kernels.h"
#include "runtime/ops/spatial_attrs.h"

namespace tessera::x86 {

namespace {

constexpr int64_t kColTileFloats = 256 * 1024;  // target Mg*K x NB of one col tile (1 MiB)

inline size_t align64(size_t bytes) { return (bytes + 63) / 64 * 64; }

class ConvTransposeKernel final : public Kernel {
 public:
  WindowGeometry g;
  int64_t batch = 0, c_in = 0, m_out = 0, group = 1, cg = 0, mg = 0, in_size = 0, out_size = 0, k_size = 0;
  int64_t rows = 0;  // Mg * K
  int64_t tile = 0;
  bool has_bias = false;
  int threads = 1;
  cpu::SgemmIsa isa = cpu::SgemmIsa::kAuto;
  cpu::PackedGroups packed_w;  // per group: W_g^T packed as sgemm's A, when W is constant
  size_t col_bytes = 0, scratch = 0;

  size_t scratch_bytes() const override { return scratch; }

  Status run(const KernelContext& ctx) const override {
    const float* x = ctx.input(0).data_as<float>();
    const float* w = ctx.input(1).data_as<float>();
    const float* b = has_bias ? ctx.input(2).data_as<float>() : nullptr;
    float* y = ctx.output(0).data_as<float>();
    ThreadPool* pool = threads > 1 ? ctx.thread_pool : nullptr;
    float* col = static_cast<float*>(ctx.scratch);
    void* gemm_scratch = static_cast<char*>(ctx.scratch) + col_bytes;
    for (int64_t n = 0; n < batch; ++n) {
      float* yn = y + n * m_out * out_size;
      for (int64_t m = 0; m < m_out; ++m) std::fill(yn + m * out_size, yn + (m + 1) * out_size, b ? b[m] : 0.f);
      for (int64_t gi = 0; gi < group; ++gi) {
        const float* xg = x + (n * c_in + gi * cg) * in_size;
        for (int64_t j0 = 0; j0 < in_size; j0 += tile) {
          const int64_t nb = std::min(tile, in_size - j0);
          cpu::SgemmArgs a;
          a.m = rows;
          a.n = nb;
          a.k = cg;
          a.a = w + gi * cg * rows;  // W_g: Cg x (Mg*K), taken transposed
          a.lda = rows;
          a.trans_a = true;
          a.packed_a = packed_w.group(gi);
          a.b = xg + j0;
          a.ldb = in_size;
          a.c = col;
          a.ldc = nb;
          a.isa = isa;
          cpu::sgemm(a, gemm_scratch, pool, threads);
          parallel_for(pool, mg, [&](int64_t lo, int64_t hi) {
            for (int64_t m = lo; m < hi; ++m) scatter(col, nb, j0, m, yn + (gi * mg + m) * out_size);
          });
        }
      }
    }
    return Status::ok();
  }

 private:
  // Adds col rows (m, ky, kx) for input positions [j0, j0 + nb) into output plane `ym`.
  void scatter(const float* col, int64_t nb, int64_t j0, int64_t m, float* ym) const {
    const int64_t ih = g.in[0], iw = g.in[1], oh = g.out[0], ow = g.out[1];
    const int64_t sh = g.strides[0], sw = g.strides[1], dh = g.dilations[0], dw = g.dilations[1];
    const int64_t ph = g.pads_begin[0], pw = g.pads_begin[1];
    (void)ih;
    for (int64_t ky = 0; ky < g.kernel[0]; ++ky) {
      for (int64_t kx = 0; kx < g.kernel[1]; ++kx) {
        const float* cr = col + ((m * g.kernel[0] + ky) * g.kernel[1] + kx) * nb;  // this tap's row
        // Input columns ix whose output column ox = ix*sw - pw + kx*dw lies in [0, ow).
        const int64_t a = pw - kx * dw, e = ow + pw - kx * dw;  // ix*sw in [a, e)
        const int64_t ix_lo = a <= 0 ? 0 : (a + sw - 1) / sw;
        const int64_t ix_hi = std::min<int64_t>(iw, e <= 0 ? 0 : (e + sw - 1) / sw);
        for (int64_t j = j0; j < j0 + nb;) {
          const int64_t iy = j / iw, ix0 = j % iw;
          const int64_t run_end = std::min(j0 + nb, (iy + 1) * iw);  // one past this row's last position
          const int64_t oy = iy * sh - ph + ky * dh;
          if (oy >= 0 && oy < oh) {
            float* yr = ym + oy * ow - pw + kx * dw;  // yr[ix * sw] = Y[m, oy, ix*sw - pw + kx*dw]
            const float* src = cr + (j - j0) - ix0;   // src[ix] = col value at (iy, ix)
            const int64_t lo = std::max(ix0, ix_lo), hi = std::min(ix0 + (run_end - j), ix_hi);
            if (sw == 1) {
              for (int64_t ix = lo; ix < hi; ++ix) yr[ix] += src[ix];
            } else {
              for (int64_t ix = lo; ix < hi; ++ix) yr[ix * sw] += src[ix];
            }
          }
          j = run_end;
        }
      }
    }
  }
};

}  // namespace

Result<std::unique_ptr<Kernel>> make_ConvTranspose(const CompileContext& ctx) {
  const auto decline = [] { return Result<std::unique_ptr<Kernel>>(std::unique_ptr<Kernel>()); };
  bool has_bias = false;
  if (!float_conv_operands(ctx, &has_bias)) return decline();
  const Shape& xs = ctx.input(0).shape;
  const Shape& ws = ctx.input(1).shape;
  if (xs.size() != 4 || ws.size() != 4) return decline();
  auto geom = conv_transpose_geometry(ctx.node, xs, ws);
  if (!geom.is_ok()) return decline();  // the reference reports the error
  auto kern = std::make_unique<ConvTransposeKernel>();
  kern->g = std::move(geom.value());
  kern->group = ctx.node.attr_i("group", 1);
  kern->batch = xs[0];
  kern->c_in = xs[1];
  kern->mg = ws[1];
  kern->m_out = kern->mg * kern->group;
  if (kern->group < 1 || kern->c_in % kern->group != 0 || ws[0] != kern->c_in) return decline();
  if (has_bias && (ctx.input(2).shape.size() != 1 || ctx.input(2).shape[0] != kern->m_out)) return decline();
  kern->cg = kern->c_in / kern->group;
  kern->in_size = kern->g.in[0] * kern->g.in[1];
  kern->out_size = kern->g.out[0] * kern->g.out[1];
  kern->k_size = kern->g.kernel[0] * kern->g.kernel[1];
  kern->rows = kern->mg * kern->k_size;
  if (kern->in_size < 1 || kern->out_size < 1 || kern->rows < 1 || kern->cg < 1) return decline();
  kern->has_bias = has_bias;
  kern->threads = std::max(1, ctx.threads);
  kern->isa = cpu::sgemm_best_isa();
  kern->tile = std::min(kern->in_size, std::max<int64_t>(32, kColTileFloats / kern->rows / 32 * 32));
  kern->col_bytes = align64(static_cast<size_t>(kern->rows * kern->tile) * sizeof(float));
  kern->scratch = kern->col_bytes + align64(cpu::sgemm_scratch_bytes(kern->rows, kern->tile, kern->cg, kern->threads, kern->isa));
  if (const auto& wc = ctx.input(1).constant)
    TSR_RETURN_IF_ERROR(kern->packed_w.pack(wc->data_as<float>(), kern->group, kern->cg * kern->rows, kern->rows, true,
                                            kern->rows, kern->cg, kern->isa, ctx.node.describe()));
  return std::unique_ptr<Kernel>(std::move(kern));
}

}  // namespace tessera::x86
