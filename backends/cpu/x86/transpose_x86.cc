// x86 Transpose (ONNX Transpose-1/13/21), any dtype of 1, 2, 4 or 8 bytes; the same bits
// as the reference (ref/transpose.cc), which it replaces for every such node. Plan and
// algorithm: transpose_x86.h.
#include "backends/cpu/x86/transpose_x86.h"

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cstring>
#include <memory>

#include "backends/cpu/x86/parallel_x86.h"
#include "backends/cpu/x86/x86_kernels.h"

namespace tessera::x86 {

namespace {

template <typename T>
void scalar_block(const T* src, int64_t lds, T* dst, int64_t ldd, int64_t rows, int64_t cols) {
  // 8 x 8 blocks keep the rows read and the columns written in L1.
  constexpr int64_t kB = 8;
  for (int64_t c0 = 0; c0 < cols; c0 += kB)
    for (int64_t r0 = 0; r0 < rows; r0 += kB) {
      const int64_t c1 = std::min(cols, c0 + kB), r1 = std::min(rows, r0 + kB);
      for (int64_t c = c0; c < c1; ++c)
        for (int64_t r = r0; r < r1; ++r) dst[c * ldd + r] = src[r * lds + c];
    }
}

// stage: this thread's kStageBytes buffer for the staged AVX2 path, or null.
template <typename T>
void run_tile2d(const TransposePlan& p, const T* src, T* dst, int64_t begin, int64_t end, float* stage) {
  const int last = p.rank - 1;
  const int64_t a_size = p.dims[last], q_size = p.dims[p.j], lda = p.src_stride[last], ldd = p.dst_stride[p.j];
  const int64_t nrb = (a_size + kBlockRows - 1) / kBlockRows, nqb = (q_size + kBlockCols - 1) / kBlockCols;
  for (int64_t t = begin; t < end; ++t) {
    int64_t rest = t / (nrb * nqb);
    const int64_t rb = t / nqb % nrb, qb = t % nqb;
    int64_t src_off = 0, dst_off = 0;
    for (int d = last - 1; d >= 0; --d) {
      if (d == p.j) continue;
      const int64_t i = rest % p.dims[d];
      rest /= p.dims[d];
      src_off += i * p.src_stride[d];
      dst_off += i * p.dst_stride[d];
    }
    const int64_t a0 = rb * kBlockRows, a1 = std::min(a_size, a0 + kBlockRows);
    const int64_t q0 = qb * kBlockCols, q1 = std::min(q_size, q0 + kBlockCols);
    const T* s = src + src_off + a0 * lda + q0;
    T* d = dst + dst_off + q0 * ldd + a0;
    if constexpr (sizeof(T) == 4) {
      const float* sf = reinterpret_cast<const float*>(s);
      float* df = reinterpret_cast<float*>(d);
#if defined(__aarch64__)
      if (p.isa == Isa::kNeon) neon::transpose_block(sf, lda, df, ldd, a1 - a0, q1 - q0, p.stream);
#else
      if (p.isa == Isa::kAvx512) avx512::transpose_block(sf, lda, df, ldd, a1 - a0, q1 - q0, p.stream);
      else if (p.isa == Isa::kAvx2 && p.stream && stage) avx2::transpose_block_staged(sf, lda, df, ldd, a1 - a0, q1 - q0, stage);
      else if (p.isa == Isa::kAvx2) avx2::transpose_block(sf, lda, df, ldd, a1 - a0, q1 - q0, p.stream);
#endif
      else scalar_block(s, lda, d, ldd, a1 - a0, q1 - q0);
    } else {
      scalar_block(s, lda, d, ldd, a1 - a0, q1 - q0);
    }
  }
}

// Threads a plan runs on (each slot with its own stage buffer).
int transpose_slots(const TransposePlan& p, int threads) { return threads_for(p.numel / 4, threads); }

template <typename T>
void run_typed(const TransposePlan& p, const T* src, T* dst, ThreadPool* pool, int threads, void* scratch) {
  // A copy is memory-bound and brief: a thread per 128 Ki elements (512 KiB of floats), so
  // the small transposes of an encoder layer do not pay a thread wake-up.
  const int slots = transpose_slots(p, threads);
  if (p.kind == TransposePlan::Kind::kCopy) {
    run_slots(pool, slots, p.numel, [&](int64_t, int64_t b, int64_t e) {
      std::memcpy(dst + b, src + b, static_cast<size_t>(e - b) * sizeof(T));
    });
  } else if (p.kind == TransposePlan::Kind::kRuns) {
    const int last = p.rank - 1;
    const int64_t run = p.dims[last];
    run_slots(pool, slots, p.numel / run, [&](int64_t, int64_t b, int64_t e) {
      // The multi-index of run b over dims[0..last), then advanced like an odometer.
      int64_t idx[kTransposeMaxRank] = {};
      int64_t rest = b, src_off = 0;
      for (int d = last - 1; d >= 0; --d) {
        idx[d] = rest % p.dims[d];
        rest /= p.dims[d];
        src_off += idx[d] * p.src_stride[d];
      }
      for (int64_t r = b; r < e; ++r) {
        std::memcpy(dst + r * run, src + src_off, static_cast<size_t>(run) * sizeof(T));
        for (int d = last - 1; d >= 0; --d) {
          src_off += p.src_stride[d];
          if (++idx[d] < p.dims[d]) break;
          src_off -= idx[d] * p.src_stride[d];
          idx[d] = 0;
        }
      }
    });
  } else {
    const int last = p.rank - 1;
    const int64_t tasks = p.numel / (p.dims[last] * p.dims[p.j]) * ((p.dims[last] + kBlockRows - 1) / kBlockRows) *
                          ((p.dims[p.j] + kBlockCols - 1) / kBlockCols);
    run_slots(pool, slots, tasks, [&](int64_t slot, int64_t b, int64_t e) {
      float* stage = scratch ? reinterpret_cast<float*>(static_cast<uint8_t*>(scratch) + slot * kStageBytes) : nullptr;
      run_tile2d(p, src, dst, b, e, stage);
#if defined(__x86_64__) || defined(_M_X64)
      if (p.stream) _mm_sfence();  // order the non-temporal stores before the caller reads dst
#endif
    });
  }
}

}  // namespace

TransposePlan plan_transpose(const std::vector<int64_t>& shape, const std::vector<int64_t>& perm, int elem_size) {
  TransposePlan p;
  p.elem = elem_size;
  p.numel = 1;
  for (int64_t d : shape) p.numel *= d;
  // Input dims of size > 1, renumbered; the permutation restricted to them.
  const int rank = static_cast<int>(shape.size());
  std::vector<int> new_index(rank, -1);
  std::vector<int64_t> in_dims;
  for (int i = 0; i < rank; ++i)
    if (shape[i] != 1) {
      new_index[i] = static_cast<int>(in_dims.size());
      in_dims.push_back(shape[i]);
    }
  std::vector<int> pr;
  for (int k = 0; k < rank; ++k)
    if (shape[perm[k]] != 1) pr.push_back(new_index[perm[k]]);
  // Merge output dims that are consecutive input dims: groups of input dims [first, last].
  std::vector<std::pair<int, int>> groups;  // in output order
  for (int v : pr) {
    if (!groups.empty() && groups.back().second + 1 == v) groups.back().second = v;
    else groups.push_back({v, v});
  }
  // Input-order position of each group gives its input stride.
  std::vector<int64_t> in_stride_of(in_dims.size(), 1);  // row-major strides of the input
  for (int i = static_cast<int>(in_dims.size()) - 2; i >= 0; --i) in_stride_of[i] = in_stride_of[i + 1] * in_dims[i + 1];
  p.rank = static_cast<int>(groups.size());
  if (p.rank > kTransposeMaxRank || p.numel == 0) {
    // Not collapsible into kTransposeMaxRank dims: the caller falls back (rank = -1).
    p.rank = p.numel == 0 ? 0 : -1;
    p.kind = TransposePlan::Kind::kCopy;
    return p;
  }
  for (int k = 0; k < p.rank; ++k) {
    int64_t size = 1;
    for (int i = groups[k].first; i <= groups[k].second; ++i) size *= in_dims[i];
    p.dims[k] = size;
    p.src_stride[k] = in_stride_of[groups[k].second];
  }
  int64_t s = 1;
  for (int k = p.rank - 1; k >= 0; --k) {
    p.dst_stride[k] = s;
    s *= p.dims[k];
  }
  if (p.rank <= 1) {
    p.kind = TransposePlan::Kind::kCopy;
  } else if (p.src_stride[p.rank - 1] == 1) {
    p.kind = TransposePlan::Kind::kRuns;
  } else {
    p.kind = TransposePlan::Kind::kTile2d;
    for (int k = 0; k < p.rank; ++k)
      if (p.src_stride[k] == 1) p.j = k;
  }
  p.isa = best_isa();
  p.stream = p.kind == TransposePlan::Kind::kTile2d && elem_size == 4 && p.isa != Isa::kScalar && p.isa != Isa::kNeon &&
             static_cast<size_t>(p.numel) * 4 >= kStreamBytes;
  return p;
}

size_t transpose_scratch_bytes(const TransposePlan& p, int threads) {
  if (p.kind != TransposePlan::Kind::kTile2d || !p.stream || p.isa != Isa::kAvx2) return 0;
  return kStageBytes * static_cast<size_t>(std::max(1, transpose_slots(p, threads)));
}

void run_transpose(const TransposePlan& p, const void* src, void* dst, ThreadPool* pool, int threads, void* scratch) {
  switch (p.elem) {
    case 1: run_typed(p, static_cast<const uint8_t*>(src), static_cast<uint8_t*>(dst), pool, threads, scratch); break;
    case 2: run_typed(p, static_cast<const uint16_t*>(src), static_cast<uint16_t*>(dst), pool, threads, scratch); break;
    case 4: run_typed(p, static_cast<const uint32_t*>(src), static_cast<uint32_t*>(dst), pool, threads, scratch); break;
    default: run_typed(p, static_cast<const uint64_t*>(src), static_cast<uint64_t*>(dst), pool, threads, scratch); break;
  }
}

Result<std::unique_ptr<Kernel>> make_Transpose(const CompileContext& ctx) {
  if (!ctx.has_input(0)) return std::unique_ptr<Kernel>();
  const int elem = static_cast<int>(dtype_size(ctx.input(0).dtype));
  if (elem != 1 && elem != 2 && elem != 4 && elem != 8) return std::unique_ptr<Kernel>();
  const Shape& in = ctx.input(0).shape;
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> perm = ctx.node.attr_ints("perm");
  if (ctx.node.find_attr("perm") == nullptr)
    for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
  if (static_cast<int64_t>(perm.size()) != rank) return std::unique_ptr<Kernel>();  // the reference reports it
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t v : perm) {
    if (v < 0 || v >= rank || seen[static_cast<size_t>(v)]) return std::unique_ptr<Kernel>();
    seen[static_cast<size_t>(v)] = true;
  }
  const TransposePlan plan = plan_transpose(in, perm, elem);
  if (plan.rank < 0) return std::unique_ptr<Kernel>();
  const int threads = ctx.threads;
  return make_fn_kernel(
      [plan, threads](const KernelContext& k) {
        if (plan.numel > 0) run_transpose(plan, k.input(0).data(), k.output(0).data(), k.thread_pool, threads, k.scratch);
        return Status::ok();
      },
      transpose_scratch_bytes(plan, threads));
}

}  // namespace tessera::x86
