// AVX2+FMA SGEMM micro-kernel, 6 x 16: 12 ymm accumulators (6 rows x 2 vectors of 8
// floats), 2 ymm for the B row, 1 for the broadcast A; 12 independent FMAs per p cover the
// FMA latency (5 cycles x 2 ports on Haswell needs >= 10). As the AVX-512 kernel, it
// prefetches the C tile's rows, A's panel 32 steps ahead and the next B panel's slice
// (SgemmEpilogue::prefetch); its k loop is inline assembly, four steps an iteration (see
// ukernel_6x16); its panel packers replace the portable loops.
// Compiled with -mavx2 -mfma (this file only); called only when the CPU has AVX2 and FMA.
#include <immintrin.h>

#include "backends/cpu/x86/sgemm_epilogue_simd.h"
#include "backends/cpu/x86/sgemm_kernels.h"
#include "backends/cpu/x86/simd_avx2.h"

namespace tessera::cpu {

namespace {

/// Vector traits for EpilogueSimd: 8 floats (simd_avx2.h).
using Vec = Vec8Avx2;

constexpr int kMr = 6, kNr = 16;

void ukernel_6x16(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, const SgemmEpilogue& ep) {
  __m256 acc[kMr][2];
#pragma GCC unroll 6
  for (int i = 0; i < kMr; ++i) acc[i][0] = acc[i][1] = _mm256_setzero_ps();
#pragma GCC unroll 6
  for (int i = 0; i < kMr; ++i)
    if (i < ep.rows) _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc), _MM_HINT_T0);  // the tile's line per row
  const float* pf = ep.prefetch ? ep.prefetch : a;
  const int64_t pf_step = ep.prefetch ? ep.prefetch_step : 0;
  int64_t p = 0;
  if (pf_step <= 8) {
    // The whole k loop in inline assembly, four steps a loop iteration: 2 loads of B, 6
    // broadcasts of A and 12 FMAs a step, and per four steps two prefetches of A 32 steps
    // ahead (four steps read 96 bytes of A) and two of the next B panel's slice
    // (4 * pf_step <= 32 floats); then the kc % 4 last steps one at a time. Accumulators
    // ymm4..ymm15, stored to `out` at the end.
    //
    // Why assembly: the loop below, one step an iteration, issues 27 instructions per 12
    // FMAs (2 prefetches and 4 pointer and counter updates a step); this one ~21. Alone on
    // a core both run at ~90% of the FMA peak, but when the core's other hyperthread is busy
    // (a cloud host's other tenant: this machine's slow periods, in which a register-only
    // FMA loop still runs at full rate) the core dispatches about half as many instructions
    // for each thread, and the SGEMM becomes dispatch-bound: 128 x 768 x 3072 with a
    // pre-packed B, 1 thread, alternated blocks on a Zen 3 in such periods: 55-64 -> 64-77
    // GFLOP/s (equal, 85-90, in quiet ones). GCC, given the same four steps in intrinsics,
    // spills an accumulator and adds register moves (62 GFLOP/s even on a quiet core); FMAs
    // with B as a memory operand (18 loads a step) made it load-bound (58).
    alignas(32) float out[kMr * kNr];
    const float* pfp = pf;
    const int64_t pf_bytes = 16 * pf_step;
    int64_t groups = kc / 4, rest = kc % 4;
    asm volatile(
        "vxorps %%ymm4, %%ymm4, %%ymm4\n\t"
        "vxorps %%ymm5, %%ymm5, %%ymm5\n\t"
        "vxorps %%ymm6, %%ymm6, %%ymm6\n\t"
        "vxorps %%ymm7, %%ymm7, %%ymm7\n\t"
        "vxorps %%ymm8, %%ymm8, %%ymm8\n\t"
        "vxorps %%ymm9, %%ymm9, %%ymm9\n\t"
        "vxorps %%ymm10, %%ymm10, %%ymm10\n\t"
        "vxorps %%ymm11, %%ymm11, %%ymm11\n\t"
        "vxorps %%ymm12, %%ymm12, %%ymm12\n\t"
        "vxorps %%ymm13, %%ymm13, %%ymm13\n\t"
        "vxorps %%ymm14, %%ymm14, %%ymm14\n\t"
        "vxorps %%ymm15, %%ymm15, %%ymm15\n\t"
        "test %[n], %[n]\n\t"
        "jz 2f\n\t"
        ".p2align 5\n\t"
        "1:\n\t"
        "prefetcht0 768(%[a])\n\t"
        "prefetcht0 832(%[a])\n\t"
        "prefetcht1 (%[pf])\n\t"
        "prefetcht1 64(%[pf])\n\t"
        "add %[pfb], %[pf]\n\t"
#define TSR_STEP(BOFF, AOFF)                              \
        "vmovaps " #BOFF "(%[b]), %%ymm0\n\t"             \
        "vmovaps " #BOFF "+32(%[b]), %%ymm1\n\t"          \
        "vbroadcastss " #AOFF "(%[a]), %%ymm2\n\t"        \
        "vfmadd231ps %%ymm0, %%ymm2, %%ymm4\n\t"          \
        "vfmadd231ps %%ymm1, %%ymm2, %%ymm5\n\t"          \
        "vbroadcastss " #AOFF "+4(%[a]), %%ymm3\n\t"      \
        "vfmadd231ps %%ymm0, %%ymm3, %%ymm6\n\t"          \
        "vfmadd231ps %%ymm1, %%ymm3, %%ymm7\n\t"          \
        "vbroadcastss " #AOFF "+8(%[a]), %%ymm2\n\t"      \
        "vfmadd231ps %%ymm0, %%ymm2, %%ymm8\n\t"          \
        "vfmadd231ps %%ymm1, %%ymm2, %%ymm9\n\t"          \
        "vbroadcastss " #AOFF "+12(%[a]), %%ymm3\n\t"     \
        "vfmadd231ps %%ymm0, %%ymm3, %%ymm10\n\t"         \
        "vfmadd231ps %%ymm1, %%ymm3, %%ymm11\n\t"         \
        "vbroadcastss " #AOFF "+16(%[a]), %%ymm2\n\t"     \
        "vfmadd231ps %%ymm0, %%ymm2, %%ymm12\n\t"         \
        "vfmadd231ps %%ymm1, %%ymm2, %%ymm13\n\t"         \
        "vbroadcastss " #AOFF "+20(%[a]), %%ymm3\n\t"     \
        "vfmadd231ps %%ymm0, %%ymm3, %%ymm14\n\t"         \
        "vfmadd231ps %%ymm1, %%ymm3, %%ymm15\n\t"
        TSR_STEP(0, 0) TSR_STEP(64, 24) TSR_STEP(128, 48) TSR_STEP(192, 72)
        "add $96, %[a]\n\t"
        "add $256, %[b]\n\t"
        "dec %[n]\n\t"
        "jnz 1b\n\t"
        "2:\n\t"
        "test %[r], %[r]\n\t"
        "jz 4f\n\t"
        "3:\n\t"
        TSR_STEP(0, 0)
        "add $24, %[a]\n\t"
        "add $64, %[b]\n\t"
        "dec %[r]\n\t"
        "jnz 3b\n\t"
        "4:\n\t"
#undef TSR_STEP
        "vmovaps %%ymm4, 0(%[o])\n\t"
        "vmovaps %%ymm5, 32(%[o])\n\t"
        "vmovaps %%ymm6, 64(%[o])\n\t"
        "vmovaps %%ymm7, 96(%[o])\n\t"
        "vmovaps %%ymm8, 128(%[o])\n\t"
        "vmovaps %%ymm9, 160(%[o])\n\t"
        "vmovaps %%ymm10, 192(%[o])\n\t"
        "vmovaps %%ymm11, 224(%[o])\n\t"
        "vmovaps %%ymm12, 256(%[o])\n\t"
        "vmovaps %%ymm13, 288(%[o])\n\t"
        "vmovaps %%ymm14, 320(%[o])\n\t"
        "vmovaps %%ymm15, 352(%[o])\n\t"
        : [a] "+r"(a), [b] "+r"(b), [pf] "+r"(pfp), [n] "+r"(groups), [r] "+r"(rest)
        : [pfb] "r"(pf_bytes), [o] "r"(out)
        : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",
          "xmm12", "xmm13", "xmm14", "xmm15", "memory", "cc");
#pragma GCC unroll 6
    for (int i = 0; i < kMr; ++i) {
      acc[i][0] = _mm256_load_ps(out + i * kNr);
      acc[i][1] = _mm256_load_ps(out + i * kNr + 8);
    }
    p = kc;
  }
  for (; p < kc; ++p) {
    // acc[i][v] += a[p][i] * b[p][8v .. 8v+7]; A's panel 32 steps ahead towards L1 (a
    // pre-packed A streams from memory), and a line of the next B panel towards L2.
    _mm_prefetch(reinterpret_cast<const char*>(a + 32 * kMr), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(pf), _MM_HINT_T1);
    pf += pf_step;
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
  if (ep.cols >= kNr) {
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
    return;
  }
  // An edge tile (SgemmEpilogue::cols < 16): the same terms through masked loads and stores
  // of its first `cols` columns, so the driver needs no local tile and scalar epilogue.
  const __m256i m0 = first_lanes_avx2(ep.cols), m1 = first_lanes_avx2(ep.cols - 8);
  auto finish = [&](__m256 a, __m256 bj, __m256 rb, const float* z, float* cv, __m256i mk) {
    __m256 r = _mm256_fmadd_ps(e.alpha, a, bj);
    if (e.read_c) r = _mm256_fmadd_ps(e.beta, _mm256_maskload_ps(cv, mk), r);
    r = _mm256_add_ps(r, rb);
    if (z) r = _mm256_add_ps(r, _mm256_maskload_ps(z, mk));
    r = e.activate(r);
    if (e.affine) r = _mm256_fmadd_ps(r, e.scale, e.shift);
    _mm256_maskstore_ps(cv, mk, r);
  };
  // acc is indexed by constants only: a run-time index would keep it in memory, and the
  // loop above with it (2.7x slower).
  const bool two = ep.cols > 8;
  const __m256 bias0 = ep.bias ? _mm256_maskload_ps(ep.bias, m0) : zero;
  const __m256 bias1 = ep.bias && two ? _mm256_maskload_ps(ep.bias + 8, m1) : zero;
#pragma GCC unroll 6
  for (int i = 0; i < kMr; ++i) {
    if (i >= ep.rows) break;
    float* ci = c + i * ldc;
    const __m256 rb = ep.row_bias ? _mm256_set1_ps(ep.row_bias[i]) : zero;
    const float* zi = ep.addend ? ep.addend + i * ep.ld_addend : nullptr;
    finish(acc[i][0], bias0, rb, zi, ci, m0);
    if (two) finish(acc[i][1], bias1, rb, zi ? zi + 8 : nullptr, ci + 8, m1);
  }
}


// SgemmPackBPanel for NR = 16 (see sgemm_kernels.h). A row-major B (cs == 1) is copied two
// vectors per row, masked at an edge panel (masked-off lanes load as 0: the zero padding);
// the portable loop called memcpy per row, 16% of a 1x1 Conv's time. A transposed B reads
// each column contiguously, as the portable loop does.
void pack_b_panel_16(const float* src, int64_t rs, int64_t cs, int64_t kc, int cols, float* dst) {
  if (cs == 1) {
    if (cols == kNr) {
      for (int64_t p = 0; p < kc; ++p, src += rs, dst += kNr) {
        _mm256_store_ps(dst, _mm256_loadu_ps(src));
        _mm256_store_ps(dst + 8, _mm256_loadu_ps(src + 8));
      }
      return;
    }
    const __m256i lo = first_lanes_avx2(cols), hi = first_lanes_avx2(cols - 8);
    for (int64_t p = 0; p < kc; ++p, src += rs, dst += kNr) {
      _mm256_store_ps(dst, _mm256_maskload_ps(src, lo));
      _mm256_store_ps(dst + 8, _mm256_maskload_ps(src + 8, hi));
    }
    return;
  }
  for (int64_t p = 0; p < kc; ++p) {
    _mm256_store_ps(dst + p * kNr, _mm256_setzero_ps());
    _mm256_store_ps(dst + p * kNr + 8, _mm256_setzero_ps());
  }
  for (int c = 0; c < cols; ++c) {
    const float* s = src + c * cs;
    for (int64_t p = 0; p < kc; ++p) dst[p * kNr + c] = s[p];
  }
}


// SgemmPackAPanel for MR = 6. A row-major A (cs == 1) is read 8 columns of its 6 rows at a
// time and transposed in registers (r[j] lane i = A[i][p + j], lanes 6 and 7 unused), each
// p's 6 values stored as the first 6 of 8; the rest, and a transposed A, as the portable
// loop.
void pack_a_panel_6(const float* src, int64_t rs, int64_t cs, int64_t kc, int rows, float* dst) {
  int64_t p = 0;
  if (cs == 1 && rows == kMr) {
    const __m256i six = _mm256_setr_epi32(-1, -1, -1, -1, -1, -1, 0, 0);
    for (; p + 8 <= kc; p += 8) {
      __m256 r[8];
      for (int i = 0; i < kMr; ++i) r[i] = _mm256_loadu_ps(src + i * rs + p);
      r[6] = r[7] = _mm256_setzero_ps();
      transpose8_avx2(r);
      // Each p's 8-float store spills 2 floats into p + 1's slot, which the next store
      // overwrites; only the block's last is masked (masked stores are slow on AMD CPUs).
      for (int j = 0; j < 7; ++j) _mm256_storeu_ps(dst + (p + j) * kMr, r[j]);
      _mm256_maskstore_ps(dst + (p + 7) * kMr, six, r[7]);
    }
  }
  for (; p < kc; ++p)
    for (int i = 0; i < kMr; ++i) dst[p * kMr + i] = i < rows ? src[i * rs + p * cs] : 0.f;
}

}  // namespace

// KC = 1024, as the AVX-512 kernel: a K of up to 1024 (BERT's 768; a 3 x 3 Conv on up to 113
// channels) is one pass, so each C tile is loaded and stored once, and a K of 3072 takes 3
// passes instead of 8. The KC x NR panel of B (64 KiB) no longer fits L1 and streams from
// L2 with the A panel; on a Zen 3 that costs less than the extra passes over C, which did
// not stay in L2 (a 96 x 2048 C block of a Conv is 768 KiB). MC x KC of A (120 x 1024 x 4 B
// = 480 KiB) fills the 512 KiB L2; MC 60 was 8% slower on BERT (B then streams from memory
// once per MC block). Measured in one process, the two settings' sessions alternated run by
// run (this machine's slow periods hit both alike), pairwise new / old: BERT-base's 8
// feed-forward pairs at 1 thread 0.948, 0.966, 0.976; BERT 0.985 (1 thread), 0.972 (2);
// PP-OCRv4 det 0.951 (1), 0.914 (2); rec 0.992, cls 0.998, ResNet-50 1.009 (1) and 1.014 (2),
// MobileNetV2 1.029 (2): noise. KC 768 and 2048 were between the two; KC 256 and 192 were
// 2% and 4% slower than 384. SGEMM 1024^3: 81-83% of peak either way.
SgemmKernelInfo sgemm_avx2_kernel() {
  return {kMr, kNr, 120, 1024, 2048, &ukernel_6x16, /*masked_cols=*/true, &pack_a_panel_6, &pack_b_panel_16};
}

}  // namespace tessera::cpu
