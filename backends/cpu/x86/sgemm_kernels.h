// Internal to the SGEMM: the micro-kernel interface shared by sgemm.cc and the per-ISA
// micro-kernel files (sgemm_avx512.cc, sgemm_avx2.cc, ../arm/sgemm_neon.cc); the x86 ones
// are compiled with their own -m flags and must only be called after a CPU feature check.
#pragma once

#include <cstdint>

#include "backends/backend.h"

namespace tessera::cpu {

/// What the micro-kernel does with its MR x NR tile of products `acc` (in registers):
///   C[i][j] = act(alpha * acc[i][j] + bias[j] + beta * C[i][j] + row_bias[i] + addend[i][j])
/// beta == 0: C is not read. bias: NR values, row_bias: MR values, addend: an MR x NR tile
/// with row stride ld_addend; each may be nullptr. act: one the kernels apply in registers
/// (kNone, kRelu, kLeakyRelu, kClip, kHardSigmoid, kHardSwish; see sgemm_epilogue_simd.h);
/// the driver applies the others (Sigmoid, Tanh, Gelu) after the kernel.
struct SgemmEpilogue {
  float alpha = 1.f;
  float beta = 0.f;
  const float* bias = nullptr;
  const float* row_bias = nullptr;
  const float* addend = nullptr;
  int64_t ld_addend = 0;
  FusedActivation act;
  /// Rows of the tile to write (1..MR): an edge tile of C with fewer rows is written in
  /// place (rows past it are computed, from the zero padding of the packed A, and dropped).
  int rows = 1 << 30;
  /// Columns of the tile to write (1..NR), for kernels with SgemmKernelInfo::masked_cols:
  /// an edge tile of C with fewer columns is written in place with masked loads and stores
  /// (bias and addend are read only for these columns). Others always get NR.
  int cols = 1 << 30;
  /// A stretch of memory later calls will read (a slice of the next packed B panel), for
  /// kernels that prefetch it towards L2 while they compute: at step p (p < kc) the line
  /// holding prefetch[p * prefetch_step] (nullptr: none; prefetches never fault).
  const float* prefetch = nullptr;
  int64_t prefetch_step = 0;
  /// B read in place, for kernels with SgemmKernelInfo::strided_b: row p of the panel is
  /// b[p * b_stride .. + NR) of a row-major op(B), its first `cols` columns (0: packed,
  /// rows NR apart and zero-padded).
  int64_t b_stride = 0;
};

/// True if the micro-kernels apply `k` in registers.
inline bool kernel_applies(FusedActivation::Kind k) {
  return k != FusedActivation::Kind::kSigmoid && k != FusedActivation::Kind::kTanh && k != FusedActivation::Kind::kGelu;
}

/// acc = sum over p < kc of a[p*MR + i] * b[p*NR + j]: `a` is a packed MR-tall panel (kc
/// columns of MR floats), `b` a packed NR-wide panel (kc rows of NR floats), both 64-byte
/// aligned; c is a full MR x NR tile with row stride ldc (elements).
using SgemmMicroKernel = void (*)(int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
                                  const SgemmEpilogue& ep);

/// Packs one NR-wide panel of op(B): dst[p * NR + c] = src[p * rs + c * cs] for p < kc,
/// c < cols (1..NR), zero for cols..NR-1. Either rs or cs is 1 (B stored row-major, or
/// transposed). dst holds kc * NR floats.
using SgemmPackBPanel = void (*)(const float* src, int64_t rs, int64_t cs, int64_t kc, int cols, float* dst);

/// Packs one MR-tall panel of op(A): dst[p * MR + r] = src[r * rs + p * cs] for p < kc,
/// r < rows (1..MR), zero for rows..MR-1. Either rs or cs is 1 (A stored row-major, or
/// transposed). dst holds kc * MR floats.
using SgemmPackAPanel = void (*)(const float* src, int64_t rs, int64_t cs, int64_t kc, int rows, float* dst);

/// A micro-kernel with its register block (MR x NR) and cache blocks (MC, KC, NC; MC a
/// multiple of MR, NC of NR).
struct SgemmKernelInfo {
  int mr, nr, mc, kc, nc;
  SgemmMicroKernel kernel;
  bool masked_cols = false;  // the kernel honours SgemmEpilogue::cols
  SgemmPackAPanel pack_a_panel = nullptr;  // this ISA's panel packers, or nullptr: the portable ones
  SgemmPackBPanel pack_b_panel = nullptr;
  /// Rows the micro-kernel computes for an edge panel with `rows` (1..MR) valid rows: the
  /// smallest of its row variants that covers them (nullptr: always MR).
  int (*edge_rows)(int rows) = nullptr;
  bool strided_b = false;  // the kernel honours SgemmEpilogue::b_stride
};

#if defined(__x86_64__) || defined(_M_X64)
#define TSR_SGEMM_X86 1
SgemmKernelInfo sgemm_avx512_kernel();  // AVX-512F: 14 x 32
SgemmKernelInfo sgemm_avx2_kernel();    // AVX2 + FMA: 6 x 16
#endif
#if defined(__aarch64__)
#define TSR_SGEMM_NEON 1
SgemmKernelInfo sgemm_neon_kernel();    // NEON (AdvSIMD), in backends/cpu/arm/: 8 x 12
#endif

}  // namespace tessera::cpu
