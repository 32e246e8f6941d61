// NEON (AdvSIMD) SGEMM micro-kernel for aarch64, 8 x 12, for the packed SGEMM driver
// (backends/cpu/x86/sgemm.cc; interface in backends/cpu/x86/sgemm_kernels.h):
//   acc[i][j] = sum_{p < kc} a[p*8 + i] * b[p*12 + j],  i < 8, j < 12
//   C[i][j]   = act(alpha * acc[i][j] + bias[j] + beta * C[i][j] + row_bias[i] + addend[i][j])
// (the epilogue of sgemm_kernels.h, computed by sgemm_epilogue_simd.h as on x86)
// Registers (32 x 128-bit): 24 accumulators (8 rows x 3 vectors of 4 floats), 3 for the B
// row, 2 for the 8 A values; each FMLA takes its A scalar by lane ("fmla v.4s, v.4s,
// v.s[lane]"), so A needs no broadcast. Per p: 5 loads, 24 FMLAs, enough independent FMLAs
// to cover a 4-cycle latency on 2 FP pipes (needs >= 8). The same shape as OpenBLAS's and
// BLIS's Cortex-A57 8x12 SGEMM kernels (BLIS: bli_sgemm_armv8a_asm_8x12).
// AdvSIMD is mandatory on aarch64; sgemm.cc still checks getauxval(AT_HWCAP) (HWCAP_ASIMD).
#include <arm_neon.h>

#include "backends/cpu/x86/sgemm_epilogue_simd.h"
#include "backends/cpu/x86/sgemm_kernels.h"

namespace tessera::cpu {

namespace {

/// Vector traits for EpilogueSimd: 4 floats. FMAX/FMIN return NaN when either operand is
/// NaN, so a NaN r stays NaN through every activation, as on x86 and in the reference.
struct Vec {
  using T = float32x4_t;
  static T zero() { return vdupq_n_f32(0.f); }
  static T set1(float v) { return vdupq_n_f32(v); }
  static T load(const float* p) { return vld1q_f32(p); }
  static void store(float* p, T v) { vst1q_f32(p, v); }
  static T add(T a, T b) { return vaddq_f32(a, b); }
  static T mul(T a, T b) { return vmulq_f32(a, b); }
  static T div(T a, T b) { return vdivq_f32(a, b); }
  static T fmadd(T a, T b, T c) { return vfmaq_f32(c, a, b); }  // a * b + c
  static T max(T a, T b) { return vmaxq_f32(a, b); }
  static T min(T a, T b) { return vminq_f32(a, b); }
  static T select_ge0(T x, T if_ge0, T otherwise) { return vbslq_f32(vcgeq_f32(x, vdupq_n_f32(0.f)), if_ge0, otherwise); }
};

constexpr int kMr = 8, kNr = 12;

void ukernel_8x12(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, const SgemmEpilogue& ep) {
  float32x4_t acc[kMr][3];
#pragma GCC unroll 8
  for (int i = 0; i < kMr; ++i) acc[i][0] = acc[i][1] = acc[i][2] = vdupq_n_f32(0.f);
  for (int64_t p = 0; p < kc; ++p) {
    // acc[i][v] += a[p][i] * b[p][4v .. 4v+3]; a[p][i] is lane i % 4 of a0 (i < 4) or a1.
    const float32x4_t a0 = vld1q_f32(a), a1 = vld1q_f32(a + 4);
    const float32x4_t b0 = vld1q_f32(b), b1 = vld1q_f32(b + 4), b2 = vld1q_f32(b + 8);
#define TSR_FMLA_ROW(i, av, lane)                          \
  acc[i][0] = vfmaq_laneq_f32(acc[i][0], b0, av, lane); \
  acc[i][1] = vfmaq_laneq_f32(acc[i][1], b1, av, lane); \
  acc[i][2] = vfmaq_laneq_f32(acc[i][2], b2, av, lane);
    TSR_FMLA_ROW(0, a0, 0)
    TSR_FMLA_ROW(1, a0, 1)
    TSR_FMLA_ROW(2, a0, 2)
    TSR_FMLA_ROW(3, a0, 3)
    TSR_FMLA_ROW(4, a1, 0)
    TSR_FMLA_ROW(5, a1, 1)
    TSR_FMLA_ROW(6, a1, 2)
    TSR_FMLA_ROW(7, a1, 3)
#undef TSR_FMLA_ROW
    a += kMr;
    b += kNr;
  }
  // C = act(alpha * acc + bias + beta * C + row_bias + addend), as every micro-kernel
  // (sgemm_epilogue_simd.h).
  const EpilogueSimd<Vec> e(ep);
  const float32x4_t zero = vdupq_n_f32(0.f);
  float32x4_t bias[3] = {zero, zero, zero};
  if (ep.bias) {
    bias[0] = vld1q_f32(ep.bias);
    bias[1] = vld1q_f32(ep.bias + 4);
    bias[2] = vld1q_f32(ep.bias + 8);
  }
#pragma GCC unroll 8
  for (int i = 0; i < kMr; ++i) {
    if (i >= ep.rows) break;  // an edge tile: rows past it hold products of A's zero padding
    float* ci = c + i * ldc;
    const float32x4_t rb = ep.row_bias ? vdupq_n_f32(ep.row_bias[i]) : zero;
    const float* zi = ep.addend ? ep.addend + i * ep.ld_addend : nullptr;
#pragma GCC unroll 3
    for (int v = 0; v < 3; ++v) e.finish(acc[i][v], bias[v], rb, zi ? zi + 4 * v : nullptr, ci + 4 * v);
  }
}

}  // namespace

// Cache blocks for a typical ARMv8 core (32-64 KiB L1D, 512 KiB-1 MiB L2 per core or
// cluster): the KC x NR micro-panel of B (256 x 12 x 4 B = 12 KiB) stays in L1, the MC x KC
// block of A (128 x 256 x 4 B = 128 KiB) in L2. NC is a multiple of NR (the driver's
// pre-packed B panels must line up with its NC blocks): 1536 = 128 x 12, a 1.5 MiB B block.
SgemmKernelInfo sgemm_neon_kernel() { return {kMr, kNr, 128, 256, 1536, &ukernel_8x12}; }

}  // namespace tessera::cpu
