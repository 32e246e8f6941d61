// Hardmax reference kernel (runtime/ops/hardmax.cc): over the [outer, axis_len, inner] view,
// y[o, j, i] = 1 if j is the first index of the maximum of x[o, :, i], else 0. A NaN is
// never the maximum unless every value is NaN (then the first index is chosen).
#include "backends/cpu/ref/ref_util.h"
#include "runtime/ops/softmax_layout.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_Hardmax(const CompileContext& ctx) {
  TSR_ASSIGN_OR_RETURN(SoftmaxLayout l, softmax_layout(ctx.node, ctx.input(0).shape));
  return make_fn_kernel([l](const KernelContext& k) -> Status {
    const Tensor& x = k.input(0);
    Tensor& y = k.output(0);
    auto run = [&](auto tag) {
      using T = decltype(tag);
      const T* px = x.data_as<T>();
      T* py = y.data_as<T>();
      for (int64_t o = 0; o < l.outer; ++o)
        for (int64_t i = 0; i < l.inner; ++i) {
          const int64_t base = o * l.axis_len * l.inner + i;
          int64_t best = 0;
          for (int64_t j = 1; j < l.axis_len; ++j)
            if (px[base + j * l.inner] > px[base + best * l.inner] || (px[base + best * l.inner] != px[base + best * l.inner] && px[base + j * l.inner] == px[base + j * l.inner]))
              best = j;
          for (int64_t j = 0; j < l.axis_len; ++j) py[base + j * l.inner] = j == best ? T(1) : T(0);
        }
    };
    if (x.dtype() == DType::kFloat32) run(float{});
    else if (x.dtype() == DType::kFloat64) run(double{});
    else return unimplemented(std::string("Hardmax: dtype ") + dtype_name(x.dtype()) + " is not supported");
    return Status::ok();
  });
}

}  // namespace tessera::ref
