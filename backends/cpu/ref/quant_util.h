// Helpers of the quantization reference kernels (QuantizeLinear, DequantizeLinear,
// QLinearMatMul, QLinearConv, DynamicQuantizeLinear): saturating round-half-to-even
// conversion to an integer type, and reading a scale stored as float or float16.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "backends/cpu/ref/ref_kernels.h"
#include "tessera/half.h"

namespace tessera::ref {

/// Rounds `v` half to even (ONNX QuantizeLinear, numpy.rint) and saturates it to Q's range.
/// NaN maps to 0 (the result of a float NaN cast is undefined in C++).
template <typename Q>
Q saturate_round(float v) {
  if (std::isnan(v)) return Q(0);
  const float r = std::nearbyint(v);  // default rounding mode: to nearest, ties to even
  if (r <= static_cast<float>(std::numeric_limits<Q>::lowest())) return std::numeric_limits<Q>::lowest();
  if (r >= static_cast<float>(std::numeric_limits<Q>::max())) return std::numeric_limits<Q>::max();
  return static_cast<Q>(r);
}

/// Element `i` of a float32, float16 or bfloat16 tensor as a float.
inline float scale_at(const Tensor& t, int64_t i) {
  if (t.dtype() == DType::kFloat16) return half_to_float(t.data_as<uint16_t>()[i]);
  if (t.dtype() == DType::kBFloat16) return bfloat16_to_float(t.data_as<uint16_t>()[i]);
  return t.data_as<float>()[i];
}

/// Element `i` of an integer tensor (int4/uint4/int8/uint8/int16/uint16/int32/int64) as an
/// int64 (int4/uint4 are held one per byte).
inline int64_t int_at(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kInt8: case DType::kInt4: return t.data_as<int8_t>()[i];
    case DType::kUInt8: case DType::kUInt4: return t.data_as<uint8_t>()[i];
    case DType::kInt16: return t.data_as<int16_t>()[i];
    case DType::kUInt16: return t.data_as<uint16_t>()[i];
    case DType::kInt32: return t.data_as<int32_t>()[i];
    case DType::kInt64: return t.data_as<int64_t>()[i];
    default: return 0;
  }
}

/// Calls f(Q{}) for the quantized integer types int8, uint8, int16, uint16.
template <typename F>
Status dispatch_quant(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kInt8: return f(int8_t{});
    case DType::kUInt8: return f(uint8_t{});
    case DType::kInt16: return f(int16_t{});
    case DType::kUInt16: return f(uint16_t{});
    default: return unimplemented(std::string("quantized dtype ") + dtype_name(dtype) + " is not supported");
  }
}

}  // namespace tessera::ref
