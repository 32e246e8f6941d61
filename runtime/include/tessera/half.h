// IEEE 754 binary16 (float16) and bfloat16 <-> float conversions, bit-exact, rounding to
// nearest even (the rounding ONNX Cast and numpy use). Storage is the raw uint16_t bits.
#pragma once

#include <cstdint>
#include <cstring>

namespace tessera {

inline float bits_to_float(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
inline uint32_t float_to_bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

/// binary16 bits -> float (exact: every half is a float).
inline float half_to_float(uint16_t h) {
  const uint32_t sign = uint32_t{h & 0x8000u} << 16;
  const uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ffu;
  if (exp == 0x1f) return bits_to_float(sign | 0x7f800000u | (man << 13));  // inf, NaN
  if (exp != 0) return bits_to_float(sign | ((exp + 112) << 23) | (man << 13));
  if (man == 0) return bits_to_float(sign);                                   // +-0
  // Subnormal half: man * 2^-24.
  float f = static_cast<float>(man) * bits_to_float(0x33800000u);  // 2^-24
  return sign ? -f : f;
}

/// float -> binary16 bits, round to nearest even; overflow gives inf, NaN stays NaN.
inline uint16_t float_to_half(float f) {
  const uint32_t x = float_to_bits(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);  // NaN
  if (ax >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520: inf
  if (ax < 0x38800000u) {  // below the smallest normal half (2^-14): subnormal or zero
    // Scale to units of 2^-24 and round to nearest even by the FPU's default rounding.
    float scaled = bits_to_float(ax) * 16777216.0f;  // exact: 2^24 * value, < 2^10
    uint32_t m = static_cast<uint32_t>(scaled);
    float rem = scaled - static_cast<float>(m);
    if (rem > 0.5f || (rem == 0.5f && (m & 1u))) ++m;
    return static_cast<uint16_t>(sign | m);
  }
  // Normal: rebias the exponent and round the 13 dropped mantissa bits to nearest even.
  uint32_t r = ax - 0x38000000u;  // exponent - 112
  r += 0x0fffu + ((r >> 13) & 1u);
  return static_cast<uint16_t>(sign | (r >> 13));
}

/// bfloat16 bits -> float (exact).
inline float bfloat16_to_float(uint16_t b) { return bits_to_float(uint32_t{b} << 16); }

/// float -> bfloat16 bits, round to nearest even; NaN stays NaN.
inline uint16_t float_to_bfloat16(float f) {
  uint32_t x = float_to_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

}  // namespace tessera
