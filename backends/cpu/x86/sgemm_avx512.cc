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
  int64_t p = 0;
  if constexpr (R == kMr && !kStrided) {
    // A full panel of packed B (the common case): the k loop in inline assembly, four
    // steps an iteration: 2 loads of B, 14 broadcasts of A and 28 FMAs a step, and per
    // four steps four prefetches of A 32 steps ahead (four steps read 224 bytes of it) and
    // two of the next B panel's slice (4 * pf_step <= 32 floats); then the kc % 4 last
    // steps one at a time. Accumulators zmm0..zmm27, stored to `out` at the end. The loop
    // below, one step an iteration, issues ~51 instructions per 28 FMAs (2 prefetches and
    // 4 pointer and counter updates a step), this one ~46. As on AVX2 (sgemm_avx2.cc), it
    // matters when the core's other hyperthread is busy with another tenant's work and the
    // core dispatches fewer instructions for this one: gemm_peak on a Xeon (2 vCPUs of a
    // shared host), three alternated rounds, 1024^3: 80.8-83.6% of peak against 71-77%;
    // 128^3: 68-73% against 56-66%; BERT at 1 and 2 threads 0.976 of the time (two library
    // copies alternated in one process). FMAs that broadcast A from memory themselves
    // ({1to16}: 30 instructions a step) were slower (68-84% at 1024^3): 30 loads per 28
    // FMAs, the loads became the limit.
    if (pf_step <= 8) {
      alignas(64) float out[kMr * kNr];
      const float* pfp = pf;
      const int64_t pf_bytes = 16 * pf_step;
      int64_t groups = kc / 4, rest = kc % 4;
#define TSR_ROW(AOFF, I, R, C0, C1)                         \
  "vbroadcastss " #AOFF "+4*" #I "(%[a]), %%zmm" #R "\n\t" \
  "vfmadd231ps %%zmm28, %%zmm" #R ", %%zmm" #C0 "\n\t"     \
  "vfmadd231ps %%zmm29, %%zmm" #R ", %%zmm" #C1 "\n\t"
#define TSR_STEP(ROW, BOFF, AOFF)                                                                         \
  "vmovaps " #BOFF "(%[b]), %%zmm28\n\t"                                                               \
  "vmovaps " #BOFF "+64(%[b]), %%zmm29\n\t"                                                            \
  ROW(AOFF, 0, 30, 0, 1) ROW(AOFF, 1, 31, 2, 3) ROW(AOFF, 2, 30, 4, 5) ROW(AOFF, 3, 31, 6, 7)              \
  ROW(AOFF, 4, 30, 8, 9) ROW(AOFF, 5, 31, 10, 11) ROW(AOFF, 6, 30, 12, 13) ROW(AOFF, 7, 31, 14, 15)        \
  ROW(AOFF, 8, 30, 16, 17) ROW(AOFF, 9, 31, 18, 19) ROW(AOFF, 10, 30, 20, 21) ROW(AOFF, 11, 31, 22, 23)    \
  ROW(AOFF, 12, 30, 24, 25) ROW(AOFF, 13, 31, 26, 27)
#define TSR_ZERO4(A, B, C, D) "vpxord %%zmm" #A ", %%zmm" #A ", %%zmm" #A "\n\t" "vpxord %%zmm" #B ", %%zmm" #B ", %%zmm" #B "\n\t" \
  "vpxord %%zmm" #C ", %%zmm" #C ", %%zmm" #C "\n\t" "vpxord %%zmm" #D ", %%zmm" #D ", %%zmm" #D "\n\t"
#define TSR_STORE4(A, B, C, D) "vmovaps %%zmm" #A ", 64*" #A "(%[o])\n\t" "vmovaps %%zmm" #B ", 64*" #B "(%[o])\n\t" \
  "vmovaps %%zmm" #C ", 64*" #C "(%[o])\n\t" "vmovaps %%zmm" #D ", 64*" #D "(%[o])\n\t"
#define TSR_LOOP(ROW)                                                                                         \
  asm volatile(TSR_ZERO4(0, 1, 2, 3) TSR_ZERO4(4, 5, 6, 7) TSR_ZERO4(8, 9, 10, 11) TSR_ZERO4(12, 13, 14, 15)   \
               TSR_ZERO4(16, 17, 18, 19) TSR_ZERO4(20, 21, 22, 23) TSR_ZERO4(24, 25, 26, 27)                 \
               "test %[n], %[n]\n\t"                                                                        \
               "jz 2f\n\t"                                                                                  \
               ".p2align 5\n\t"                                                                             \
               "1:\n\t"                                                                                     \
               "prefetcht0 1792(%[a])\n\t"                                                                  \
               "prefetcht0 1856(%[a])\n\t"                                                                  \
               "prefetcht0 1920(%[a])\n\t"                                                                  \
               "prefetcht0 1984(%[a])\n\t"                                                                  \
               "prefetcht1 (%[pf])\n\t"                                                                     \
               "prefetcht1 64(%[pf])\n\t"                                                                   \
               "add %[pfb], %[pf]\n\t"                                                                      \
               TSR_STEP(ROW, 0, 0) TSR_STEP(ROW, 128, 56) TSR_STEP(ROW, 256, 112) TSR_STEP(ROW, 384, 168)    \
               "add $224, %[a]\n\t"                                                                         \
               "add $512, %[b]\n\t"                                                                         \
               "dec %[n]\n\t"                                                                               \
               "jnz 1b\n\t"                                                                                 \
               "2:\n\t"                                                                                     \
               "test %[r], %[r]\n\t"                                                                        \
               "jz 4f\n\t"                                                                                  \
               "3:\n\t"                                                                                     \
               "prefetcht0 1792(%[a])\n\t"                                                                  \
               TSR_STEP(ROW, 0, 0)                                                                            \
               "add $56, %[a]\n\t"                                                                          \
               "add $128, %[b]\n\t"                                                                         \
               "dec %[r]\n\t"                                                                               \
               "jnz 3b\n\t"                                                                                 \
               "4:\n\t"                                                                                     \
               TSR_STORE4(0, 1, 2, 3) TSR_STORE4(4, 5, 6, 7) TSR_STORE4(8, 9, 10, 11) TSR_STORE4(12, 13, 14, 15) \
               TSR_STORE4(16, 17, 18, 19) TSR_STORE4(20, 21, 22, 23) TSR_STORE4(24, 25, 26, 27)              \
               : [a] "+r"(a), [b] "+r"(b), [pf] "+r"(pfp), [n] "+r"(groups), [r] "+r"(rest)                   \
               : [pfb] "r"(pf_bytes), [o] "r"(out)                                                           \
               : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",     \
                 "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "xmm16", "xmm17", "xmm18", "xmm19", "xmm20",   \
                 "xmm21", "xmm22", "xmm23", "xmm24", "xmm25", "xmm26", "xmm27", "xmm28", "xmm29", "xmm30",   \
                 "xmm31", "memory", "cc")
      TSR_LOOP(TSR_ROW);
#undef TSR_LOOP
#undef TSR_STORE4
#undef TSR_ZERO4
#undef TSR_STEP
#undef TSR_ROW
#pragma GCC unroll 14
      for (int i = 0; i < R; ++i) {
        acc[i][0] = _mm512_load_ps(out + i * kNr);
        acc[i][1] = _mm512_load_ps(out + i * kNr + 16);
      }
      p = kc;
    }
  }
  for (; p < kc; ++p) {
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
