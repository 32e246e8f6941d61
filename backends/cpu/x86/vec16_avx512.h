// Vector traits of 16 floats for the AVX-512 kernels written once for several ISAs (the
// elementwise ops, the SGEMM's epilogue, the NCHW16c convolution). Include only from files compiled with -mavx512f
// (the *_avx512.cc files).
#pragma once

#include <immintrin.h>

namespace tessera::cpu {

/// One zmm of 16 floats as the vector type of the AVX-512 kernels written once for several
/// ISAs: the elementwise templates (elementwise_simd.h: F, M (a lane mask), kWidth and the
/// lane-wise operations; tails by masked loads and stores, no read or write past the end),
/// EpilogueSimd (sgemm_epilogue_simd.h: T, zero, select_ge0(x, a, b) = x >= 0 ? a : b per
/// lane, NaN x: b) and the NCHW16c convolution (conv_nchwc_avx512.cc).
struct Vec16 {
  using T = __m512;
  using F = __m512;
  using M = __mmask16;
  static constexpr int kWidth = 16;
  static M first(int n) { return static_cast<M>((1u << n) - 1u); }
  static T zero() { return _mm512_setzero_ps(); }
  static T set1(float v) { return _mm512_set1_ps(v); }
  static T load(const float* p) { return _mm512_loadu_ps(p); }
  static T load_partial(const float* p, int n) { return _mm512_maskz_loadu_ps(first(n), p); }
  static void store(float* p, T v) { _mm512_storeu_ps(p, v); }
  static void store_partial(float* p, T v, int n) { _mm512_mask_storeu_ps(p, first(n), v); }
  static T add(T a, T b) { return _mm512_add_ps(a, b); }
  static T sub(T a, T b) { return _mm512_sub_ps(a, b); }
  static T mul(T a, T b) { return _mm512_mul_ps(a, b); }
  static T div(T a, T b) { return _mm512_div_ps(a, b); }
  static T fmadd(T a, T b, T c) { return _mm512_fmadd_ps(a, b, c); }
  static T sqrt(T a) { return _mm512_sqrt_ps(a); }
  static T max(T a, T b) { return _mm512_max_ps(a, b); }  // a > b ? a : b
  static T min(T a, T b) { return _mm512_min_ps(a, b); }  // a < b ? a : b
  static T round(T a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static M lt(T a, T b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
  static M ge(T a, T b) { return _mm512_cmp_ps_mask(a, b, _CMP_GE_OQ); }
  static M eq(T a, T b) { return _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ); }
  static M unord(T a, T b) { return _mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q); }
  static T select(M m, T t, T f) { return _mm512_mask_blend_ps(m, f, t); }
  static T select_ge0(T x, T if_ge0, T otherwise) { return select(ge(x, zero()), if_ge0, otherwise); }
  // AVX-512F has the bit ops on integer vectors only (the _ps forms are AVX-512DQ).
  static T and_(T a, T b) { return _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(a), _mm512_castps_si512(b))); }
  static T or_(T a, T b) { return _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(a), _mm512_castps_si512(b))); }
  static T xor_(T a, T b) { return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(a), _mm512_castps_si512(b))); }
  static T andnot_(T a, T b) {
    return _mm512_castsi512_ps(_mm512_andnot_si512(_mm512_castps_si512(a), _mm512_castps_si512(b)));
  }
  /// y * 2^n, n integral in [-150, 130]: two factors 2^(n/2) and 2^(n - n/2), each a normal float.
  static T scale_pow2(T y, T n) {
    const __m512i ni = _mm512_cvtps_epi32(n);
    const __m512i n1 = _mm512_srai_epi32(ni, 1), n2 = _mm512_sub_epi32(ni, n1);
    const __m512i bias = _mm512_set1_epi32(127);
    const T s1 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n1, bias), 23));
    const T s2 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n2, bias), 23));
    return _mm512_mul_ps(_mm512_mul_ps(y, s1), s2);
  }
};

}  // namespace tessera::cpu
