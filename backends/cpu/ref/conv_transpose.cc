// ConvTranspose reference kernel (ONNX ConvTranspose-1/11): the adjoint of Conv. Every
// input element scatters into the output,
//   Y[n, g*M/group + m, i*stride - pad_begin + k*dilation] += X[n, g*C/group + c, i] * W[g*C/group + c, m, k]
// (positions outside the output are dropped), starting from Y = B. The scatter sums in
// float, in a fixed order (input channel, input position, kernel tap).
#include <algorithm>

#include "backends/cpu/ref/nd_index.h"
#include "backends/cpu/ref/ref_kernels.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_ConvTranspose(const CompileContext& ctx) {
  const Shape& xs = ctx.input(0).shape;
  const Shape& ws = ctx.input(1).shape;
  TSR_ASSIGN_OR_RETURN(WindowGeometry g, conv_transpose_geometry(ctx.node, xs, ws));
  const int64_t group = ctx.node.attr_i("group", 1);
  const int64_t batch = xs[0], c_in = xs[1], mg = ws[1];
  const bool has_bias = ctx.has_input(2);
  return make_fn_kernel([=](const KernelContext& k) {
    const float* x = k.input(0).data_as<float>();
    const float* w = k.input(1).data_as<float>();
    const float* b = has_bias ? k.input(2).data_as<float>() : nullptr;
    float* y = k.output(0).data_as<float>();
    const int nd = g.rank;
    const int64_t cg = c_in / group, m_out = mg * group;
    const int64_t in_size = product(g.in), out_size = product(g.out), k_size = product(g.kernel);
    for (int64_t n = 0; n < batch; ++n) {
      for (int64_t m = 0; m < m_out; ++m) {
        float* y_nm = y + (n * m_out + m) * out_size;
        std::fill(y_nm, y_nm + out_size, b ? b[m] : 0.f);
        const int64_t grp = m / mg, m_in_group = m % mg;
        for (int64_t c = 0; c < cg && in_size > 0; ++c) {
          const int64_t ci = grp * cg + c;
          const float* x_nc = x + (n * c_in + ci) * in_size;
          const float* w_cm = w + (ci * mg + m_in_group) * k_size;
          SpatialIndex i{};
          int64_t i_lin = 0;
          do {
            const float xv = x_nc[i_lin++];
            SpatialIndex kk{};
            int64_t k_lin = 0;
            do {
              const int64_t y_lin = window_tap(i, kk, g, g.out, nd);
              if (y_lin >= 0) y_nm[y_lin] += xv * w_cm[k_lin];
              ++k_lin;
            } while (next_index(kk, g.kernel, nd));
          } while (next_index(i, g.in, nd));
        }
      }
    }
    return Status::ok();
  });
}

}  // namespace tessera::ref
