// Clip reference kernel (runtime/ops/clip.cc): y = min(max(x, lo), hi), lo/hi from the
// attributes (opset < 11) or the optional scalar inputs read at run time (opset >= 11);
// an absent bound does not clip. NaN inputs stay NaN.
#include <cmath>
#include <limits>
#include <type_traits>

#include "backends/cpu/ref/ref_kernels.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_Clip(const CompileContext& ctx) {
  const bool from_attrs = ctx.node.opset < 11;
  const double attr_lo = ctx.node.attr_f("min", -INFINITY);
  const double attr_hi = ctx.node.attr_f("max", INFINITY);
  return make_fn_kernel([=](const KernelContext& k) -> Status {
    const Tensor& x = k.input(0);
    Tensor& y = k.output(0);
    return dispatch_numeric(x.dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, bool>) {
        return unimplemented("Clip: bool is not supported");
      } else {
        T lo = std::numeric_limits<T>::lowest(), hi = std::numeric_limits<T>::max();
        if (from_attrs) {
          if constexpr (std::is_floating_point_v<T>) {
            lo = static_cast<T>(attr_lo);
            hi = static_cast<T>(attr_hi);
          }
        } else {
          if (k.has_input(1)) lo = k.input(1).data_as<T>()[0];
          if (k.has_input(2)) hi = k.input(2).data_as<T>()[0];
        }
        const T* px = x.data_as<T>();
        T* py = y.data_as<T>();
        for (int64_t i = 0; i < x.numel(); ++i) {
          T v = px[i];
          if (v < lo) v = lo;
          if (v > hi) v = hi;
          py[i] = v;
        }
        return Status::ok();
      }
    });
  });
}

}  // namespace tessera::ref
