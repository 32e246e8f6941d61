// AVX2+FMA SGEMM micro-kernel, 6 x 16: 12 ymm accumulators (6 rows x 2 vectors of 8
// floats), 2 ymm for the B row, 1 for the broadcast A; 12 independent FMAs per p cover the
// FMA latency (5 cycles x 2 ports on Haswell needs >= 10).
// Compiled with -mavx2 -mfma (this file only); called only when the CPU has AVX2 and FMA.
#include <immintrin.h>

#include "backends/cpu/x86/sgemm_epilogue_simd.h"
#include "backends/cpu/x86/sgemm_kernels.h"

namespace tessera::cpu {

namespace {

/// Vector traits for EpilogueSimd: 8 floats.
struct Vec {
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

constexpr int kMr = 6, kNr = 16;

void ukernel_6x16(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, const SgemmEpilogue& ep) {
  __m256 acc[kMr][2];
#pragma GCC unroll 6
  for (int i = 0; i < kMr; ++i) acc[i][0] = acc[i][1] = _mm256_setzero_ps();
  for (int64_t p = 0; p < kc; ++p) {
    // acc[i][v] += a[p][i] * b[p][8v .. 8v+7]
    const __m256 b0 = _mm256_load_ps(b), b1 = _mm256_load_ps(b + 8);
#pragma GCC unroll 6
    for (int i = 0; i < kMr; ++i) {
      const __m256 ai = _mm256_broadcast_ss(a + i);
      acc[i][0] = _mm256_fmadd_ps(ai, b0, acc[i][0]);
      acc[i][1] = _mm256_fmadd_ps(ai, b1, acc[i][1]);
    }
    a += kMr;
    b += kNr;
  }
  // C = act(alpha * acc + bias + beta * C + row_bias + addend)
  const EpilogueSimd<Vec> e(ep);
  const __m256 zero = _mm256_setzero_ps();
  const __m256 bias0 = ep.bias ? _mm256_loadu_ps(ep.bias) : zero, bias1 = ep.bias ? _mm256_loadu_ps(ep.bias + 8) : zero;
#pragma GCC unroll 6
  for (int i = 0; i < kMr; ++i) {
    if (i >= ep.rows) break;
    float* ci = c + i * ldc;
    const __m256 rb = ep.row_bias ? _mm256_set1_ps(ep.row_bias[i]) : zero;
    const float* zi = ep.addend ? ep.addend + i * ep.ld_addend : nullptr;
    e.finish(acc[i][0], bias0, rb, zi, ci);
    e.finish(acc[i][1], bias1, rb, zi ? zi + 8 : nullptr, ci + 8);
  }
}

}  // namespace

// MC x KC of A (144 x 256 x 4 B = 144 KiB) in L2; KC x NR of B (16 KiB) in L1.
SgemmKernelInfo sgemm_avx2_kernel() { return {kMr, kNr, 144, 256, 2048, &ukernel_6x16}; }

}  // namespace tessera::cpu
