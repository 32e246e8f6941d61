// Small helpers of the AVX2 kernels (SGEMM panel packing and epilogue, the depthwise conv's
// channel-lane tiles, the elementwise ops): an in-register 8 x 8 transpose, lane masks and
// the 8-float vector type. Include only from
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

/// One ymm of 8 floats as the vector type of the AVX2 kernels that are written once for
/// several ISAs: the elementwise templates (elementwise_simd.h: F, M, kWidth and the lane-
/// wise operations; tails by vmaskmovps, no read or write past the end), EpilogueSimd
/// (sgemm_epilogue_simd.h: T, zero, select_ge0(x, a, b) = x >= 0 ? a : b per lane, NaN x:
/// b) and the NCHW16c half block (conv_nchwc_avx2.cc).
struct Vec8Avx2 {
  using T = __m256;
  using F = __m256;
  using M = __m256;  // all-ones lanes
  static constexpr int kWidth = 8;
  static T zero() { return _mm256_setzero_ps(); }
  static T set1(float v) { return _mm256_set1_ps(v); }
  static T load(const float* p) { return _mm256_loadu_ps(p); }
  static T load_partial(const float* p, int n) { return _mm256_maskload_ps(p, first_lanes_avx2(n)); }
  static void store(float* p, T v) { _mm256_storeu_ps(p, v); }
  static void store_partial(float* p, T v, int n) { _mm256_maskstore_ps(p, first_lanes_avx2(n), v); }
  static T add(T a, T b) { return _mm256_add_ps(a, b); }
  static T sub(T a, T b) { return _mm256_sub_ps(a, b); }
  static T mul(T a, T b) { return _mm256_mul_ps(a, b); }
  static T div(T a, T b) { return _mm256_div_ps(a, b); }
  static T fmadd(T a, T b, T c) { return _mm256_fmadd_ps(a, b, c); }
  static T sqrt(T a) { return _mm256_sqrt_ps(a); }
  static T max(T a, T b) { return _mm256_max_ps(a, b); }  // a > b ? a : b
  static T min(T a, T b) { return _mm256_min_ps(a, b); }  // a < b ? a : b
  static T round(T a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static M lt(T a, T b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
  static M ge(T a, T b) { return _mm256_cmp_ps(a, b, _CMP_GE_OQ); }
  static M eq(T a, T b) { return _mm256_cmp_ps(a, b, _CMP_EQ_OQ); }
  static M unord(T a, T b) { return _mm256_cmp_ps(a, b, _CMP_UNORD_Q); }
  static T select(M m, T t, T f) { return _mm256_blendv_ps(f, t, m); }
  static T select_ge0(T x, T if_ge0, T otherwise) { return select(ge(x, zero()), if_ge0, otherwise); }
  static T and_(T a, T b) { return _mm256_and_ps(a, b); }
  static T or_(T a, T b) { return _mm256_or_ps(a, b); }
  static T xor_(T a, T b) { return _mm256_xor_ps(a, b); }
  static T andnot_(T a, T b) { return _mm256_andnot_ps(a, b); }
  /// y * 2^n, n integral in [-150, 130]: two factors 2^(n/2) and 2^(n - n/2), each a normal float.
  static T scale_pow2(T y, T n) {
    const __m256i ni = _mm256_cvtps_epi32(n);
    const __m256i n1 = _mm256_srai_epi32(ni, 1), n2 = _mm256_sub_epi32(ni, n1);
    const __m256i bias = _mm256_set1_epi32(127);
    const T s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
    const T s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
    return _mm256_mul_ps(_mm256_mul_ps(y, s1), s2);
  }
};

}  // namespace tessera::cpu
