// Cast reference kernel (runtime/ops/cast.cc): y[i] = convert<To>(x[i]).
//   to bool: x != 0.  float -> int: truncate, NaN -> 0, saturate out of range.
//   int -> narrower int: two's-complement wrap.  double -> float: round to nearest.
//   float16 / bfloat16 / float8: through float, round to nearest even (tessera/half.h,
//   tessera/float8.h; float8 overflow per the `saturate` attribute of Cast-19).
//   to int4 / uint4: clip to [-8, 7] / [0, 15], then round half to even (Cast-21).
//   from int4 / uint4: the value held in its int8 / uint8 byte.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "backends/cpu/ref/ref_kernels.h"
#include "tessera/float8.h"
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

/// The dtype whose C++ storage type holds `d`'s elements for dispatch_numeric: int4 lives
/// in an int8, uint4 in a uint8.
DType storage_dtype(DType d) {
  if (d == DType::kInt4) return DType::kInt8;
  if (d == DType::kUInt4) return DType::kUInt8;
  return d;
}

/// Dtypes converted element by element through float (or, for int4 targets, clipped and
/// rounded) rather than by a direct C++ conversion.
bool via_float(DType d) {
  return d == DType::kFloat16 || d == DType::kBFloat16 || dtype_is_float8(d);
}
}  // namespace

Result<std::unique_ptr<Kernel>> make_Cast(const CompileContext& ctx) {
  const bool saturate = ctx.node.opset < 19 || ctx.node.attr_i("saturate", 1) != 0;
  return make_fn_kernel([saturate](const KernelContext& k) -> Status {
    const Tensor& x = k.input(0);
    Tensor& y = k.output(0);
    const DType xd = x.dtype(), yd = y.dtype();
    if (via_float(xd) || via_float(yd) || dtype_is_int4(yd)) {
      // One element at a time through float: f = float(x[i]); y[i] = convert(f).
      const Float8Format* f8_in = float8_format(xd);
      const Float8Format* f8_out = float8_format(yd);
      auto load = [&](int64_t i, auto from_tag) -> float {
        using From = decltype(from_tag);
        if (xd == DType::kFloat16) return half_to_float(x.data_as<uint16_t>()[i]);
        if (xd == DType::kBFloat16) return bfloat16_to_float(x.data_as<uint16_t>()[i]);
        if (f8_in) return float8_to_float(x.data_as<uint8_t>()[i], *f8_in);
        return convert<float>(x.data_as<From>()[i]);
      };
      auto store = [&](int64_t i, float f, auto to_tag) {
        using To = decltype(to_tag);
        if (yd == DType::kFloat16) {
          y.data_as<uint16_t>()[i] = float_to_half(f);
        } else if (yd == DType::kBFloat16) {
          y.data_as<uint16_t>()[i] = float_to_bfloat16(f);
        } else if (f8_out) {
          y.data_as<uint8_t>()[i] = float_to_float8(f, *f8_out, saturate);
        } else if (dtype_is_int4(yd)) {
          const float lo = yd == DType::kInt4 ? -8.f : 0.f, hi = yd == DType::kInt4 ? 7.f : 15.f;
          const float c = std::isnan(f) ? 0.f : std::nearbyint(std::clamp(f, lo, hi));
          y.data_as<To>()[i] = static_cast<To>(c);
        } else {
          y.data_as<To>()[i] = convert<To>(f);
        }
      };
      // Dispatch over the storage types; a side converted through float takes the float tag
      // (unused). A double goes through float first (double rounding; numpy rounds double ->
      // half directly).
      DType from_dt = via_float(xd) ? DType::kFloat32 : storage_dtype(xd);
      DType to_dt = via_float(yd) ? DType::kFloat32 : storage_dtype(yd);
      return dispatch_numeric(from_dt, [&](auto from_tag) -> Status {
        return dispatch_numeric(to_dt, [&](auto to_tag) -> Status {
          for (int64_t i = 0; i < x.numel(); ++i) store(i, load(i, from_tag), to_tag);
          return Status::ok();
        });
      });
    }
    return dispatch_numeric(storage_dtype(xd), [&](auto from_tag) -> Status {
      using From = decltype(from_tag);
      return dispatch_numeric(yd, [&](auto to_tag) -> Status {
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
