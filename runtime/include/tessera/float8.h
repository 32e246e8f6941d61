// The ONNX 8-bit floating-point types (float8e4m3fn, float8e4m3fnuz, float8e5m2,
// float8e5m2fnuz; ONNX IR 9, opset 19) <-> float, bit-exact. Storage is one raw byte per
// element. Source: the ONNX "Float stored in 8 bits" note (docs/docs/Float8.md) and the
// Cast-19 operator spec; the formats come from Micikevicius et al., "FP8 Formats for Deep
// Learning" (2022) and Noune et al., "8-bit Numerical Formats for Deep Neural Networks" (2022).
//
//   format    exp bits  bias  mantissa  inf   NaN code(s)          max finite  -0
//   E4M3FN    4         7     3         no    S.1111.111           448         yes
//   E4M3FNUZ  4         8     3         no    1.0000.000 (0x80)    240         no
//   E5M2      5         15    2         yes   S.11111.{01,10,11}   57344       yes
//   E5M2FNUZ  5         16    2         no    1.00000.00 (0x80)    57344       no
//
// float -> float8 rounds to nearest, ties to even. Values beyond the largest finite value,
// and infinities, become +-max when `saturate` is true (the Cast default), else inf for E5M2
// and NaN for the others (Cast-19's conversion table). NaN stays NaN.
#pragma once

#include <cmath>
#include <cstdint>

#include "tessera/dtype.h"

namespace tessera {

/// One of the four float8 formats, described by its bit layout.
struct Float8Format {
  int mantissa_bits;  // 3 (E4M3) or 2 (E5M2)
  int bias;           // exponent bias
  bool uz;            // "unsigned zero": no -0, NaN is 0x80, no inf
  bool has_inf;       // E5M2 only
  float max_finite;   // largest finite magnitude
};

inline constexpr Float8Format kFloat8E4M3FN{3, 7, false, false, 448.0f};
inline constexpr Float8Format kFloat8E4M3FNUZ{3, 8, true, false, 240.0f};
inline constexpr Float8Format kFloat8E5M2{2, 15, false, true, 57344.0f};
inline constexpr Float8Format kFloat8E5M2FNUZ{2, 16, true, false, 57344.0f};

/// The format of a float8 dtype; nullptr for other dtypes.
inline const Float8Format* float8_format(DType t) {
  switch (t) {
    case DType::kFloat8E4M3FN: return &kFloat8E4M3FN;
    case DType::kFloat8E4M3FNUZ: return &kFloat8E4M3FNUZ;
    case DType::kFloat8E5M2: return &kFloat8E5M2;
    case DType::kFloat8E5M2FNUZ: return &kFloat8E5M2FNUZ;
    default: return nullptr;
  }
}

/// float8 bits in format `f` -> float (exact: every float8 value is a float).
inline float float8_to_float(uint8_t b, const Float8Format& f) {
  const int exp_bits = 7 - f.mantissa_bits;
  const int exp_max = (1 << exp_bits) - 1;
  const bool neg = (b & 0x80u) != 0;
  const int e = (b >> f.mantissa_bits) & exp_max;
  const int m = b & ((1 << f.mantissa_bits) - 1);
  if (f.uz) {
    if (b == 0x80u) return NAN;
  } else if (f.has_inf) {
    if (e == exp_max) return m == 0 ? (neg ? -INFINITY : INFINITY) : NAN;
  } else if (e == exp_max && m == (1 << f.mantissa_bits) - 1) {
    return NAN;  // E4M3FN: S.1111.111
  }
  float v = e == 0 ? std::ldexp(static_cast<float>(m), 1 - f.bias - f.mantissa_bits)
                   : std::ldexp(static_cast<float>((1 << f.mantissa_bits) + m), e - f.bias - f.mantissa_bits);
  return neg ? -v : v;
}

/// float -> float8 bits in format `f`, round to nearest even; see the header for overflow.
inline uint8_t float_to_float8(float x, const Float8Format& f, bool saturate = true) {
  const uint8_t nan_code = f.uz ? 0x80u : 0x7Fu;
  const uint8_t sign = std::signbit(x) ? 0x80u : 0x00u;
  if (std::isnan(x)) return f.uz ? nan_code : static_cast<uint8_t>(sign | 0x7Fu);
  const int exp_bits = 7 - f.mantissa_bits;
  const uint8_t max_code = f.uz || f.has_inf ? static_cast<uint8_t>(((1 << exp_bits) - (f.has_inf ? 2 : 1)) << f.mantissa_bits |
                                                                     ((1 << f.mantissa_bits) - 1))
                                             : 0x7Eu;
  auto overflow = [&]() -> uint8_t {
    if (saturate) return static_cast<uint8_t>(sign | max_code);
    if (f.has_inf) return static_cast<uint8_t>(sign | (((1 << exp_bits) - 1) << f.mantissa_bits));
    return f.uz ? nan_code : static_cast<uint8_t>(sign | 0x7Fu);
  };
  const float a = std::fabs(x);
  if (std::isinf(a)) return overflow();
  const int emin = 1 - f.bias;  // exponent of the smallest normal
  int e2 = 0;
  std::frexp(a, &e2);            // a = m * 2^e2, m in [0.5, 1): a's exponent is e2 - 1
  const int e = a == 0.0f ? emin : (e2 - 1 < emin ? emin : e2 - 1);
  const int q_exp = e - f.mantissa_bits;  // the spacing of representable values near a
  // a / 2^q_exp is exact (a power-of-two scaling); nearbyint rounds half to even.
  const float q = std::nearbyint(std::ldexp(a, -q_exp));
  const float r = std::ldexp(q, q_exp);
  if (r > f.max_finite) return overflow();
  if (r == 0.0f) return f.uz ? 0x00u : sign;
  int re2 = 0;
  std::frexp(r, &re2);
  const int re = re2 - 1;
  uint8_t bits;
  if (re < emin) {  // subnormal: mantissa = r / 2^(emin - mantissa_bits)
    bits = static_cast<uint8_t>(std::ldexp(r, f.mantissa_bits - emin));
  } else {
    const int mant = static_cast<int>(std::ldexp(r, f.mantissa_bits - re)) - (1 << f.mantissa_bits);
    bits = static_cast<uint8_t>(((re + f.bias) << f.mantissa_bits) | mant);
  }
  return static_cast<uint8_t>(sign | bits);
}

}  // namespace tessera
