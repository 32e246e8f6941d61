// Conv reference kernel (ONNX Conv-1/11): direct convolution over N spatial dims,
//   Y[n, m, o] = B[m] + sum_{c < C/group, k} X[n, g*C/group + c, o*stride - pad_begin + k*dilation] * W[m, c, k]
// with g = m / (M/group); taps that fall in the padding contribute 0.
// The N-d path accumulates each output in double. 2-D convolutions (nearly all real models)
// take conv2d_rows: the same sum, ordered (c, kh, kw) outside and output columns inside so
// that the innermost loop is a contiguous axpy the compiler vectorizes; it accumulates in
// float, in a fixed order, and skips padded taps by clipping the output ranges.
#include <algorithm>

#include "backends/cpu/ref/conv2d_plane.h"
#include "backends/cpu/ref/nd_index.h"
#include "backends/cpu/ref/ref_kernels.h"

namespace tessera::ref {

namespace {

void conv2d_rows(const float* x, const float* w, const float* b, float* y, int64_t batch, int64_t c_in, int64_t m_out,
                 int64_t group, const WindowGeometry& g) {
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t m = 0; m < m_out; ++m) conv2d_plane(x, w, b, y, n, m, c_in, m_out, group, g);
}

}  // namespace

Result<std::unique_ptr<Kernel>> make_Conv(const CompileContext& ctx) {
  const Shape& xs = ctx.input(0).shape;
  const Shape& ws = ctx.input(1).shape;
  std::vector<int64_t> w_kernel(ws.begin() + 2, ws.end());
  TSR_ASSIGN_OR_RETURN(WindowGeometry g, window_geometry(ctx.node, xs, w_kernel, false));
  const int64_t group = ctx.node.attr_i("group", 1);
  const int64_t batch = xs[0], c_in = xs[1], m_out = ws[0];
  const bool has_bias = ctx.has_input(2);
  return make_fn_kernel([=](const KernelContext& k) {
    const float* x = k.input(0).data_as<float>();
    const float* w = k.input(1).data_as<float>();
    const float* b = has_bias ? k.input(2).data_as<float>() : nullptr;
    float* y = k.output(0).data_as<float>();
    if (g.rank == 2) {
      conv2d_rows(x, w, b, y, batch, c_in, m_out, group, g);
      return Status::ok();
    }
    const int nd = g.rank;
    const int64_t cg = c_in / group, mg = m_out / group;
    const int64_t in_size = product(g.in), out_size = product(g.out), k_size = product(g.kernel);
    for (int64_t n = 0; n < batch; ++n) {
      for (int64_t m = 0; m < m_out; ++m) {
        const int64_t grp = m / mg;
        float* y_nm = y + (n * m_out + m) * out_size;
        SpatialIndex o{};
        int64_t o_lin = 0;
        do {
          double acc = b ? b[m] : 0.0;
          for (int64_t c = 0; c < cg; ++c) {
            const float* x_nc = x + (n * c_in + grp * cg + c) * in_size;
            const float* w_mc = w + (m * cg + c) * k_size;
            SpatialIndex kk{};
            int64_t k_lin = 0;
            do {
              const int64_t x_lin = window_tap(o, kk, g, g.in, nd);
              if (x_lin >= 0) acc += static_cast<double>(x_nc[x_lin]) * w_mc[k_lin];
              ++k_lin;
            } while (next_index(kk, g.kernel, nd));
          }
          y_nm[o_lin++] = static_cast<float>(acc);
        } while (next_index(o, g.out, nd));
      }
    }
    return Status::ok();
  });
}

}  // namespace tessera::ref
