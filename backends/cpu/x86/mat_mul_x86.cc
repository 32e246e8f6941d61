// MatMul on the packed SGEMM (ONNX MatMul-1/9/13, numpy.matmul semantics), float32:
// for each broadcast batch index, Y[m, n] = sum_k A[m, k] * B[k, n].
// A 1-D A is a 1 x K row, a 1-D B a K x 1 column (their dims are dropped from Y by the
// schema; Y's bytes are the same). When B has no batch dims (a weight), A's batch dims fold
// into M: one GEMM of (batch * M) x K by K x N. A B known at plan time is packed once here,
// into the kernel's own immutable storage (weight pre-packing).
#include <cstdlib>
#include <memory>
#include <vector>

#include "backends/cpu/thread_pool.h"
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
  size_t scratch = 0;

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
    if (fold_batch) {
      g.m = m * batches;
      g.a = a;
      g.b = b;
      g.c = y;
      cpu::sgemm(g, ctx.scratch, ctx.thread_pool, threads);
      return Status::ok();
    }
    g.m = m;
    for (int64_t bi = 0; bi < batches; ++bi) {
      g.a = a + a_off[static_cast<size_t>(bi)];
      g.b = b + b_off[static_cast<size_t>(bi)];
      g.c = y + bi * m * n;
      cpu::sgemm(g, ctx.scratch, ctx.thread_pool, threads);
    }
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
  if (as.size() == 1) as.insert(as.begin(), 1);
  if (bs.size() == 1) bs.push_back(1);
  auto kern = std::make_unique<MatMulKernel>();
  kern->m = as[as.size() - 2];
  kern->k = as.back();
  kern->n = bs.back();
  if (bs[bs.size() - 2] != kern->k) return ctx.error("MatMul inner dimensions differ");
  const Shape a_batch(as.begin(), as.end() - 2), b_batch(bs.begin(), bs.end() - 2);
  TSR_ASSIGN_OR_RETURN(Shape batch, broadcast_shapes(a_batch, b_batch));
  for (int64_t d : batch) kern->batches *= d;
  kern->threads = ctx.threads;
  kern->isa = cpu::sgemm_best_isa();
  int64_t b_batches = 1;
  for (int64_t d : b_batch) b_batches *= d;
  int64_t a_batches = 1;
  for (int64_t d : a_batch) a_batches *= d;
  // B shared by every batch and A not broadcast: one tall GEMM.
  kern->fold_batch = b_batches == 1 && a_batches == kern->batches;
  if (!kern->fold_batch) {
    const size_t r = batch.size();
    auto batch_strides = [&](const Shape& own, int64_t matrix_size) {
      Shape full(r - own.size(), 1);
      full.insert(full.end(), own.begin(), own.end());
      std::vector<int64_t> st(r, 0);
      int64_t s = matrix_size;
      for (size_t d = r; d-- > 0;) {
        st[d] = full[d] == 1 ? 0 : s;
        s *= full[d];
      }
      return st;
    };
    const std::vector<int64_t> a_st = batch_strides(a_batch, kern->m * kern->k), b_st = batch_strides(b_batch, kern->k * kern->n);
    kern->a_off.resize(static_cast<size_t>(kern->batches));
    kern->b_off.resize(static_cast<size_t>(kern->batches));
    for (int64_t i = 0; i < kern->batches; ++i) {
      int64_t rem = i, ao = 0, bo = 0;
      for (size_t d = r; d-- > 0;) {
        const int64_t coord = rem % batch[d];
        rem /= batch[d];
        ao += coord * a_st[d];
        bo += coord * b_st[d];
      }
      kern->a_off[static_cast<size_t>(i)] = ao;
      kern->b_off[static_cast<size_t>(i)] = bo;
    }
  }
  const int64_t gemm_m = kern->fold_batch ? kern->m * kern->batches : kern->m;
  kern->scratch = cpu::sgemm_scratch_bytes(gemm_m, kern->n, kern->k, kern->threads, kern->isa);
  // Weight pre-packing: a constant B used by every row of a large enough product.
  const auto& bconst = ctx.input(1).constant;
  if (kern->fold_batch && bconst && kern->n > 0 && kern->k > 0) {
    const size_t floats = cpu::sgemm_packed_b_floats(kern->n, kern->k, kern->isa);
    void* mem = std::aligned_alloc(64, (floats * sizeof(float) + 63) / 64 * 64);
    if (!mem) return out_of_memory(ctx.node.describe() + ": cannot allocate the packed weight");
    kern->packed.data.reset(static_cast<float*>(mem));
    cpu::sgemm_pack_b(bconst->data_as<float>(), kern->n, false, kern->k, kern->n, kern->isa, kern->packed.data.get());
  }
  return std::unique_ptr<Kernel>(std::move(kern));
}

}  // namespace tessera::x86
