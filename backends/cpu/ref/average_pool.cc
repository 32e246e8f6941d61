// AveragePool reference kernel (ONNX AveragePool-1/7/10/11/19):
//   Y[n, c, o] = sum_{taps inside X} X[n, c, p] / count
// with p = o*stride - pad_begin + k*dilation; count = the taps inside X
// (count_include_pad = 0) or the whole kernel, prod(kernel_shape) (= 1; a ceil_mode
// window that reaches past the end pad still divides by the whole kernel, as in
// onnxruntime and the ONNX reference implementation).
#include "backends/cpu/ref/nd_index.h"
#include "backends/cpu/ref/ref_kernels.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_AveragePool(const CompileContext& ctx) {
  const Shape& xs = ctx.input(0).shape;
  TSR_ASSIGN_OR_RETURN(WindowGeometry g, window_geometry(ctx.node, xs, {}, ctx.node.attr_i("ceil_mode", 0) == 1));
  const bool count_include_pad = ctx.node.attr_i("count_include_pad", 0) == 1;
  const int64_t planes = xs[0] * xs[1];
  return make_fn_kernel([=](const KernelContext& k) {
    const float* x = k.input(0).data_as<float>();
    float* y = k.output(0).data_as<float>();
    const int nd = g.rank;
    const int64_t in_size = product(g.in), out_size = product(g.out), k_size = product(g.kernel);
    for (int64_t plane = 0; plane < planes; ++plane) {
      const float* xp = x + plane * in_size;
      SpatialIndex o{};
      int64_t o_lin = plane * out_size;
      do {
        double sum = 0;
        int64_t inside_count = 0;
        SpatialIndex kk{};
        do {
          const int64_t row = window_tap(o, kk, g, g.in, nd);
          if (row >= 0) {
            sum += xp[row];
            ++inside_count;
          }
        } while (next_index(kk, g.kernel, nd));
        const int64_t count = count_include_pad ? k_size : inside_count;
        y[o_lin++] = count > 0 ? static_cast<float>(sum / count) : 0.f;
      } while (next_index(o, g.out, nd));
    }
    return Status::ok();
  });
}

}  // namespace tessera::ref
