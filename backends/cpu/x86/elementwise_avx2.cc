// AVX2+FMA core of the float32 elementwise kernels (elementwise_x86.cc): the vector type the
// ISA-neutral templates of backends/cpu/elementwise_simd.h are instantiated with. 8 floats
// per ymm register; tails use vmaskmovps (no read or write past the end).
// Compiled with -mavx2 -mfma (this file only); called only when the CPU has AVX2 and FMA.
#include <immintrin.h>

#include "backends/cpu/elementwise_simd.h"
#include "backends/cpu/x86/elementwise_x86.h"

namespace tessera::cpu {

namespace {

struct VecAvx2 {
  using F = __m256;
  using M = __m256;  // all-ones lanes
  static constexpr int kWidth = 8;

  static __m256i first(int n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static F load(const float* p) { return _mm256_loadu_ps(p); }
  static F load_partial(const float* p, int n) { return _mm256_maskload_ps(p, first(n)); }
  static void store(float* p, F v) { _mm256_storeu_ps(p, v); }
  static void store_partial(float* p, F v, int n) { _mm256_maskstore_ps(p, first(n), v); }
  static F set1(float f) { return _mm256_set1_ps(f); }
  static F add(F a, F b) { return _mm256_add_ps(a, b); }
  static F sub(F a, F b) { return _mm256_sub_ps(a, b); }
  static F mul(F a, F b) { return _mm256_mul_ps(a, b); }
  static F div(F a, F b) { return _mm256_div_ps(a, b); }
  static F fmadd(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
  static F sqrt(F a) { return _mm256_sqrt_ps(a); }
  static F max(F a, F b) { return _mm256_max_ps(a, b); }  // a > b ? a : b
  static F min(F a, F b) { return _mm256_min_ps(a, b); }  // a < b ? a : b
  static F round(F a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static M lt(F a, F b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
  static M ge(F a, F b) { return _mm256_cmp_ps(a, b, _CMP_GE_OQ); }
  static M eq(F a, F b) { return _mm256_cmp_ps(a, b, _CMP_EQ_OQ); }
  static M unord(F a, F b) { return _mm256_cmp_ps(a, b, _CMP_UNORD_Q); }
  static F select(M m, F t, F f) { return _mm256_blendv_ps(f, t, m); }
  static F and_(F a, F b) { return _mm256_and_ps(a, b); }
  static F or_(F a, F b) { return _mm256_or_ps(a, b); }
  static F xor_(F a, F b) { return _mm256_xor_ps(a, b); }
  static F andnot_(F a, F b) { return _mm256_andnot_ps(a, b); }
  /// y * 2^n, n integral in [-150, 130]: two factors 2^(n/2) and 2^(n - n/2), each a normal float.
  static F scale_pow2(F y, F n) {
    const __m256i ni = _mm256_cvtps_epi32(n);
    const __m256i n1 = _mm256_srai_epi32(ni, 1), n2 = _mm256_sub_epi32(ni, n1);
    const __m256i bias = _mm256_set1_epi32(127);
    const F s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
    const F s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
    return _mm256_mul_ps(_mm256_mul_ps(y, s1), s2);
  }
};

}  // namespace

ElementwiseCore elementwise_core_avx2() { return {&simd::binary<VecAvx2>, &simd::unary<VecAvx2>}; }

}  // namespace tessera::cpu
