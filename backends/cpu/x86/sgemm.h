// Packed single-precision GEMM for the CPU backend:
//
//   C[i, j] = act(alpha * sum_p op(A)[i, p] * op(B)[p, j] + beta * C[i, j] + bias[j])
//
// with op(A) M x K, op(B) K x N, C M x N, all row-major with leading dimensions in elements;
// op(X) = X or X^T (the transpose is taken while packing, so it costs nothing in the inner
// loop); act = identity or Relu (max(x, 0)). beta == 0 means C is not read (it may hold NaN).
//
// Algorithm: Goto & van de Geijn, "Anatomy of High-Performance Matrix Multiplication", ACM
// TOMS 34(3), 2008, in the loop order of BLIS (Van Zee & van de Geijn, "BLIS: A Framework for
// Rapidly Instantiating BLAS Functionality", ACM TOMS 41(3), 2015):
//   for jc in N step NC            (B block KC x NC, kept in L3)
//     for pc in K step KC          pack B(pc.., jc..) into NR-wide panels
//       for ic in M step MC        pack A(ic.., pc..) into MR-tall panels (A block in L2)
//         for jr in NC step NR     (B micro-panel KC x NR in L1, or L2 on AVX-512: KC 1024)
//           for ir in MC step MR   micro-kernel: an MR x NR tile of C in registers
// beta and bias are applied on the first KC pass, Relu on the last, inside the micro-kernel
// while the tile is in registers (a fused epilogue). On AVX-512 the panels are packed with
// 16 x 16 register transposes, the next B micro-panel is prefetched a slice per micro-kernel
// call, and a row-major B that at most 3 row panels read is not packed at all (the kernel
// reads its rows in place).
//
// ISAs: an AVX-512F micro-kernel (14 x 32: 28 zmm accumulators), an AVX2+FMA one (6 x 16:
// 12 ymm accumulators), each compiled with its own flags in its own file and chosen at run
// time with __builtin_cpu_supports; on aarch64 a NEON one (8 x 12: 24 q-register
// accumulators, backends/cpu/arm/sgemm_neon.cc, checked with getauxval(AT_HWCAP)); and a
// portable C++ one (4 x 8) for any other CPU. This driver is ISA-independent and is built on
// x86-64 and aarch64 alike.
//
// Threads: the M x N output is split into as many parts as the pool has threads (whole
// NR-column panels when N >= M, else whole MR-row panels, so each thread streams the smaller
// share of the operands); each thread packs its own panels in its own slice of the scratch,
// so a run allocates nothing. When the cut is by columns and op(A) packs to at most 2 MiB
// (a transformer's products: 128 rows), A is packed once by all the threads and the column
// panels are claimed at run time in chunks (about 3 a thread), so a thread on a slowed core
// takes fewer; the results are bit-identical to the static parts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "backends/backend.h"

namespace tessera {

class ThreadPool;

namespace cpu {

enum class SgemmIsa { kAuto, kAvx512, kAvx2, kGeneric, kNeon };

/// Name of an ISA path ("avx512", "avx2", "neon", "generic", "auto").
const char* sgemm_isa_name(SgemmIsa isa);
/// True if this build has the path and this CPU can run it (kAuto and kGeneric: always).
bool sgemm_isa_available(SgemmIsa isa);
/// The path kAuto picks on this CPU: AVX-512F, else AVX2+FMA (x86-64); NEON (aarch64); else
/// generic. The environment variable TESSERA_X86_ISA=avx2 (or scalar), read once, narrows
/// it as it does the other x86 kernels' (a benchmark of the AVX2 path on an AVX-512 CPU).
SgemmIsa sgemm_best_isa();

struct SgemmArgs {
  int64_t m = 0, n = 0, k = 0;     // op(A) is m x k, op(B) k x n, C m x n; each >= 0
  const float* a = nullptr;        // A: m x k (lda >= k), or k x m when trans_a (lda >= m)
  int64_t lda = 0;
  bool trans_a = false;
  const float* b = nullptr;        // B: k x n (ldb >= n), or n x k when trans_b (ldb >= k)
  int64_t ldb = 0;
  bool trans_b = false;
  float* c = nullptr;              // C: m x n, ldc >= n; must not overlap A or B
  int64_t ldc = 0;
  float alpha = 1.f, beta = 0.f;   // beta == 0: C is write-only
  const float* bias = nullptr;     // n values added to every row, or nullptr
  bool relu = false;               // apply max(x, 0) last
  SgemmIsa isa = SgemmIsa::kAuto;  // force a path (tests); kAuto: sgemm_best_isa()
  /// op(B) already packed by sgemm_pack_b for this ISA path (b, ldb, trans_b are then not
  /// read), or nullptr.
  const float* packed_b = nullptr;
  /// op(A) already packed by sgemm_pack_a for this ISA path (a, lda, trans_a are then not
  /// read), or nullptr: weight pre-packing for Conv, whose weights are the A operand.
  const float* packed_a = nullptr;
  /// A fused epilogue after the terms above, in this order (all optional):
  ///   C[i, j] += row_bias[i]                         (m values: Conv's per-channel bias)
  ///   C[i, j] += addend[i * ld_addend + j]           (m x n: a fused residual Add)
  ///   C[i, j] = act(C[i, j])                         (a fused activation)
  /// relu == true is the same as act = Relu. addend must not overlap C.
  const float* row_bias = nullptr;
  const float* addend = nullptr;
  int64_t ld_addend = 0;
  FusedActivation act;
};

/// The register and cache blocking of an ISA path: MR x NR micro-tiles, KC-deep blocks
/// (what the packed layouts of sgemm_pack_a and sgemm_pack_b are cut by).
struct SgemmBlocking {
  int mr = 0, nr = 0, kc = 0;
};
SgemmBlocking sgemm_blocking(SgemmIsa isa = SgemmIsa::kAuto);

/// The micro-kernel work of an m x n product on this path, in output elements computed: the
/// rows rounded up to whole MR panels (the last panel to the smallest row variant the path
/// has: 2, 4, 7, 10 or 14 on AVX-512), times the columns rounded up to whole NR panels.
/// Comparing it with sgemm_tile_area(n, m) tells whether the transposed product,
/// C^T = op(B)^T op(A)^T, fills the tiles better (a Conv with 49 output positions and 512
/// channels: 514 x 64 against 49 x 512).
int64_t sgemm_tile_area(int64_t m, int64_t n, SgemmIsa isa = SgemmIsa::kAuto);

/// Floats sgemm_pack_a writes for an m x k op(A): round_up(m, MR of the path) * k.
size_t sgemm_packed_a_floats(int64_t m, int64_t k, SgemmIsa isa = SgemmIsa::kAuto);

/// Packs op(A) (m x k; A stored m x k, or k x m when trans_a, leading dimension lda) once,
/// for reuse by every sgemm call with the same A and path. Layout: for each KC block of
/// columns starting at pc, round_up(m, MR) / MR panels of MR x (columns of the block)
/// floats (column-major within a panel), zero-padded; dst holds sgemm_packed_a_floats()
/// floats, 64-byte aligned.
void sgemm_pack_a(const float* a, int64_t lda, bool trans_a, int64_t m, int64_t k, SgemmIsa isa, float* dst);

/// Floats sgemm_pack_b writes for a k x n op(B): k * round_up(n, NR of the path).
size_t sgemm_packed_b_floats(int64_t n, int64_t k, SgemmIsa isa = SgemmIsa::kAuto);

/// Packs op(B) (k x n; B stored k x n, or n x k when trans_b, leading dimension ldb) once,
/// for reuse by every sgemm call with the same B and path (weight pre-packing at plan time).
/// Layout: for each KC block of rows starting at pc, round_up(n, NR) / NR panels of
/// (rows of the block) x NR floats, zero-padded; dst holds sgemm_packed_b_floats() floats,
/// 64-byte aligned.
void sgemm_pack_b(const float* b, int64_t ldb, bool trans_b, int64_t k, int64_t n, SgemmIsa isa, float* dst);

/// Per-group pre-packed A operands (Conv's W[g], ConvTranspose's W_g^T), packed once at
/// plan time into the kernel's own 64-byte aligned storage.
struct PackedGroups {
  std::unique_ptr<float, void (*)(void*)> data{nullptr, &std::free};
  size_t group_floats = 0;  // sgemm_packed_a_floats(m, k) per group
  /// Group gi's packed A, or nullptr when nothing was packed.
  const float* group(int64_t gi) const { return data ? data.get() + static_cast<size_t>(gi) * group_floats : nullptr; }
  /// Packs `groups` m x k op(A) matrices: group gi is A stored at a + gi * group_stride
  /// (m x k row-major with leading dimension lda, or k x m when trans_a). Errors:
  /// out_of_memory naming `what`.
  Status pack(const float* a, int64_t groups, int64_t group_stride, int64_t lda, bool trans_a, int64_t m, int64_t k,
              SgemmIsa isa, const std::string& what);
};

/// Bytes of scratch sgemm() needs for these sizes on `threads` threads with this ISA path
/// (packed A and B blocks per thread and, for threads > 1, the whole A packed once for the
/// run-time claimed column chunks, at most 2 MiB of it; 64-byte aligned). Depends only on
/// m, n, k, threads and the path, so a kernel can ask at plan time; it also covers every
/// product no larger in m, n and k on as many threads or fewer (a Conv's narrower last
/// tile). b_prepacked: every call passes a pre-packed B (SgemmArgs::packed_b), so no
/// thread needs a block to pack B into (KC x NC floats: 8 MiB on AVX2); a call without
/// one would overrun this scratch.
size_t sgemm_scratch_bytes(int64_t m, int64_t n, int64_t k, int threads, SgemmIsa isa = SgemmIsa::kAuto,
                           bool b_prepacked = false);

/// Computes the product above. `scratch` holds sgemm_scratch_bytes(m, n, k, max_threads,
/// isa) bytes, 64-byte aligned; at most max_threads threads of `pool` are used (pool may be
/// null: one thread). Precondition (not checked at run time; the callers' plans ensure it):
/// sizes and leading dimensions as documented, scratch large enough, the forced ISA
/// available.
void sgemm(const SgemmArgs& args, void* scratch, ThreadPool* pool, int max_threads);

}  // namespace cpu
}  // namespace tessera
