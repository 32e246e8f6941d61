// The CPU backend. Per node, at compile (plan) time: an optimized kernel for this ISA when
// one exists and takes the node's dtypes and shapes (x86-64: find_x86_kernel; aarch64:
// find_arm_kernel, e.g. MatMul, Gemm and Conv in float32 on the packed SGEMM with its NEON
// micro-kernel), else the reference kernel.
#include <unordered_map>

#include "backends/backend.h"
#include "backends/cpu/ref/ref_kernels.h"
#if defined(__x86_64__) || defined(_M_X64)
#include "backends/cpu/x86/x86_kernels.h"
#define TSR_CPU_X86 1
#elif defined(__aarch64__)
#include "backends/cpu/arm/arm_kernels.h"
#define TSR_CPU_ARM 1
#endif

namespace tessera {

namespace ref {

KernelFactory find_ref_kernel(const std::string& op_type) {
  static const std::unordered_map<std::string, KernelFactory> kTable = {
#define TSR_OP(name) {#name, &make_##name},
#include "runtime/ops/op_list.def"
#undef TSR_OP
  };
  auto it = kTable.find(op_type);
  return it == kTable.end() ? nullptr : it->second;
}

std::vector<int64_t> contiguous_strides(const Shape& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * shape[i + 1];
  return s;
}

}  // namespace ref

namespace {

class CpuBackend final : public Backend {
 public:
  std::string name() const override { return "cpu"; }
  bool supports(const CompileContext& ctx) const override {
    return (ctx.node.domain.empty() || ctx.node.domain == "ai.onnx") &&
           ref::find_ref_kernel(ctx.node.op_type) != nullptr;
  }
  Result<std::unique_ptr<Kernel>> compile(const CompileContext& ctx) const override {
#ifdef TSR_CPU_X86
    if (ctx.nchwc_output || ctx.nchwc_inputs) return x86::make_nchwc_kernel(ctx);
    if (KernelFactory opt = x86::find_x86_kernel(ctx.node.op_type)) {
      // A fused tail only reaches the optimized kernels that apply it.
      if (ctx.epilogue && !x86::takes_epilogue(ctx.node.op_type)) return std::unique_ptr<Kernel>();
      TSR_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> k, opt(ctx));
      if (k || ctx.epilogue) return k;  // null: the optimized kernel declined this node
    }
#endif
#ifdef TSR_CPU_ARM
    if (KernelFactory opt = arm::find_arm_kernel(ctx.node.op_type)) {
      if (ctx.epilogue && !arm::takes_epilogue(ctx.node.op_type)) return std::unique_ptr<Kernel>();
      TSR_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> k, opt(ctx));
      if (k || ctx.epilogue) return k;
    }
#endif
    if (ctx.nchwc_output || ctx.nchwc_inputs)
      return internal_error(ctx.node.describe() + ": NCHW16c asked of a CPU without it");
    if (ctx.epilogue) return std::unique_ptr<Kernel>();  // the reference kernels take no fused tail
    KernelFactory f = ref::find_ref_kernel(ctx.node.op_type);
    if (!f) return unimplemented(ctx.node.describe() + ": no CPU kernel for op " + ctx.node.op_type);
    return f(ctx);
  }
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

int cpu_nchwc_mode(const CompileContext& ctx) {
#ifdef TSR_CPU_X86
  return x86::nchwc_mode(ctx);
#else
  (void)ctx;
  return 0;
#endif
}

std::unique_ptr<Kernel> make_cpu_nchwc_reorder(const Shape& shape, bool to_blocked, int threads) {
#ifdef TSR_CPU_X86
  return x86::make_nchwc_reorder(shape, to_blocked, threads);
#else
  (void)shape, (void)to_blocked, (void)threads;
  return nullptr;  // never asked: nothing is blocked where cpu_nchwc_mode is 0
#endif
}

Shape nchwc_storage_shape(const Shape& shape) {
  Shape b = shape;
  b[1] = (shape[1] + 15) / 16;
  b.push_back(16);
  return b;
}

#ifdef TESSERA_WITH_CUDA
Result<std::unique_ptr<Backend>> make_cuda_backend();  // backends/cuda/cuda_backend.cc
#endif
#ifdef TESSERA_WITH_VULKAN
Result<std::unique_ptr<Backend>> make_vulkan_backend();  // backends/vulkan/vk_backend.cc
#endif
#if defined(TESSERA_WITH_CUDA) && defined(TESSERA_WITH_VULKAN)
constexpr const char* kAvailable = "cpu, cuda, vulkan";
#elif defined(TESSERA_WITH_CUDA)
constexpr const char* kAvailable = "cpu, cuda";
#elif defined(TESSERA_WITH_VULKAN)
constexpr const char* kAvailable = "cpu, vulkan";
#else
constexpr const char* kAvailable = "cpu";
#endif

Result<std::unique_ptr<Backend>> make_backend(const std::string& name) {
  if (name == "cpu") return make_cpu_backend();
#ifdef TESSERA_WITH_CUDA
  if (name == "cuda") return make_cuda_backend();
#else
  if (name == "cuda") return unimplemented("backend 'cuda' is not built (configure with -DTESSERA_WITH_CUDA=ON)");
#endif
#ifdef TESSERA_WITH_VULKAN
  if (name == "vulkan") return make_vulkan_backend();
#else
  if (name == "vulkan") return unimplemented("backend 'vulkan' is not built (configure with -DTESSERA_WITH_VULKAN=ON; needs libvulkan-dev and glslc)");
#endif
  return invalid_argument("unknown backend '" + name + "' (available: " + std::string(kAvailable) + ")");
}

}  // namespace tessera
