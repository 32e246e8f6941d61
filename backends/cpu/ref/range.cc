// Range reference kernel (runtime/ops/range.cc): y[0] = start, y[i] = y[i-1] + delta, as the
// spec's pseudo-code accumulates; the length was fixed by inference.
#include <type_traits>

#include "backends/cpu/ref/ref_util.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_Range(const CompileContext&) {
  return make_fn_kernel([](const KernelContext& k) -> Status {
    Tensor& y = k.output(0);
    return dispatch_numeric(y.dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, bool>) {
        return unimplemented("Range: bool is not supported");
      } else {
        T v = k.input(0).data_as<T>()[0];
        const T delta = k.input(2).data_as<T>()[0];
        T* py = y.data_as<T>();
        for (int64_t i = 0; i < y.numel(); ++i) {
          py[i] = v;
          if (i + 1 < y.numel()) v = static_cast<T>(v + delta);  // no step past the last element
        }
        return Status::ok();
      }
    });
  });
}

}  // namespace tessera::ref
