// Vector traits of 16 floats for the AVX-512 kernels that share EpilogueSimd (the SGEMM's
// micro-kernel, the NCHW16c convolution). Include only from files compiled with -mavx512f
// (the *_avx512.cc files).
#pragma once

#include <immintrin.h>

namespace tessera::cpu {

/// The operations EpilogueSimd (sgemm_epilogue_simd.h) needs, on one zmm register.
struct Vec16 {
  using T = __m512;
  static T zero() { return _mm512_setzero_ps(); }
  static T set1(float v) { return _mm512_set1_ps(v); }
  static T load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, T v) { _mm512_storeu_ps(p, v); }
  static T add(T a, T b) { return _mm512_add_ps(a, b); }
  static T mul(T a, T b) { return _mm512_mul_ps(a, b); }
  static T div(T a, T b) { return _mm512_div_ps(a, b); }
  static T fmadd(T a, T b, T c) { return _mm512_fmadd_ps(a, b, c); }
  static T max(T a, T b) { return _mm512_max_ps(a, b); }
  static T min(T a, T b) { return _mm512_min_ps(a, b); }
  static T select_ge0(T x, T if_ge0, T otherwise) {
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GE_OQ), otherwise, if_ge0);
  }
};

}  // namespace tessera::cpu
