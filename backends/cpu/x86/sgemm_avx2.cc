// AVX2+FMA SGEMM micro-kernel, 6 x 16: 12 ymm accumulators (6 rows x 2 vectors of 8
// floats), 2 ymm for the B row, 1 for the broadcast A; 12 independent FMAs per p cover the
// FMA latency (5 cycles x 2 ports on Haswell needs >= 10).
// Compiled with -mavx2 -mfma (this file only); called only when the CPU has AVX2 and FMA.
#include <immintrin.h>

#include "backends/cpu/x86/sgemm_kernels.h"

namespace tessera::cpu {

namespace {

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
  // C = act(alpha * acc + beta * C + bias)
  const __m256 alpha = _mm256_set1_ps(ep.alpha), beta = _mm256_set1_ps(ep.beta), zero = _mm256_setzero_ps();
  const __m256 bias0 = ep.bias ? _mm256_loadu_ps(ep.bias) : zero, bias1 = ep.bias ? _mm256_loadu_ps(ep.bias + 8) : zero;
  const bool read_c = ep.beta != 0.f;
#pragma GCC unroll 6
  for (int i = 0; i < kMr; ++i) {
    float* ci = c + i * ldc;
    __m256 r0 = _mm256_fmadd_ps(alpha, acc[i][0], bias0), r1 = _mm256_fmadd_ps(alpha, acc[i][1], bias1);
    if (read_c) {
      r0 = _mm256_fmadd_ps(beta, _mm256_loadu_ps(ci), r0);
      r1 = _mm256_fmadd_ps(beta, _mm256_loadu_ps(ci + 8), r1);
    }
    if (ep.relu) {
      r0 = _mm256_max_ps(r0, zero);
      r1 = _mm256_max_ps(r1, zero);
    }
    _mm256_storeu_ps(ci, r0);
    _mm256_storeu_ps(ci + 8, r1);
  }
}

}  // namespace

// MC x KC of A (144 x 256 x 4 B = 144 KiB) in L2; KC x NR of B (16 KiB) in L1.
SgemmKernelInfo sgemm_avx2_kernel() { return {kMr, kNr, 144, 256, 2048, &ukernel_6x16}; }

}  // namespace tessera::cpu
