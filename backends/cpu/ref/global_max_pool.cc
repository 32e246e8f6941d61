// GlobalMaxPool reference kernel (ONNX GlobalMaxPool-1): Y[n, c] = max_p X[n, c, p].
#include <limits>

#include "backends/cpu/ref/ref_kernels.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_GlobalMaxPool(const CompileContext& ctx) {
  const Shape& xs = ctx.input(0).shape;
  const int64_t planes = xs[0] * xs[1];
  int64_t size = 1;
  for (size_t i = 2; i < xs.size(); ++i) size *= xs[i];
  const DType dtype = ctx.input(0).dtype;
  return make_fn_kernel([=](const KernelContext& k) {
    return dispatch_numeric(dtype, [&](auto tag) -> Status {
      using T = decltype(tag);
      const T* x = k.input(0).data_as<T>();
      T* y = k.output(0).data_as<T>();
      for (int64_t p = 0; p < planes; ++p) {
        T best = std::numeric_limits<T>::lowest();
        for (int64_t i = 0; i < size; ++i) best = x[p * size + i] > best ? x[p * size + i] : best;
        y[p] = best;
      }
      return Status::ok();
    });
  });
}

}  // namespace tessera::ref
