// MatMul on the packed SGEMM (ONNX MatMul-1/9/13, numpy.matmul semantics), float32:
// for each broadcast batch index, Y[m, n] = sum_k A[m, k] * B[k, n].
// A 1-D A is a 1 x K row, a 1-D B a K x 1 column (their dims are dropped from Y by the
// schema; Y's bytes are the same). When B has no batch dims (a weight), A's batch dims fold
// into M: one GEMM of (batch * M) x K by K x N. A B known at plan time is packed once here,
// into the kernel's own immutable storage (weight pre-packing). A fused tail (bias row,
// residual, activation; see fused_tail.h) runs in the SGEMM's epilogue.
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <vector>

#include "backends/cpu/thread_pool.h"
#include "backends/cpu/matmul_batches.h"
#include "backends/cpu/x86/fused_tail.h"
#include "backends/cpu/x86/parallel_x86.h"
#include "backends/cpu/x86/sgemm.h"
#include "backends/cpu/x86/x86_kernels.h"
#include "runtime/ops/op_schema.h"

namespace tessera::x86 {

namespace {

struct PackedWeight {
  std::unique_ptr<float[], void (*)(float*)> data{nullptr, [](float* p) { std::free(p); }};
};

class MatMulKernel final : public Kernel {
 public:
  int64_t m = 0, n = 0, k = 0, batches = 1;
  bool fold_batch = false;               // B 2-D: A's batches folded into M
  std::vector<int64_t> a_off, b_off;     // element offsets per batch (broadcast repeats)
  int threads = 1;
  cpu::SgemmIsa isa = cpu::SgemmIsa::kAuto;
  PackedWeight packed;                   // B pre-packed (fold_batch only), or null
  FusedTail tail;                        // fused bias row / residual / activation
  size_t scratch = 0;
  // Batches split over the threads, each product on one (its own scratch slot of
  // slot_bytes): when one batch is too small for sgemm to split over them all (BERT's
  // attention, 12 heads of 128 x 128 x 64: 2 MFLOP each, which sgemm runs on one thread).
  int batch_slots = 1;
  size_t slot_bytes = 0;

  size_t scratch_bytes() const override { return scratch; }
  Status run(const KernelContext& ctx) const override {
    const float* a = ctx.input(0).data_as<float>();
    const float* b = ctx.input(1).data_as<float>();
    float* y = ctx.output(0).data_as<float>();
    cpu::SgemmArgs g;
    g.n = n;
    g.k = k;
    g.lda = k;
    g.ldb = n;
    g.ldc = n;
    g.isa = isa;
    g.packed_b = packed.data.get();
    g.bias = tail.col_bias_data(ctx);
    const float* z = tail.addend_data(ctx);
    g.ld_addend = n;
    g.act = tail.act;
    if (fold_batch) {
      g.m = m * batches;
      g.a = a;
      g.b = b;
      g.c = y;
      g.addend = z;
      cpu::sgemm(g, ctx.scratch, ctx.thread_pool, threads);
      return Status::ok();
    }
    g.m = m;
    auto one = [&](cpu::SgemmArgs& gb, int64_t bi, void* scratch_slot, ThreadPool* pool, int t) {
      gb.a = a + a_off[static_cast<size_t>(bi)];
      gb.b = b + b_off[static_cast<size_t>(bi)];
      gb.c = y + bi * m * n;
      gb.addend = z ? z + bi * m * n : nullptr;
      cpu::sgemm(gb, scratch_slot, pool, t);
    };
    if (batch_slots > 1 && ctx.thread_pool) {
      run_slots(ctx.thread_pool, batch_slots, batches, [&](int64_t slot, int64_t b0, int64_t b1) {
        cpu::SgemmArgs gb = g;
        void* mine = static_cast<char*>(ctx.scratch) + static_cast<size_t>(slot) * slot_bytes;
        for (int64_t bi = b0; bi < b1; ++bi) one(gb, bi, mine, nullptr, 1);
      });
      return Status::ok();
    }
    for (int64_t bi = 0; bi < batches; ++bi) one(g, bi, ctx.scratch, ctx.thread_pool, threads);
    return Status::ok();
  }
};

}  // namespace

Result<std::unique_ptr<Kernel>> make_MatMul(const CompileContext& ctx) {
  if (!ctx.has_input(0) || !ctx.has_input(1) || ctx.input(0).dtype != DType::kFloat32 ||
      ctx.input(1).dtype != DType::kFloat32)
    return std::unique_ptr<Kernel>();
  Shape as = ctx.input(0).shape, bs = ctx.input(1).shape;
  if (as.empty() || bs.empty()) return std::unique_ptr<Kernel>();
  TSR_ASSIGN_OR_RETURN(MatMulBatches g, MatMulBatches::of(as, bs));
  auto kern = std::make_unique<MatMulKernel>();
  if (!read_fused_tail(ctx, /*allow_col_bias=*/true, &kern->tail)) return std::unique_ptr<Kernel>();
  kern->m = g.m;
  kern->k = g.k;
  kern->n = g.n;
  if (bs.size() >= 2 && bs[bs.size() - 2] != kern->k) return ctx.error("MatMul inner dimensions differ");
  kern->batches = g.batches;
  kern->threads = ctx.threads;
  kern->isa = cpu::sgemm_best_isa();
  // B shared by every batch and A not broadcast: one tall GEMM.
  kern->fold_batch = g.b_batches == 1 && g.a_batches == kern->batches;
  if (!kern->fold_batch) {
    kern->a_off = std::move(g.a_off);
    kern->b_off = std::move(g.b_off);
  }
  const int64_t gemm_m = kern->fold_batch ? kern->m * kern->batches : kern->m;
  // Weight pre-packing (below): a constant B used by every row of one folded product.
  const auto& bconst = ctx.input(1).constant;
  const bool prepack = kern->fold_batch && bconst && kern->n > 0 && kern->k > 0;
  kern->scratch = cpu::sgemm_scratch_bytes(gemm_m, kern->n, kern->k, kern->threads, kern->isa, prepack);
  // sgemm's own split: a thread per ~2 MFLOP (sgemm.cc); fewer than the threads, and
  // several batches: the batches go over the threads instead.
  const double flops = 2.0 * static_cast<double>(kern->m) * static_cast<double>(kern->n) * static_cast<double>(kern->k);
  if (!kern->fold_batch && kern->batches > 1 && kern->threads > 1 && flops / 2e6 < kern->threads) {
    kern->batch_slots = static_cast<int>(std::min<int64_t>(kern->threads, kern->batches));
    kern->slot_bytes = (cpu::sgemm_scratch_bytes(kern->m, kern->n, kern->k, 1, kern->isa) + 63) / 64 * 64;
    kern->scratch = std::max(kern->scratch, kern->slot_bytes * static_cast<size_t>(kern->batch_slots));
  }
  if (prepack) {
    const size_t floats = cpu::sgemm_packed_b_floats(kern->n, kern->k, kern->isa);
    void* mem = std::aligned_alloc(64, (floats * sizeof(float) + 63) / 64 * 64);
    if (!mem) return out_of_memory(ctx.node.describe() + ": cannot allocate the packed weight");
    kern->packed.data.reset(static_cast<float*>(mem));
    cpu::sgemm_pack_b(bconst->data_as<float>(), kern->n, false, kern->k, kern->n, kern->isa, kern->packed.data.get());
  }
  return std::unique_ptr<Kernel>(std::move(kern));
}

}  // namespace tessera::x86
