// A thin vector-of-floats type for the ISA-templated x86 kernels (pool, Softmax,
// LayerNormalization, reductions, Transpose). Include it only from a file compiled with its
// own -m flags (<op>_avx512.cc: -mavx512f -mfma, <op>_avx2.cc: -mavx2 -mfma), after
// defining TSR_X86_ISA to that file's namespace name (avx512 or avx2): every definition
// lands in tessera::x86::TSR_X86_ISA, so the two compilations never share a symbol (an
// inline function compiled with AVX-512 flags must not be picked by the linker for a
// caller on an AVX2-only CPU).
//
//   Vec::T v = Vec::load(p);  Vec::kW lanes (16 on AVX-512, 8 on AVX2)
//   load_n / store_n touch only the first n < kW lanes (the row tails), no out-of-bounds access.
//
// On aarch64 the same templates are built once more (backends/cpu/arm/<op>_neon.cc, with
// TSR_X86_ISA neon) on a NEON Vec of 4 floats whose max and min keep the x86 semantics.
#pragma once

#if defined(__aarch64__)
#include <arm_neon.h>

#include <cstring>
#else
#include <immintrin.h>
#endif

#include <cstdint>

#ifndef TSR_X86_ISA
#error "define TSR_X86_ISA (avx512, avx2 or neon) before including simd_x86.h"
#endif

namespace tessera::x86::TSR_X86_ISA {

#if defined(__AVX512F__)
struct Vec {
  using T = __m512;
  static constexpr int kW = 16;
  static __mmask16 mask(int64_t n) { return static_cast<__mmask16>((1u << n) - 1u); }
  static T zero() { return _mm512_setzero_ps(); }
  static T set1(float v) { return _mm512_set1_ps(v); }
  static T load(const float* p) { return _mm512_loadu_ps(p); }
  // Lanes >= n hold `fill`; memory past p[n - 1] is not read.
  static T load_n(const float* p, int64_t n, float fill) { return _mm512_mask_loadu_ps(set1(fill), mask(n), p); }
  static void store(float* p, T v) { _mm512_storeu_ps(p, v); }
  static void store_n(float* p, T v, int64_t n) { _mm512_mask_storeu_ps(p, mask(n), v); }
  static T add(T a, T b) { return _mm512_add_ps(a, b); }
  static T sub(T a, T b) { return _mm512_sub_ps(a, b); }
  static T mul(T a, T b) { return _mm512_mul_ps(a, b); }
  static T div(T a, T b) { return _mm512_div_ps(a, b); }
  // max(a, b) = a > b ? a : b (b when either is NaN), as maxps.
  static T max(T a, T b) { return _mm512_max_ps(a, b); }
  static T min(T a, T b) { return _mm512_min_ps(a, b); }
  static T fmadd(T a, T b, T c) { return _mm512_fmadd_ps(a, b, c); }  // a * b + c, one rounding
  static T round(T a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  // 2^n for integral n in [-126, 127] held as floats: the exponent field n + 127.
  static T pow2i(T n) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23));
  }
  // a < b ? 0 : x (lane-wise; false for NaN, so NaN lanes keep x).
  static T zero_if_less(T a, T b, T x) { return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(a, b, _CMP_NLT_UQ), x); }
  // The even lanes of the 2*kW floats a:b: a[0], a[2], ..., a[14], b[0], ..., b[14].
  static T even(T a, T b) {
    return _mm512_permutex2var_ps(a, _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30), b);
  }
  // base[idx[0]], ..., base[idx[kW - 1]]
  static T gather(const float* base, const int32_t* idx) {
    return _mm512_i32gather_ps(_mm512_loadu_si512(idx), base, 4);
  }
  static float reduce_add(T v) { return _mm512_reduce_add_ps(v); }
  static float reduce_max(T v) { return _mm512_reduce_max_ps(v); }
};
#elif defined(__AVX2__) && defined(__FMA__)
struct Vec {
  using T = __m256;
  static constexpr int kW = 8;
  static __m256i mask(int64_t n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static T zero() { return _mm256_setzero_ps(); }
  static T set1(float v) { return _mm256_set1_ps(v); }
  static T load(const float* p) { return _mm256_loadu_ps(p); }
  static T load_n(const float* p, int64_t n, float fill) {
    const __m256i m = mask(n);
    return _mm256_blendv_ps(set1(fill), _mm256_maskload_ps(p, m), _mm256_castsi256_ps(m));
  }
  static void store(float* p, T v) { _mm256_storeu_ps(p, v); }
  static void store_n(float* p, T v, int64_t n) { _mm256_maskstore_ps(p, mask(n), v); }
  static T add(T a, T b) { return _mm256_add_ps(a, b); }
  static T sub(T a, T b) { return _mm256_sub_ps(a, b); }
  static T mul(T a, T b) { return _mm256_mul_ps(a, b); }
  static T div(T a, T b) { return _mm256_div_ps(a, b); }
  static T max(T a, T b) { return _mm256_max_ps(a, b); }
  static T min(T a, T b) { return _mm256_min_ps(a, b); }
  static T fmadd(T a, T b, T c) { return _mm256_fmadd_ps(a, b, c); }
  static T round(T a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static T pow2i(T n) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23));
  }
  static T zero_if_less(T a, T b, T x) { return _mm256_and_ps(_mm256_cmp_ps(a, b, _CMP_NLT_UQ), x); }
  static T even(T a, T b) {
    // shuffle: a0 a2 b0 b2 | a4 a6 b4 b6; the 64-bit lane order 0 2 1 3 gives a0 a2 a4 a6 b0 b2 b4 b6.
    const __m256 s = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(s), _MM_SHUFFLE(3, 1, 2, 0)));
  }
  static T gather(const float* base, const int32_t* idx) {
    return _mm256_i32gather_ps(base, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(idx)), 4);
  }
  static float reduce_add(T v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
  static float reduce_max(T v) {
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
};
#elif defined(__aarch64__)
struct Vec {
  using T = float32x4_t;
  static constexpr int kW = 4;
  static T zero() { return vdupq_n_f32(0.f); }
  static T set1(float v) { return vdupq_n_f32(v); }
  static T load(const float* p) { return vld1q_f32(p); }
  // Lanes >= n hold `fill`; memory past p[n - 1] is not read.
  static T load_n(const float* p, int64_t n, float fill) {
    float t[4] = {fill, fill, fill, fill};
    std::memcpy(t, p, static_cast<size_t>(n) * sizeof(float));
    return vld1q_f32(t);
  }
  static void store(float* p, T v) { vst1q_f32(p, v); }
  static void store_n(float* p, T v, int64_t n) {
    float t[4];
    vst1q_f32(t, v);
    std::memcpy(p, t, static_cast<size_t>(n) * sizeof(float));
  }
  static T add(T a, T b) { return vaddq_f32(a, b); }
  static T sub(T a, T b) { return vsubq_f32(a, b); }
  static T mul(T a, T b) { return vmulq_f32(a, b); }
  static T div(T a, T b) { return vdivq_f32(a, b); }
  // a > b ? a : b and a < b ? a : b (b when either is NaN), as x86's maxps and minps.
  static T max(T a, T b) { return vbslq_f32(vcgtq_f32(a, b), a, b); }
  static T min(T a, T b) { return vbslq_f32(vcltq_f32(a, b), a, b); }
  static T fmadd(T a, T b, T c) { return vfmaq_f32(c, a, b); }  // a * b + c, one rounding
  static T round(T a) { return vrndnq_f32(a); }                   // to nearest, ties to even
  static T pow2i(T n) { return vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(vcvtnq_s32_f32(n), vdupq_n_s32(127)), 23)); }
  // a < b ? 0 : x (false for NaN, so NaN lanes keep x).
  static T zero_if_less(T a, T b, T x) { return vbslq_f32(vcltq_f32(a, b), vdupq_n_f32(0.f), x); }
  static T even(T a, T b) { return vuzp1q_f32(a, b); }  // a0 a2 b0 b2
  static T gather(const float* base, const int32_t* idx) {
    const float t[4] = {base[idx[0]], base[idx[1]], base[idx[2]], base[idx[3]]};
    return vld1q_f32(t);
  }
  static float reduce_add(T v) { return vaddvq_f32(v); }
  // The x86 reduction's pairing: max(max(v0, v2), max(v1, v3)) with max as above.
  static float reduce_max(T v) {
    const T h = max(v, vextq_f32(v, v, 2));
    return vgetq_lane_f32(max(h, vextq_f32(h, h, 1)), 0);
  }
};
#else
#error "simd_x86.h needs -mavx512f, -mavx2 -mfma, or aarch64"
#endif

}  // namespace tessera::x86::TSR_X86_ISA
