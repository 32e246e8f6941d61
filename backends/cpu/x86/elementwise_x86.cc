// Float32 elementwise kernels for x86 and aarch64 (see elementwise_x86.h): plan-time checks of the
// node, run-time broadcasting in contiguous runs (broadcast_runs.h), the output split over
// the thread pool, and the per-ISA core (elementwise_avx512.cc, elementwise_avx2.cc,
// ../arm/elementwise_neon.cc) on
// each run. ONNX versions: Add/Sub/Mul/Div-7/13/14, Max/Min-8/12/13, PRelu-9/16,
// Pow-7/12/13/15, Relu-6/13/14, LeakyRelu-6/16, Clip-6/11/12/13, Sigmoid-6/13,
// HardSigmoid-6/22, HardSwish-14/22, Tanh-6/13, Exp-6/13, Erf-9/13, Gelu-20,
// Sqrt-6/13, Neg-6/13, Abs-6/13; the semantics (NaN, -0, absent Clip bounds) are those of
// the reference kernels in backends/cpu/ref/, which the tests compare against.
#include "backends/cpu/x86/elementwise_x86.h"

#include <cfloat>
#include <cmath>
#include <cstring>

#include "backends/cpu/broadcast_runs.h"
#include "backends/cpu/thread_pool.h"

namespace tessera::cpu {

const char* elementwise_isa_name(ElementwiseIsa isa) {
  switch (isa) {
    case ElementwiseIsa::kAvx512: return "avx512";
    case ElementwiseIsa::kAvx2: return "avx2";
    case ElementwiseIsa::kNeon: return "neon";
    default: return "auto";
  }
}

#if defined(__x86_64__) || defined(_M_X64)
bool elementwise_isa_available(ElementwiseIsa isa) {
  const bool avx512 = __builtin_cpu_supports("avx512f");
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  switch (isa) {
    case ElementwiseIsa::kAvx512: return avx512;
    case ElementwiseIsa::kAvx2: return avx2;
    case ElementwiseIsa::kNeon: return false;
    default: return avx512 || avx2;
  }
}

ElementwiseCore elementwise_core(ElementwiseIsa isa) {
  if (isa == ElementwiseIsa::kAuto)
    isa = elementwise_isa_available(ElementwiseIsa::kAvx512) ? ElementwiseIsa::kAvx512 : ElementwiseIsa::kAvx2;
  return isa == ElementwiseIsa::kAvx512 ? elementwise_core_avx512() : elementwise_core_avx2();
}
#elif defined(__aarch64__)
// AdvSIMD is part of the aarch64 base ISA.
bool elementwise_isa_available(ElementwiseIsa isa) { return isa == ElementwiseIsa::kNeon || isa == ElementwiseIsa::kAuto; }

ElementwiseCore elementwise_core(ElementwiseIsa) { return elementwise_core_neon(); }
#endif

}  // namespace tessera::cpu

namespace tessera::x86 {

namespace {

using cpu::BinaryOp;
using cpu::UnaryOp;

// Elements per thread below which another thread does not pay. A cheap op streams 25-30
// GB/s on one core of this machine (measured: Relu and Mul on 322K and 803K floats, 80-280
// us) while the data, just written by the previous op, sits in that core's caches; a second
// thread must first be woken and then pull half the data from the other core. Measured on
// the 2-core development machine (tessera bench --profile, 2 threads, elementwise split at
// 16K elements per task vs not split): PP-OCR rec Mul 33-39 ms vs 12.6 ms, ResNet-50 Relu
// 26-70 ms vs 5-8 ms. So cheap ops split only tensors far beyond the L2 caches (4 MB per
// task); the transcendental ops (~1-2 ns per element) split at 64K elements (~100 us).
constexpr int64_t kMinChunkCheap = int64_t{1} << 20;
constexpr int64_t kMinChunkExpensive = int64_t{1} << 16;

bool expensive(UnaryOp op) {
  switch (op) {
    case UnaryOp::kSigmoid: case UnaryOp::kTanh: case UnaryOp::kExp: case UnaryOp::kErf:
    case UnaryOp::kGeluErf: case UnaryOp::kGeluTanh:
      return true;
    default:
      return false;
  }
}

/// Calls f(begin, end) on at most `threads` disjoint ranges covering [0, n), each at least
/// min_chunk elements (except when n is smaller) and starting on a multiple of 16 elements
/// (a 64-byte line, so no two threads write one cache line of aligned outputs).
template <typename F>
void split_output(ThreadPool* pool, int threads, int64_t n, int64_t min_chunk, F&& f) {
  int64_t tasks = n / min_chunk;
  if (tasks > threads) tasks = threads;
  if (tasks <= 1 || pool == nullptr) {
    f(int64_t{0}, n);
    return;
  }
  pool->parallel_for(tasks, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t b = t == 0 ? 0 : (n / tasks * t) & ~int64_t{15};
      const int64_t e = t + 1 == tasks ? n : (n / tasks * (t + 1)) & ~int64_t{15};
      f(b, e);
    }
  });
}

class BinaryKernel final : public Kernel {
 public:
  BinaryKernel(BinaryOp op, cpu::ElementwiseCore core, int threads) : op_(op), core_(core), threads_(threads) {}

  Status run(const KernelContext& ctx) const override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    Tensor& y = ctx.output(0);
    cpu::BroadcastRuns br;
    if (!br.init(y.shape(), a.shape(), b.shape()))
      return invalid_argument("inputs of shapes " + shape_to_string(a.shape()) + " and " + shape_to_string(b.shape()) +
                              " do not broadcast to the output's " + shape_to_string(y.shape()));
    if (br.numel() == 0) return Status::ok();
    const float* pa = a.data_as<float>();
    const float* pb = b.data_as<float>();
    float* py = y.data_as<float>();
    split_output(ctx.thread_pool, threads_, br.numel(), kMinChunkCheap, [&](int64_t begin, int64_t end) {
      br.for_each_run(begin, end, [&](int64_t ia, int64_t ib, int64_t iy, int64_t n, int64_t sa, int64_t sb) {
        core_.binary(op_, pa + ia, sa, pb + ib, sb, py + iy, n);
      });
    });
    return Status::ok();
  }

 private:
  BinaryOp op_;
  cpu::ElementwiseCore core_;
  int threads_;
};

class UnaryKernel final : public Kernel {
 public:
  /// clip_inputs: Clip-11+, whose bounds are inputs 1 and 2 (optional), read at run time.
  UnaryKernel(UnaryOp op, cpu::UnaryParams p, bool clip_inputs, cpu::ElementwiseCore core, int threads)
      : op_(op), params_(p), clip_inputs_(clip_inputs), core_(core), threads_(threads) {}

  Status run(const KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    if (y.numel() != x.numel())
      return invalid_argument("output of shape " + shape_to_string(y.shape()) + " does not hold the input's " +
                              std::to_string(x.numel()) + " elements");
    cpu::UnaryParams p = params_;
    if (clip_inputs_) {  // absent bound: the float range, as the reference (-inf becomes -FLT_MAX)
      p.alpha = ctx.has_input(1) ? ctx.input(1).data_as<float>()[0] : -FLT_MAX;
      p.beta = ctx.has_input(2) ? ctx.input(2).data_as<float>()[0] : FLT_MAX;
    }
    const float* px = x.data_as<float>();
    float* py = y.data_as<float>();
    split_output(ctx.thread_pool, threads_, x.numel(), expensive(op_) ? kMinChunkExpensive : kMinChunkCheap,
                 [&](int64_t begin, int64_t end) { core_.unary(op_, p, px + begin, py + begin, end - begin); });
    return Status::ok();
  }

 private:
  UnaryOp op_;
  cpu::UnaryParams params_;
  bool clip_inputs_;
  cpu::ElementwiseCore core_;
  int threads_;
};

struct OpEntry {
  const char* name;
  bool binary;
  BinaryOp bop;
  UnaryOp uop;
};

constexpr OpEntry kOps[] = {
    {"Add", true, BinaryOp::kAdd, UnaryOp::kCopy},
    {"Sub", true, BinaryOp::kSub, UnaryOp::kCopy},
    {"Mul", true, BinaryOp::kMul, UnaryOp::kCopy},
    {"Div", true, BinaryOp::kDiv, UnaryOp::kCopy},
    {"Max", true, BinaryOp::kMax, UnaryOp::kCopy},
    {"Min", true, BinaryOp::kMin, UnaryOp::kCopy},
    {"PRelu", true, BinaryOp::kPRelu, UnaryOp::kCopy},
    {"Pow", false, BinaryOp::kAdd, UnaryOp::kCopy},  // the exponent picks the unary op
    {"Relu", false, BinaryOp::kAdd, UnaryOp::kRelu},
    {"LeakyRelu", false, BinaryOp::kAdd, UnaryOp::kLeakyRelu},
    {"Clip", false, BinaryOp::kAdd, UnaryOp::kClip},
    {"Sigmoid", false, BinaryOp::kAdd, UnaryOp::kSigmoid},
    {"HardSigmoid", false, BinaryOp::kAdd, UnaryOp::kHardSigmoid},
    {"HardSwish", false, BinaryOp::kAdd, UnaryOp::kHardSwish},
    {"Tanh", false, BinaryOp::kAdd, UnaryOp::kTanh},
    {"Exp", false, BinaryOp::kAdd, UnaryOp::kExp},
    {"Erf", false, BinaryOp::kAdd, UnaryOp::kErf},
    {"Gelu", false, BinaryOp::kAdd, UnaryOp::kGeluErf},  // approximate="tanh": kGeluTanh
    {"Sqrt", false, BinaryOp::kAdd, UnaryOp::kSqrt},
    {"Neg", false, BinaryOp::kAdd, UnaryOp::kNeg},
    {"Abs", false, BinaryOp::kAdd, UnaryOp::kAbs},
};

const OpEntry* find_op(const std::string& op_type) {
  for (const OpEntry& e : kOps)
    if (op_type == e.name) return &e;
  return nullptr;
}

bool is_f32(const CompileContext& ctx, size_t i) { return ctx.has_input(i) && ctx.input(i).dtype == DType::kFloat32; }

/// Pow's exponent when it is one plan-time constant scalar, as a double; NaN otherwise.
double constant_exponent(const CompileContext& ctx) {
  if (!ctx.has_input(1) || !ctx.input(1).constant || ctx.input(1).constant->numel() != 1) return NAN;
  const Tensor& e = *ctx.input(1).constant;
  switch (e.dtype()) {
    case DType::kFloat32: return e.data_as<float>()[0];
    case DType::kFloat64: return e.data_as<double>()[0];
    case DType::kInt32: return e.data_as<int32_t>()[0];
    case DType::kInt64: return static_cast<double>(e.data_as<int64_t>()[0]);
    default: return NAN;
  }
}

}  // namespace

Result<std::unique_ptr<Kernel>> make_elementwise(const CompileContext& ctx, cpu::ElementwiseIsa isa) {
  const OpEntry* e = find_op(ctx.node.op_type);
  // A fused tail (CompileContext::epilogue) is for Conv/MatMul/Gemm only (takes_epilogue); declined here.
  if (!e || !cpu::elementwise_isa_available(isa) || ctx.epilogue) return std::unique_ptr<Kernel>();
  if (ctx.outputs.size() != 1 || ctx.outputs[0].dtype != DType::kFloat32 || !is_f32(ctx, 0))
    return std::unique_ptr<Kernel>();
  const cpu::ElementwiseCore core = cpu::elementwise_core(isa);
  const int threads = ctx.threads < 1 ? 1 : ctx.threads;
  const Shape& out = ctx.outputs[0].shape;
  if (e->binary) {
    if (ctx.inputs.size() != 2 || !is_f32(ctx, 1)) return std::unique_ptr<Kernel>();
    cpu::BroadcastRuns br;
    // Shapes that do not broadcast (the schema reports those) or too many alternating dims:
    // the reference kernel takes the node.
    if (!br.init(out, ctx.input(0).shape, ctx.input(1).shape)) return std::unique_ptr<Kernel>();
    return std::unique_ptr<Kernel>(new BinaryKernel(e->bop, core, threads));
  }
  UnaryOp op = e->uop;
  cpu::UnaryParams p;
  bool clip_inputs = false;
  const std::string& t = ctx.node.op_type;
  if (t == "Pow") {
    const double ex = constant_exponent(ctx);
    if (ex == 2.0) op = UnaryOp::kSquare;
    else if (ex == 0.5) op = UnaryOp::kPowHalf;
    else if (ex == 1.0) op = UnaryOp::kCopy;
    else return std::unique_ptr<Kernel>();
  } else if (t == "LeakyRelu") {
    p.alpha = ctx.node.attr_f("alpha", 0.01f);
  } else if (t == "HardSigmoid") {
    p.alpha = ctx.node.attr_f("alpha", 0.2f);
    p.beta = ctx.node.attr_f("beta", 0.5f);
  } else if (t == "Clip") {
    if (ctx.node.opset < 11) {
      p.alpha = ctx.node.attr_f("min", -INFINITY);
      p.beta = ctx.node.attr_f("max", INFINITY);
    } else {
      if ((ctx.has_input(1) && !is_f32(ctx, 1)) || (ctx.has_input(2) && !is_f32(ctx, 2))) return std::unique_ptr<Kernel>();
      clip_inputs = true;
    }
  } else if (t == "Gelu") {
    const std::string approx = ctx.node.attr_s("approximate", "none");
    if (approx == "tanh") op = UnaryOp::kGeluTanh;
    else if (approx != "none") return std::unique_ptr<Kernel>();
  }
  return std::unique_ptr<Kernel>(new UnaryKernel(op, p, clip_inputs, core, threads));
}

namespace {
Result<std::unique_ptr<Kernel>> make_elementwise_auto(const CompileContext& ctx) {
  return make_elementwise(ctx, cpu::ElementwiseIsa::kAuto);
}
}  // namespace

KernelFactory find_x86_elementwise_kernel(const std::string& op_type) {
  return find_op(op_type) ? &make_elementwise_auto : nullptr;
}

}  // namespace tessera::x86
