// Cast reference kernel (runtime/ops/cast.cc): y[i] = convert<To>(x[i]).
//   to bool: x != 0.  float -> int: truncate, NaN -> 0, saturate out of range.
//   int -> narrower int: two's-complement wrap.  double -> float: round to nearest.
//   float16 / bfloat16: through float, round to nearest even (tessera/half.h).
#include <cmath>
#include <limits>
#include <type_traits>

#include "backends/cpu/ref/ref_kernels.h"
#include "tessera/half.h"

namespace tessera::ref {

namespace {
template <typename To, typename From>
To convert(From v) {
  if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    if (std::isnan(v)) return To(0);
    if (v <= static_cast<From>(std::numeric_limits<To>::lowest())) return std::numeric_limits<To>::lowest();
    // max() may round up to 2^bits when converted; values at or above it saturate.
    if (v >= static_cast<From>(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
    return static_cast<To>(v);
  } else if constexpr (std::is_same_v<From, double> && std::is_same_v<To, float>) {
    if (std::isfinite(v) && std::fabs(v) > static_cast<double>(std::numeric_limits<float>::max()))
      return v > 0 ? std::numeric_limits<float>::infinity() : -std::numeric_limits<float>::infinity();
    return static_cast<float>(v);
  } else {
    return static_cast<To>(v);
  }
}
}  // namespace

Result<std::unique_ptr<Kernel>> make_Cast(const CompileContext&) {
  return make_fn_kernel([](const KernelContext& k) -> Status {
    const Tensor& x = k.input(0);
    Tensor& y = k.output(0);
    const bool half_in = x.dtype() == DType::kFloat16 || x.dtype() == DType::kBFloat16;
    const bool half_out = y.dtype() == DType::kFloat16 || y.dtype() == DType::kBFloat16;
    if (half_in || half_out) {
      // One element at a time through float: f = float(x[i]); y[i] = convert(f).
      const uint16_t* hx = x.data_as<uint16_t>();
      uint16_t* hy = y.data_as<uint16_t>();
      auto load = [&](int64_t i, auto from_tag) -> float {
        using From = decltype(from_tag);
        if (x.dtype() == DType::kFloat16) return half_to_float(hx[i]);
        if (x.dtype() == DType::kBFloat16) return bfloat16_to_float(hx[i]);
        return convert<float>(x.data_as<From>()[i]);
      };
      auto store = [&](int64_t i, float f, auto to_tag) {
        using To = decltype(to_tag);
        if (y.dtype() == DType::kFloat16) hy[i] = float_to_half(f);
        else if (y.dtype() == DType::kBFloat16) hy[i] = float_to_bfloat16(f);
        else y.data_as<To>()[i] = convert<To>(f);
      };
      // Dispatch over the non-half side (a half side takes the float tag, unused). A double
      // goes through float first (double rounding; numpy rounds double -> half directly).
      DType from_dt = half_in ? DType::kFloat32 : x.dtype();
      DType to_dt = half_out ? DType::kFloat32 : y.dtype();
      return dispatch_numeric(from_dt, [&](auto from_tag) -> Status {
        return dispatch_numeric(to_dt, [&](auto to_tag) -> Status {
          for (int64_t i = 0; i < x.numel(); ++i) store(i, load(i, from_tag), to_tag);
          return Status::ok();
        });
      });
    }
    return dispatch_numeric(x.dtype(), [&](auto from_tag) -> Status {
      using From = decltype(from_tag);
      return dispatch_numeric(y.dtype(), [&](auto to_tag) -> Status {
        using To = decltype(to_tag);
        const From* px = x.data_as<From>();
        To* py = y.data_as<To>();
        for (int64_t i = 0; i < x.numel(); ++i) py[i] = convert<To>(px[i]);
        return Status::ok();
      });
    });
  });
}

}  // namespace tessera::ref
