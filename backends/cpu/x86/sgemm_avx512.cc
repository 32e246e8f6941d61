// AVX-512F SGEMM micro-kernel, 14 x 32: 28 zmm accumulators (14 rows x 2 vectors of 16
// floats), 2 zmm for the B row, A broadcast from memory; per p: 2 loads, 14 broadcasts,
// 28 FMAs, enough independent FMAs to cover 4-cycle latency on 2 FMA ports (needs >= 8).
// Compiled with -mavx512f -mfma (this file only); called only when the CPU has AVX-512F.
#include <immintrin.h>

#include "backends/cpu/x86/sgemm_epilogue_simd.h"
#include "backends/cpu/x86/sgemm_kernels.h"
#include "backends/cpu/x86/transpose16_avx512.h"
#include "backends/cpu/x86/vec16_avx512.h"

namespace tessera::cpu {

namespace {

using Vec = Vec16;

constexpr int kMr = 14, kNr = 32;

// The lanes of the first `cols` (0..32) of a 32-float row: [0] for floats 0-15, [1] for
// 16-31 (edge tiles' masked loads and stores, edge panels' packing).
struct HalfMasks {
  __mmask16 lo, hi;
};
inline HalfMasks half_masks(int cols) {
  const auto upto = [](int n) { return n >= 16 ? __mmask16(0xFFFF) : n <= 0 ? __mmask16(0) : static_cast<__mmask16>((1u << n) - 1u); };
  return {upto(cols), upto(cols - 16)};
}

// The first R rows (R <= MR) of the 14 x 32 tile: an edge panel of A with fewer valid rows
// (M = 128 is 9 panels of 14 and one of 2) costs R/14 of a full one instead of all of it.
// The packed panel is still MR floats per p.
// kStrided: B read in place (SgemmEpilogue::b_stride), masked to the tile's columns; else
// packed, plain aligned loads (masked loads in the loop cost the packed path 8-15%: a 1x1
// Conv 64 -> 256 at 56 x 56, 1.20 against 1.10 ms).
template <int R, bool kStrided>
void ukernel_rx32(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, const SgemmEpilogue& ep) {
  __m512 acc[R][2];
#pragma GCC unroll 14
  for (int i = 0; i < R; ++i) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
#pragma GCC unroll 14
  for (int i = 0; i < R; ++i)
    if (i < ep.rows) {  // the tile's two lines per row of C
      _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc + 16), _MM_HINT_T0);
    }
  const float* pf = ep.prefetch ? ep.prefetch : a;
  const int64_t pf_step = ep.prefetch ? ep.prefetch_step : 0;
  // The first `cols` columns (all 32 but at an edge tile): B read in place is loaded, and C
  // stored, through these masks.
  const int cols = ep.cols < kNr ? ep.cols : kNr;
  const HalfMasks m = half_masks(cols);
  const int64_t b_step = kStrided ? ep.b_stride : kNr;  // B in place: rows b_stride apart
  for (int64_t p = 0; p < kc; ++p) {
    // acc[i][v] += a[p][i] * b[p][16v .. 16v+15]; A's panel 32 steps ahead towards L1 (it
    // runs on into the next panel, which follows it in the packed block): a pre-packed A
    // (a Conv's weights, ResNet-50's 9 MiB late layers) streams from memory, where the
    // hardware prefetcher stops at each 4 KiB page (whole ResNet-50, 1 thread: 77 -> 70 ms).
    // Then one line of the caller's prefetch stretch (the next B panel) towards L2.
    _mm_prefetch(reinterpret_cast<const char*>(a + 32 * kMr), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(pf), _MM_HINT_T1);
    pf += pf_step;
    __m512 b0, b1;
    if constexpr (kStrided) {
      b0 = _mm512_maskz_loadu_ps(m.lo, b);
      b1 = _mm512_maskz_loadu_ps(m.hi, b + 16);
    } else {
      b0 = _mm512_load_ps(b);
      b1 = _mm512_load_ps(b + 16);
    }
#pragma GCC unroll 14
    for (int i = 0; i < R; ++i) {
      const __m512 ai = _mm512_set1_ps(a[i]);
      acc[i][0] = _mm512_fmadd_ps(ai, b0, acc[i][0]);
      acc[i][1] = _mm512_fmadd_ps(ai, b1, acc[i][1]);
    }
    a += kMr;
    b += b_step;
  }
  // C = act(alpha * acc + bias + beta * C + row_bias + addend)
  const EpilogueSimd<Vec> e(ep);
  const __m512 zero = _mm512_setzero_ps();
  // C by masked loads and stores: one loop for full and edge tiles (a full mask costs
  // nothing on AVX-512).
  const __m512 b0 = ep.bias ? _mm512_maskz_loadu_ps(m.lo, ep.bias) : zero;
  const __m512 b1 = ep.bias ? _mm512_maskz_loadu_ps(m.hi, ep.bias + 16) : zero;
  auto finish = [&](__m512 a, __m512 bj, __m512 rb, const float* z, float* c, __mmask16 mask) {
    __m512 r = _mm512_fmadd_ps(e.alpha, a, bj);
    if (e.read_c) r = _mm512_fmadd_ps(e.beta, _mm512_maskz_loadu_ps(mask, c), r);
    r = _mm512_add_ps(r, rb);
    if (z) r = _mm512_add_ps(r, _mm512_maskz_loadu_ps(mask, z));
    r = e.activate(r);
    if (e.affine) r = _mm512_fmadd_ps(r, e.scale, e.shift);
    _mm512_mask_storeu_ps(c, mask, r);
  };
#pragma GCC unroll 14
  for (int i = 0; i < R; ++i) {
    if (i >= ep.rows) break;
    float* ci = c + i * ldc;
    const __m512 rb = ep.row_bias ? _mm512_set1_ps(ep.row_bias[i]) : zero;
    const float* zi = ep.addend ? ep.addend + i * ep.ld_addend : nullptr;
    finish(acc[i][0], b0, rb, zi, ci, m.lo);
    if (m.hi) finish(acc[i][1], b1, rb, zi ? zi + 16 : nullptr, ci + 16, m.hi);
  }
}

// The row variant an edge panel of `rows` valid rows runs (SgemmKernelInfo::edge_rows).
int edge_rows_14(int rows) { return rows >= 11 ? 14 : rows >= 8 ? 10 : rows >= 5 ? 7 : rows >= 3 ? 4 : 2; }

// The whole tile, or the first 2, 4, 7 or 10 rows when the edge panel has no more.
template <bool kStrided>
void ukernel_rows(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, const SgemmEpilogue& ep) {
  switch (edge_rows_14(ep.rows)) {
    case 14: return ukernel_rx32<14, kStrided>(kc, a, b, c, ldc, ep);
    case 10: return ukernel_rx32<10, kStrided>(kc, a, b, c, ldc, ep);
    case 7: return ukernel_rx32<7, kStrided>(kc, a, b, c, ldc, ep);
    case 4: return ukernel_rx32<4, kStrided>(kc, a, b, c, ldc, ep);
    default: return ukernel_rx32<2, kStrided>(kc, a, b, c, ldc, ep);
  }
}

void ukernel_14x32(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, const SgemmEpilogue& ep) {
  if (ep.b_stride > 0) return ukernel_rows<true>(kc, a, b, c, ldc, ep);
  ukernel_rows<false>(kc, a, b, c, ldc, ep);
}

// One 14-tall panel (SgemmPackAPanel). Row-major A (cs == 1): 16 x 16 blocks (rows past
// `rows` zero) transposed in registers, each column stored as 14 floats. Transposed A
// (rs == 1): each p is `rows` contiguous floats, one masked load and store.
void pack_a_panel_14(const float* src, int64_t rs, int64_t cs, int64_t kc, int rows, float* dst) {
  constexpr __mmask16 kPanel = (1u << kMr) - 1u;
  if (cs != 1) {
    const __mmask16 valid = static_cast<__mmask16>((1u << rows) - 1u);
    for (int64_t p = 0; p < kc; ++p) _mm512_mask_storeu_ps(dst + p * kMr, kPanel, _mm512_maskz_loadu_ps(valid, src + p * cs));
    return;
  }
  for (int64_t p0 = 0; p0 < kc; p0 += 16) {
    const int64_t width = kc - p0 < 16 ? kc - p0 : 16;
    const __mmask16 cols = static_cast<__mmask16>((1u << width) - 1u);
    __m512 r[16];
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i) r[i] = i < rows ? _mm512_maskz_loadu_ps(cols, src + i * rs + p0) : _mm512_setzero_ps();
    transpose16_avx512(r);
    // Unrolled with a test, not a loop to `width`, so that r stays in registers (with the
    // loop GCC kept the transposed block on the stack: a store and a reload per vector).
#pragma GCC unroll 16
    for (int j = 0; j < 16; ++j)
      if (j < width) _mm512_mask_storeu_ps(dst + (p0 + j) * kMr, kPanel, r[j]);
  }
}

// One 32-wide panel of op(B) (SgemmPackBPanel). Row-major B (cs == 1): each p is two
// masked 16-float loads and two aligned stores (the portable loop made a memcpy call per
// p: 13% of a 1x1 Conv with K = 128). Transposed B (rs == 1): 16 x 16 blocks transposed in
// registers, as pack_a_panel_14.
void pack_b_panel_32(const float* src, int64_t rs, int64_t cs, int64_t kc, int cols, float* dst) {
  const HalfMasks m = half_masks(cols);
  if (cs == 1) {
    for (int64_t p = 0; p < kc; ++p) {
      const float* s = src + p * rs;
      _mm512_storeu_ps(dst + p * kNr, _mm512_maskz_loadu_ps(m.lo, s));
      _mm512_storeu_ps(dst + p * kNr + 16, _mm512_maskz_loadu_ps(m.hi, s + 16));
    }
    return;
  }
  for (int half = 0; half < 2; ++half) {
    const int c0 = 16 * half;
    for (int64_t p0 = 0; p0 < kc; p0 += 16) {
      const int64_t width = kc - p0 < 16 ? kc - p0 : 16;
      const __mmask16 ps = static_cast<__mmask16>((1u << width) - 1u);
      __m512 r[16];
#pragma GCC unroll 16
      for (int i = 0; i < 16; ++i)
        r[i] = c0 + i < cols ? _mm512_maskz_loadu_ps(ps, src + (c0 + i) * cs + p0) : _mm512_setzero_ps();
      transpose16_avx512(r);
#pragma GCC unroll 16
      for (int j = 0; j < 16; ++j)  // unrolled: see pack_a_panel_14
        if (j < width) _mm512_storeu_ps(dst + (p0 + j) * kNr + c0, r[j]);
    }
  }
}

}  // namespace

// KC = 1024: a K of up to 1024 (BERT's 768, ResNet-50's 3 x 3 x 64) is one pass, so each
// tile of C is loaded and stored once, not K / 256 times (1024^3: 73% -> 80% of peak,
// 128 x 3072 x 768: 69% -> 75%); the KC x NR micro-panel of B (128 KiB) and the 14 x KC
// panel of A (56 KiB) are both read from L2, which keeps up with one 14 x 32 step per
// 14 cycles. MC x KC of A (336 x 1024 x 4 B = 1.3 MiB) fits the 2 MiB L2 with them; NC =
// 512 keeps a packed KC x NC block of B at 2 MiB.
SgemmKernelInfo sgemm_avx512_kernel() {
  return {kMr, kNr, 336, 1024, 512, &ukernel_14x32, /*masked_cols=*/true, &pack_a_panel_14, &pack_b_panel_32, &edge_rows_14,
          /*strided_b=*/true};
}

}  // namespace tessera::cpu
