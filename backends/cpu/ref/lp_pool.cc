// LpPool reference kernel (ONNX LpPool-2/11/18):
//   Y[n, c, o] = (sum_{k : pos = o*stride - pad_begin + k*dilation inside X} |X[n, c, pos]|^p)^(1/p)
// accumulated in double.
#include <cmath>

#include "backends/cpu/ref/nd_index.h"
#include "backends/cpu/ref/ref_kernels.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_LpPool(const CompileContext& ctx) {
  const Shape& xs = ctx.input(0).shape;
  const bool ceil_mode = ctx.node.opset >= 18 && ctx.node.attr_i("ceil_mode", 0) == 1;
  TSR_ASSIGN_OR_RETURN(WindowGeometry g, window_geometry(ctx.node, xs, {}, ceil_mode));
  const double p = static_cast<double>(ctx.node.attr_i("p", 2));
  const int64_t planes = xs[0] * xs[1];
  const DType dtype = ctx.input(0).dtype;
  return make_fn_kernel([=](const KernelContext& k) {
    auto pool = [&](auto tag) {
      using T = decltype(tag);
      const T* x = k.input(0).data_as<T>();
      T* y = k.output(0).data_as<T>();
      const int nd = g.rank;
      const int64_t in_size = product(g.in), out_size = product(g.out);
      for (int64_t plane = 0; plane < planes; ++plane) {
        const T* xp = x + plane * in_size;
        SpatialIndex o{};
        int64_t o_lin = plane * out_size;
        do {
          double sum = 0;
          SpatialIndex kk{};
          do {
            int64_t pos = 0;
            bool inside = true;
            for (int d = 0; d < nd; ++d) {
              const int64_t q = o[d] * g.strides[d] - g.pads_begin[d] + kk[d] * g.dilations[d];
              if (q < 0 || q >= g.in[d]) { inside = false; break; }
              pos = pos * g.in[d] + q;
            }
            if (inside) {
              const double a = std::abs(static_cast<double>(xp[pos]));
              sum += p == 2.0 ? a * a : p == 1.0 ? a : std::pow(a, p);
            }
          } while (next_index(kk, g.kernel, nd));
          y[o_lin++] = static_cast<T>(p == 2.0 ? std::sqrt(sum) : p == 1.0 ? sum : std::pow(sum, 1.0 / p));
        } while (next_index(o, g.out, nd));
      }
    };
    if (dtype == DType::kFloat64) pool(double{});
    else pool(float{});
    return Status::ok();
  });
}

}  // namespace tessera::ref
