// Transpose for the CPU backend (transpose_x86.cc), usable outside a Kernel (bench/gemm_peak):
//
//   TransposePlan p = plan_transpose({4096, 4096}, {1, 0}, 4);   // at plan time
//   run_transpose(p, src, dst, pool, threads);                    // allocates nothing
//
// Planning collapses the permutation: size-1 dims are dropped and output dims that are
// adjacent, in order, in the input are merged (so [N, H, W, C] -> [N, C, H, W] is the
// batched 2-D transpose [N, H*W, C] -> [N, C, H*W]). Then one of:
//   kCopy:   the permutation is the identity: memcpy, split over threads;
//   kRuns:   the output's innermost dim is the input's innermost dim: memcpy of contiguous
//            runs (e.g. [B, S, H, D] -> [B, H, S, D] copies rows of D);
//   kTile2d: the output's innermost dim has input stride lda > 1 (size A) and the input's
//            innermost dim is output dim j (size Q, output stride ldd): for each index of the
//            other dims, the 2-D transpose dst[q * ldd + a] = src[a * lda + q] in 16 x 16
//            (AVX-512) or 8 x 8 (AVX2) in-register tiles (128-bit loads into lanes, then in-lane
//            shuffles: transpose_x86_impl.h),
//            in blocks of kBlockRows x kBlockCols (one block's 512 pages stay in the TLB and
//            its 2 x 256 KiB in L2: an output row of a 4096-wide matrix is 4 pages away
//            from the next), 16-row strips within a block; scalar at the
//            edges and for elements of 1, 2 or 8 bytes. Outputs of at least kStreamBytes (4x
//            this machine's 2 MiB L2) get non-temporal stores of whole 64-byte lines (rows
//            peeled until the output rows are line-aligned; output rows that cannot all be
//            aligned store normally), so writing them costs no read-for-ownership: on this
//            machine (Xeon, AVX-512) 4096 x 4096 runs at ~2 GB/s without them and at
//            memcpy's speed with them. On AVX2, given scratch (transpose_scratch_bytes), each
//            block is first transposed into a per-thread buffer in L2 and then streamed out
//            an output row at a time (avx2::transpose_block_staged): runs of a block's 1 KiB
//            instead of one 64-byte line per output row per 16-row strip, which the memory
//            writes back faster (AMD EPYC Zen 3, 4096 x 4096, alternated with memcpy: 73-76%
//            of its bandwidth against 63-68% streaming each strip's lines directly).
// Tasks (outer index x row block x column block) are split over the threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "backends/cpu/x86/isa_x86.h"

namespace tessera {

class ThreadPool;

namespace x86 {

constexpr int kTransposeMaxRank = 8;                  // after collapsing (input rank is unbounded)
constexpr int64_t kBlockRows = 256, kBlockCols = 256;  // input rows and columns per task
constexpr size_t kStreamBytes = size_t{8} << 20;      // output size from which stores stream
constexpr size_t kStageBytes = static_cast<size_t>(kBlockRows * kBlockCols) * 4;  // one block of floats

struct TransposePlan {
  enum class Kind { kCopy, kRuns, kTile2d } kind = Kind::kCopy;
  int elem = 4;        // element size, bytes: 1, 2, 4 or 8
  int64_t numel = 0;
  // Collapsed output dims (row-major), each with its input stride (elements).
  int rank = 0;
  int64_t dims[kTransposeMaxRank] = {};
  int64_t src_stride[kTransposeMaxRank] = {};
  int64_t dst_stride[kTransposeMaxRank] = {};
  // kTile2d: the output dim j whose input stride is 1 (its size Q = dims[j]); the last
  // output dim has size A = dims[rank - 1] and input stride lda. kRuns: run = dims[rank - 1].
  int j = 0;
  bool stream = false;  // non-temporal stores (output >= kStreamBytes)
  Isa isa = Isa::kScalar;
};

/// Plans Y = transpose(X, perm) for X of `shape` with `elem_size`-byte elements (1, 2, 4 or
/// 8); perm must be a permutation of [0, rank) (the caller checks). The path is best_isa()
/// at plan time (kScalar: plain blocked loops).
TransposePlan plan_transpose(const std::vector<int64_t>& shape, const std::vector<int64_t>& perm, int elem_size);

/// Bytes of scratch run_transpose can use for `plan` on `threads` threads: kStageBytes per
/// thread for a streamed AVX2 transpose (the staged path), else 0.
size_t transpose_scratch_bytes(const TransposePlan& plan, int threads);

/// Runs the plan: dst (plan.numel elements) = the transpose of src; they must not overlap.
/// Uses at most `threads` threads of `pool` (null: the calling thread). Allocates nothing.
/// scratch: transpose_scratch_bytes(plan, threads) bytes, 64-byte aligned, or null (the
/// streamed AVX2 path then stores each strip's lines directly, as AVX-512 does).
void run_transpose(const TransposePlan& plan, const void* src, void* dst, ThreadPool* pool, int threads,
                   void* scratch = nullptr);

namespace neon {  // aarch64: backends/cpu/arm/transpose_neon.cc (4 x 4 tiles; no streaming stores)
void transpose_block(const float* src, int64_t lds, float* dst, int64_t ldd, int64_t rows, int64_t cols, bool stream);
}  // namespace neon
namespace avx512 {
/// dst[c * ldd + r] = src[r * lds + c] for r < rows, c < cols (floats, or any 4-byte
/// elements: bits are moved, not computed). stream: non-temporal stores where aligned; the
/// caller issues the store fence.
void transpose_block(const float* src, int64_t lds, float* dst, int64_t ldd, int64_t rows, int64_t cols, bool stream);
}  // namespace avx512
namespace avx2 {
void transpose_block(const float* src, int64_t lds, float* dst, int64_t ldd, int64_t rows, int64_t cols, bool stream);
/// The same block (rows <= kBlockRows, cols <= kBlockCols) through buf (kStageBytes,
/// 64-byte aligned): transposed into it, then each output row's `rows` floats streamed out
/// in one run.
void transpose_block_staged(const float* src, int64_t lds, float* dst, int64_t ldd, int64_t rows, int64_t cols,
                            float* buf);
}  // namespace avx2

}  // namespace x86
}  // namespace tessera
