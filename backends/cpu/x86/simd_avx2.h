// Small helpers of the AVX2 kernels (SGEMM panel packing and epilogue, the depthwise conv's
// channel-lane tiles): an in-register 8 x 8 transpose and lane masks. Include only from
// files compiled with -mavx2 (the *_avx2.cc files).
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace tessera::cpu {

/// r[0..7] (8 rows of 8 floats) -> r[j] = column j: unpacklo/hi_ps pair the rows,
/// shuffle_ps makes 4 x 4 blocks within each 128-bit lane, permute2f128 swaps the lanes.
__attribute__((always_inline)) inline void transpose8_avx2(__m256 r[8]) {
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  r[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
  r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
  r[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
  r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
  r[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
  r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
  r[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
  r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

/// The mask of the first n lanes of 8 (n <= 0: none, n >= 8: all), for maskload/maskstore.
__attribute__((always_inline)) inline __m256i first_lanes_avx2(int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n < 0 ? 0 : n > 8 ? 8 : n)),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/// One ymm of 8 floats as a vector type for EpilogueSimd (sgemm_epilogue_simd.h) and the
/// NCHW16c half block (conv_nchwc_avx2.cc): zero, set1, unaligned load/store and the lane-
/// wise arithmetic; select_ge0(x, a, b) = x >= 0 ? a : b per lane (NaN x: b).
struct Vec8Avx2 {
  using T = __m256;
  static T zero() { return _mm256_setzero_ps(); }
  static T set1(float v) { return _mm256_set1_ps(v); }
  static T load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, T v) { _mm256_storeu_ps(p, v); }
  static T add(T a, T b) { return _mm256_add_ps(a, b); }
  static T mul(T a, T b) { return _mm256_mul_ps(a, b); }
  static T div(T a, T b) { return _mm256_div_ps(a, b); }
  static T fmadd(T a, T b, T c) { return _mm256_fmadd_ps(a, b, c); }
  static T max(T a, T b) { return _mm256_max_ps(a, b); }
  static T min(T a, T b) { return _mm256_min_ps(a, b); }
  static T select_ge0(T x, T if_ge0, T otherwise) {
    return _mm256_blendv_ps(otherwise, if_ge0, _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GE_OQ));
  }
};

}  // namespace tessera::cpu
