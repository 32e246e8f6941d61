// EyeLike reference kernel (runtime/ops/eye_like.cc): y[i][j] = (j - i == k) ? 1 : 0.
#include "backends/cpu/ref/ref_util.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_EyeLike(const CompileContext& ctx) {
  const int64_t kd = ctx.node.attr_i("k", 0);
  return make_fn_kernel([kd](const KernelContext& kc) -> Status {
    Tensor& y = kc.output(0);
    const int64_t rows = y.dim(0), cols = y.dim(1);
    return dispatch_numeric(y.dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      T* p = y.data_as<T>();
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j) p[i * cols + j] = (kd > -(int64_t{1} << 50) && kd < (int64_t{1} << 50) && j - i == kd) ? T(1) : T(0);
      return Status::ok();
    });
  });
}

}  // namespace tessera::ref
