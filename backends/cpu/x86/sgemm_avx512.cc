// AVX-512F SGEMM micro-kernel, 14 x 32: 28 zmm accumulators (14 rows x 2 vectors of 16
// floats), 2 zmm for the B row, A broadcast from memory; per p: 2 loads, 14 broadcasts,
// 28 FMAs, enough independent FMAs to cover 4-cycle latency on 2 FMA ports (needs >= 8).
// Compiled with -mavx512f -mfma (this file only); called only when the CPU has AVX-512F.
#include <immintrin.h>

#include "backends/cpu/x86/sgemm_epilogue_simd.h"
#include "backends/cpu/x86/sgemm_kernels.h"

namespace tessera::cpu {

namespace {

/// Vector traits for EpilogueSimd: 16 floats.
struct Vec {
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

constexpr int kMr = 14, kNr = 32;

// The first R rows (R <= MR) of the 14 x 32 tile: an edge panel of A with fewer valid rows
// (M = 128 is 9 panels of 14 and one of 2) costs R/14 of a full one instead of all of it.
// The packed panel is still MR floats per p.
template <int R>
void ukernel_rx32(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, const SgemmEpilogue& ep) {
  __m512 acc[R][2];
#pragma GCC unroll 14
  for (int i = 0; i < R; ++i) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
#pragma GCC unroll 14
  for (int i = 0; i < R; ++i)
    if (i < ep.rows) _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc), _MM_HINT_T0);
  for (int64_t p = 0; p < kc; ++p) {
    // acc[i][v] += a[p][i] * b[p][16v .. 16v+15]; A's panel 32 steps ahead towards L1 (it
    // runs on into the next panel, which follows it in the packed block): a pre-packed A
    // (a Conv's weights, ResNet-50's 9 MiB late layers) streams from memory, where the
    // hardware prefetcher stops at each 4 KiB page (whole ResNet-50, 1 thread: 77 -> 70 ms).
    _mm_prefetch(reinterpret_cast<const char*>(a + 32 * kMr), _MM_HINT_T0);
    const __m512 b0 = _mm512_load_ps(b), b1 = _mm512_load_ps(b + 16);
#pragma GCC unroll 14
    for (int i = 0; i < R; ++i) {
      const __m512 ai = _mm512_set1_ps(a[i]);
      acc[i][0] = _mm512_fmadd_ps(ai, b0, acc[i][0]);
      acc[i][1] = _mm512_fmadd_ps(ai, b1, acc[i][1]);
    }
    a += kMr;
    b += kNr;
  }
  // C = act(alpha * acc + bias + beta * C + row_bias + addend)
  const EpilogueSimd<Vec> e(ep);
  const __m512 zero = _mm512_setzero_ps();
  // The first `cols` columns (all 32 but at an edge tile) by masked loads and stores:
  // one loop for full and edge tiles (a full mask costs nothing on AVX-512).
  const int cols = ep.cols < kNr ? ep.cols : kNr;
  const __mmask16 m0 = cols >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << cols) - 1u);
  const __mmask16 m1 = cols >= 32 ? __mmask16(0xFFFF)
                       : cols > 16 ? static_cast<__mmask16>((1u << (cols - 16)) - 1u)
                                   : __mmask16(0);
  const __m512 b0 = ep.bias ? _mm512_maskz_loadu_ps(m0, ep.bias) : zero;
  const __m512 b1 = ep.bias ? _mm512_maskz_loadu_ps(m1, ep.bias + 16) : zero;
  auto finish = [&](__m512 a, __m512 bj, __m512 rb, const float* z, float* c, __mmask16 m) {
    __m512 r = _mm512_fmadd_ps(e.alpha, a, bj);
    if (e.read_c) r = _mm512_fmadd_ps(e.beta, _mm512_maskz_loadu_ps(m, c), r);
    r = _mm512_add_ps(r, rb);
    if (z) r = _mm512_add_ps(r, _mm512_maskz_loadu_ps(m, z));
    r = e.activate(r);
    if (e.affine) r = _mm512_fmadd_ps(r, e.scale, e.shift);
    _mm512_mask_storeu_ps(c, m, r);
  };
#pragma GCC unroll 14
  for (int i = 0; i < R; ++i) {
    if (i >= ep.rows) break;
    float* ci = c + i * ldc;
    const __m512 rb = ep.row_bias ? _mm512_set1_ps(ep.row_bias[i]) : zero;
    const float* zi = ep.addend ? ep.addend + i * ep.ld_addend : nullptr;
    finish(acc[i][0], b0, rb, zi, ci, m0);
    if (m1) finish(acc[i][1], b1, rb, zi ? zi + 16 : nullptr, ci + 16, m1);
  }
}

// The whole tile, or the first 2, 4, 7 or 10 rows when the edge panel has no more.
void ukernel_14x32(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, const SgemmEpilogue& ep) {
  if (ep.rows >= 11) return ukernel_rx32<14>(kc, a, b, c, ldc, ep);
  if (ep.rows >= 8) return ukernel_rx32<10>(kc, a, b, c, ldc, ep);
  if (ep.rows >= 5) return ukernel_rx32<7>(kc, a, b, c, ldc, ep);
  if (ep.rows >= 3) return ukernel_rx32<4>(kc, a, b, c, ldc, ep);
  return ukernel_rx32<2>(kc, a, b, c, ldc, ep);
}

}  // namespace

// MC x KC of A (336 x 256 x 4 B = 336 KiB) sits in L2; the KC x NR micro-panel of B
// (256 x 32 x 4 B = 32 KiB) in L1.
SgemmKernelInfo sgemm_avx512_kernel() { return {kMr, kNr, 336, 256, 2048, &ukernel_14x32, /*masked_cols=*/true}; }

}  // namespace tessera::cpu
