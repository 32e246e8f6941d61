// Gemm on the packed SGEMM (ONNX Gemm-7/9/11/13), float32:
//   Y = alpha * A' B' + beta * C,  A' = transA ? A^T : A (M x K), B' = transB ? B^T : B (K x N)
// C (optional) broadcasts to M x N. C of shape [N] or [1, N] with beta == 1 is the GEMM's
// bias (added in the micro-kernel's epilogue); any other C is first copied, broadcast, into
// Y, and the GEMM then computes Y = alpha * A'B' + beta * Y. A B known at plan time is packed
// once here, into the kernel's own immutable storage (weight pre-packing).
#include <cstdlib>
#include <cstring>
#include <memory>
#include <utility>

#include "backends/cpu/thread_pool.h"
#include "backends/cpu/x86/elementwise_x86.h"
#include "backends/cpu/x86/fused_tail.h"
#include "backends/cpu/x86/sgemm.h"
#include "backends/cpu/x86/x86_kernels.h"

namespace tessera::x86 {

namespace {

class GemmKernel final : public Kernel {
 public:
  int64_t m = 0, n = 0, k = 0;
  bool ta = false, tb = false;
  float alpha = 1.f, beta = 1.f;
  enum class CMode { kNone, kBias, kPrefill } c_mode = CMode::kNone;
  int64_t c_si = 0, c_sj = 0;  // C's strides along M and N (0 where broadcast)
  int threads = 1;
  cpu::SgemmIsa isa = cpu::SgemmIsa::kAuto;
  std::unique_ptr<float[], void (*)(float*)> packed{nullptr, [](float* p) { std::free(p); }};
  FusedTail tail;  // fused residual / activation (a bias row only when C is absent)
  size_t scratch = 0;

  size_t scratch_bytes() const override { return scratch; }
  Status run(const KernelContext& ctx) const override {
    float* y = ctx.output(0).data_as<float>();
    cpu::SgemmArgs g;
    g.m = m;
    g.n = n;
    g.k = k;
    g.a = ctx.input(0).data_as<float>();
    g.lda = ta ? m : k;
    g.trans_a = ta;
    g.b = ctx.input(1).data_as<float>();
    g.ldb = tb ? k : n;
    g.trans_b = tb;
    g.packed_b = packed.get();
    g.c = y;
    g.ldc = n;
    g.alpha = alpha;
    g.beta = 0.f;
    g.isa = isa;
    g.bias = tail.col_bias_data(ctx);
    g.addend = tail.addend_data(ctx);
    g.ld_addend = n;
    g.act = tail.act;
    if (c_mode == CMode::kBias) {
      g.bias = ctx.input(2).data_as<float>();
    } else if (c_mode == CMode::kPrefill) {
      const float* c = ctx.input(2).data_as<float>();
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) y[i * n + j] = c[i * c_si + j * c_sj];
      g.beta = beta;
    }
    cpu::sgemm(g, ctx.scratch, ctx.thread_pool, threads);
    return Status::ok();
  }
};

}  // namespace

Result<std::unique_ptr<Kernel>> make_Gemm(const CompileContext& ctx) {
  if (!ctx.has_input(0) || !ctx.has_input(1) || ctx.input(0).dtype != DType::kFloat32 ||
      ctx.input(1).dtype != DType::kFloat32 || ctx.input(0).shape.size() != 2 || ctx.input(1).shape.size() != 2)
    return std::unique_ptr<Kernel>();
  // The node's own C (a fused addend or bias row sits after the node's inputs, maybe at 2).
  const bool has_c = ctx.node.inputs.size() > 2 && ctx.has_input(2);
  if (has_c && (ctx.input(2).dtype != DType::kFloat32 || ctx.input(2).shape.size() > 2))
    return std::unique_ptr<Kernel>();
  const Shape& as = ctx.input(0).shape;
  const Shape& bs = ctx.input(1).shape;
  auto kern = std::make_unique<GemmKernel>();
  if (!read_fused_tail(ctx, /*allow_col_bias=*/true, &kern->tail)) return std::unique_ptr<Kernel>();
  kern->ta = ctx.node.attr_i("transA", 0) != 0;
  kern->tb = ctx.node.attr_i("transB", 0) != 0;
  kern->alpha = ctx.node.attr_f("alpha", 1.f);
  kern->beta = ctx.node.attr_f("beta", 1.f);
  kern->m = kern->ta ? as[1] : as[0];
  kern->k = kern->ta ? as[0] : as[1];
  kern->n = kern->tb ? bs[0] : bs[1];
  if ((kern->tb ? bs[1] : bs[0]) != kern->k) return ctx.error("Gemm inner dimensions differ");
  if (has_c && kern->beta != 0.f) {
    Shape cs = ctx.input(2).shape;
    while (cs.size() < 2) cs.insert(cs.begin(), 1);
    if ((cs[0] != 1 && cs[0] != kern->m) || (cs[1] != 1 && cs[1] != kern->n))
      return ctx.error("C of shape " + shape_to_string(ctx.input(2).shape) + " does not broadcast to [" +
                       std::to_string(kern->m) + ", " + std::to_string(kern->n) + "]");
    kern->c_sj = cs[1] == 1 ? 0 : 1;
    kern->c_si = cs[0] == 1 ? 0 : cs[1];
    const bool row_vector = cs[0] == 1 && (cs[1] == kern->n);
    kern->c_mode = row_vector && kern->beta == 1.f ? GemmKernel::CMode::kBias : GemmKernel::CMode::kPrefill;
  }
  if (kern->tail.col_bias >= 0 && kern->c_mode != GemmKernel::CMode::kNone) return std::unique_ptr<Kernel>();
  kern->threads = ctx.threads;
  kern->isa = cpu::sgemm_best_isa();
  const auto& bconst = ctx.input(1).constant;
  const bool prepack = bconst && kern->n > 0 && kern->k > 0;  // B packed once, below
  kern->scratch = cpu::sgemm_scratch_bytes(kern->m, kern->n, kern->k, kern->threads, kern->isa, prepack);
  if (prepack) {
    const size_t floats = cpu::sgemm_packed_b_floats(kern->n, kern->k, kern->isa);
    void* mem = std::aligned_alloc(64, (floats * sizeof(float) + 63) / 64 * 64);
    if (!mem) return out_of_memory(ctx.node.describe() + ": cannot allocate the packed weight");
    kern->packed.reset(static_cast<float*>(mem));
    cpu::sgemm_pack_b(bconst->data_as<float>(), kern->tb ? kern->k : kern->n, kern->tb, kern->k, kern->n, kern->isa,
                      kern->packed.get());
  }
  return std::unique_ptr<Kernel>(std::move(kern));
}

bool takes_epilogue(const std::string& op_type) { return op_type == "Conv" || op_type == "MatMul" || op_type == "Gemm"; }

// The x86 kernel table, only on x86-64: this file (MatMul, Gemm) is also built on aarch64,
// where backends/cpu/arm/arm_kernels.cc lists the kernels.
#if defined(__x86_64__) || defined(_M_X64)
KernelFactory find_x86_kernel(const std::string& op_type) {
  if (op_type == "MatMul") return &make_MatMul;
  if (op_type == "Gemm") return &make_Gemm;
  if (op_type == "Conv") return &make_Conv;
  // pool_x86.cc, softmax_x86.cc, norm_x86.cc, reduce_x86.cc, transpose_x86.cc, resize_x86.cc
  static const std::pair<const char*, KernelFactory> kMore[] = {
      {"MaxPool", &make_MaxPool},       {"AveragePool", &make_AveragePool}, {"GlobalMaxPool", &make_GlobalMaxPool},
      {"GlobalAveragePool", &make_GlobalAveragePool}, {"Softmax", &make_Softmax}, {"LogSoftmax", &make_LogSoftmax},
      {"LayerNormalization", &make_LayerNormalization}, {"ReduceSum", &make_ReduceSum},
      {"ReduceMean", &make_ReduceMean}, {"ReduceMax", &make_ReduceMax}, {"Transpose", &make_Transpose},
      {"Resize", &make_Resize}, {"Pad", &make_Pad}};
  for (const auto& [name, f] : kMore)
    if (op_type == name) return f;
  if (op_type == "ConvTranspose") return &make_ConvTranspose;
  if (op_type == "LSTM") return &make_LSTM;
  return find_x86_elementwise_kernel(op_type);
}
#endif

}  // namespace tessera::x86
