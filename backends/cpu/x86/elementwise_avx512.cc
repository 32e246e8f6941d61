// AVX-512F core of the float32 elementwise kernels (elementwise_x86.cc): the vector type the
// ISA-neutral templates of backends/cpu/elementwise_simd.h are instantiated with. 16 floats
// per zmm register; tails use masked loads and stores (no read or write past the end).
// Compiled with -mavx512f -mfma (this file only); called only when the CPU has AVX-512F.
// GCC 12 warns falsely from inside avx512fintrin.h (-Wuninitialized on __Y, the
// _mm512_undefined_ps() pass-through operand).
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include "backends/cpu/elementwise_simd.h"
#include "backends/cpu/x86/elementwise_x86.h"

namespace tessera::cpu {

namespace {

struct VecAvx512 {
  using F = __m512;
  using M = __mmask16;
  static constexpr int kWidth = 16;

  static __mmask16 first(int n) { return static_cast<__mmask16>((1u << n) - 1u); }
  static F load(const float* p) { return _mm512_loadu_ps(p); }
  static F load_partial(const float* p, int n) { return _mm512_maskz_loadu_ps(first(n), p); }
  static void store(float* p, F v) { _mm512_storeu_ps(p, v); }
  static void store_partial(float* p, F v, int n) { _mm512_mask_storeu_ps(p, first(n), v); }
  static F set1(float f) { return _mm512_set1_ps(f); }
  static F add(F a, F b) { return _mm512_add_ps(a, b); }
  static F sub(F a, F b) { return _mm512_sub_ps(a, b); }
  static F mul(F a, F b) { return _mm512_mul_ps(a, b); }
  static F div(F a, F b) { return _mm512_div_ps(a, b); }
  static F fmadd(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
  static F sqrt(F a) { return _mm512_sqrt_ps(a); }
  static F max(F a, F b) { return _mm512_max_ps(a, b); }  // a > b ? a : b
  static F min(F a, F b) { return _mm512_min_ps(a, b); }  // a < b ? a : b
  static F round(F a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static M lt(F a, F b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
  static M ge(F a, F b) { return _mm512_cmp_ps_mask(a, b, _CMP_GE_OQ); }
  static M eq(F a, F b) { return _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ); }
  static M unord(F a, F b) { return _mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q); }
  static F select(M m, F t, F f) { return _mm512_mask_blend_ps(m, f, t); }
  // AVX-512F has the bit ops on integer vectors only (the _ps forms are AVX-512DQ).
  static F and_(F a, F b) { return _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(a), _mm512_castps_si512(b))); }
  static F or_(F a, F b) { return _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(a), _mm512_castps_si512(b))); }
  static F xor_(F a, F b) { return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(a), _mm512_castps_si512(b))); }
  static F andnot_(F a, F b) { return _mm512_castsi512_ps(_mm512_andnot_si512(_mm512_castps_si512(a), _mm512_castps_si512(b))); }
  /// y * 2^n, n integral in [-150, 130]: two factors 2^(n/2) and 2^(n - n/2), each a normal float.
  static F scale_pow2(F y, F n) {
    const __m512i ni = _mm512_cvtps_epi32(n);
    const __m512i n1 = _mm512_srai_epi32(ni, 1), n2 = _mm512_sub_epi32(ni, n1);
    const __m512i bias = _mm512_set1_epi32(127);
    const F s1 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n1, bias), 23));
    const F s2 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n2, bias), 23));
    return _mm512_mul_ps(_mm512_mul_ps(y, s1), s2);
  }
};

}  // namespace

ElementwiseCore elementwise_core_avx512() { return {&simd::binary<VecAvx512>, &simd::unary<VecAvx512>}; }

}  // namespace tessera::cpu
