// DFT reference kernel (runtime/ops/dft.cc): for every index of the input other than `axis`
// and the last (real/imaginary) dim, the direct sum of dft_line.h along `axis`, in double.
#include <vector>

#include "backends/cpu/ref/dft_line.h"
#include "backends/cpu/ref/ref_kernels.h"
#include "runtime/ops/dft_params.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_DFT(const CompileContext& ctx) {
  std::optional<int64_t> length, axis;
  if (ctx.has_input(1)) {
    TSR_ASSIGN_OR_RETURN(std::vector<int64_t> v, ctx.constant_ints(1));
    length = v.at(0);
  }
  if (ctx.node.opset >= 20 && ctx.has_input(2)) {
    TSR_ASSIGN_OR_RETURN(std::vector<int64_t> v, ctx.constant_ints(2));
    axis = v.at(0);
  }
  const Shape xs = ctx.input(0).shape;
  TSR_ASSIGN_OR_RETURN(const DftParams p, dft_params(ctx.node, xs, length, axis));
  // View the input as [outer, n, inner, c] and the output as [outer, bins, inner, 2].
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < p.axis; ++d) outer *= xs[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(p.axis) + 1; d + 1 < xs.size(); ++d) inner *= xs[d];
  const int64_t n = xs[static_cast<size_t>(p.axis)], c = xs.back();
  return make_fn_kernel([=](const KernelContext& k) -> Status {
    return dispatch_float(k.input(0).dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      const T* x = k.input(0).data_as<T>();
      T* y = k.output(0).data_as<T>();
      std::vector<double> re(static_cast<size_t>(p.out_bins)), im(static_cast<size_t>(p.out_bins));
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
          auto in = [&](int64_t t, double& xr, double& xi) {
            const T* e = x + ((o * n + t) * inner + i) * c;
            xr = static_cast<double>(e[0]);
            xi = c == 2 ? static_cast<double>(e[1]) : 0.0;
          };
          dft_line(in, n, p.length, p.out_bins, p.inverse ? 1.0 : -1.0, p.inverse ? 1.0 / p.length : 1.0, re.data(),
                   im.data(), 1);
          for (int64_t b = 0; b < p.out_bins; ++b) {
            T* e = y + ((o * p.out_bins + b) * inner + i) * 2;
            e[0] = static_cast<T>(re[static_cast<size_t>(b)]);
            e[1] = static_cast<T>(im[static_cast<size_t>(b)]);
          }
        }
      }
      return Status::ok();
    });
  });
}

}  // namespace tessera::ref
