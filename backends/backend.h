// The backend interface. A backend says which nodes it supports, compiles a node (with its
// concrete input/output shapes) into a Kernel, and owns its device buffers and copies.
// Kernels hold no mutable state and never allocate: scratch memory is declared at compile
// time (scratch_bytes) and handed in by the executor from the plan's arena.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/ops/op_schema.h"
#include "tessera/graph.h"
#include "tessera/status.h"
#include "tessera/tensor.h"

namespace tessera {

class ThreadPool;  // backends/cpu/thread_pool.h

/// What a kernel sees when it runs. Tensors are host tensors for the CPU backend; for a
/// backend with host_memory() == false their data pointers (and scratch) are device memory.
struct KernelContext {
  std::vector<const Tensor*> inputs;   // nullptr: an omitted optional input
  std::vector<Tensor*> outputs;        // shapes set, buffers bound by the executor
  void* scratch = nullptr;             // scratch_bytes() bytes, 64-byte aligned
  /// The Session's CPU thread pool (owned by the Session, threads persist across runs);
  /// nullptr: run on the calling thread. Kernels split work with parallel_for(pool, ...).
  ThreadPool* thread_pool = nullptr;
  bool has_input(size_t i) const { return i < inputs.size() && inputs[i] != nullptr; }
  const Tensor& input(size_t i) const { return *inputs[i]; }
  Tensor& output(size_t i) const { return *outputs[i]; }
};

/// A compiled node: attributes parsed and shapes fixed at plan time.
class Kernel {
 public:
  virtual ~Kernel() = default;
  /// Scratch memory this kernel needs per run, in bytes.
  virtual size_t scratch_bytes() const { return 0; }
  virtual Status run(const KernelContext& ctx) const = 0;
  /// The index of an input whose memory output 0 may take over when this step is that
  /// input's last use (same dtype and byte size; the kernel reads each of its elements
  /// before it writes the same element of output 0, on the same thread, and reads no other
  /// element after writing it), e.g. a fused residual that the output accumulates onto in
  /// place; -1: none. The planner decides; the kernel must work either way.
  virtual int output_may_alias_input() const { return -1; }
  /// The method, when a node's op has several (e.g. "Winograd F(4x4, 3x3) on NCHW16c"), for
  /// the plan's placement lines (`tessera run -v`); nullptr: nothing to say.
  virtual const char* algorithm() const { return nullptr; }
};

/// An activation the planner fused into the node that produces its input (see Epilogue).
/// The math is the ONNX op's (opset 6+ Relu, LeakyRelu, Clip, Sigmoid, HardSigmoid, Tanh;
/// opset 14 HardSwish; opset 20 Gelu with approximate "none"), evaluated in float.
struct FusedActivation {
  enum class Kind { kNone, kRelu, kLeakyRelu, kClip, kSigmoid, kHardSigmoid, kHardSwish, kTanh, kGelu };
  Kind kind = Kind::kNone;
  /// LeakyRelu: alpha; Clip: [alpha, beta] = [min, max]; HardSigmoid: alpha, beta.
  float alpha = 0.f, beta = 0.f;
  /// A scalar affine map after the activation, y = act(x) * scale + shift (a fused Mul and
  /// Add of plan-time scalars, e.g. PP-OCR's learnable affine blocks); evaluated as one
  /// fused multiply-add where the target has one, else a multiply and an add.
  float scale = 1.f, shift = 0.f;
  bool has_affine() const { return scale != 1.f || shift != 0.f; }
  float apply(float x) const;
  /// Applies the activation (and the affine map) to n contiguous floats in place.
  void apply(float* x, int64_t n) const;
  /// The activation alone (no affine map), in place.
  void apply_activation(float* x, int64_t n) const;
};

/// An elementwise tail that the planner fused onto a Conv, MatMul or Gemm node whose output
/// had no other use: out = act(y + addend), with y the node's own result. Only backends
/// whose kernels take it see it (CompileContext::epilogue); the planner plans the nodes one
/// by one otherwise.
struct Epilogue {
  /// Index, in CompileContext::inputs and KernelContext::inputs, of a float tensor of the
  /// output's exact shape and layout added elementwise (a fused Add: a residual); -1: none.
  /// It sits after the node's own inputs.
  int addend_input = -1;
  /// Index of a float tensor of N values, N the output's last dim (shape [N] or
  /// [1, ..., 1, N]), added to every row (a fused bias Add); -1: none. It sits after the
  /// node's own inputs too.
  int col_bias_input = -1;
  FusedActivation act;
  /// The fused nodes, in order (for reports and errors).
  std::vector<const Node*> nodes;
  bool empty() const {
    return addend_input < 0 && col_bias_input < 0 && act.kind == FusedActivation::Kind::kNone;
  }
};

/// What compile() gets: the node and the plan-time facts about its inputs and outputs.
struct CompileContext {
  const Node& node;
  const std::vector<const ValueInfo*>& inputs;  // nullptr: omitted optional input
  const std::vector<ValueInfo>& outputs;
  /// Threads the run-time pool will have (>= 1): kernels size per-thread scratch with it.
  /// A run given a pool with more threads uses only this many.
  int threads = 1;
  /// Non-null: the planner fused this tail onto the node (the output shapes are then the
  /// tail's, equal to the node's own). A kernel that cannot apply it must decline (the CPU
  /// backend returns a null kernel, and the planner plans the nodes separately).
  const Epilogue* epilogue = nullptr;
  /// The CPU's blocked layout NCHW16c (backends/cpu/x86/conv_nchwc.h): set by the planner
  /// only for a node cpu_nchwc_mode took: nchwc_output when its output is to be blocked
  /// (mode 1); bit i of nchwc_inputs says input i (in `inputs`) is blocked.
  bool nchwc_output = false;
  uint32_t nchwc_inputs = 0;
  bool has_input(size_t i) const { return i < inputs.size() && inputs[i] != nullptr; }
  const ValueInfo& input(size_t i) const { return *inputs[i]; }
  Status error(const std::string& msg) const { return invalid_argument(node.describe() + ": " + msg); }
  Status unsupported(const std::string& msg) const { return unimplemented(node.describe() + ": " + msg); }
  /// The plan-time value of int32/int64 input `i` (a shape-like input the schema already
  /// required to be known when planning). Errors: unimplemented if it is not known,
  /// invalid_argument for another dtype.
  Result<std::vector<int64_t>> constant_ints(size_t i) const {
    if (!has_input(i) || !input(i).constant) return unsupported("input " + std::to_string(i) + " must be known when planning");
    const Tensor& t = *input(i).constant;
    std::vector<int64_t> v(static_cast<size_t>(t.numel()));
    for (int64_t k = 0; k < t.numel(); ++k) {
      if (t.dtype() == DType::kInt64) v[static_cast<size_t>(k)] = t.data_as<int64_t>()[k];
      else if (t.dtype() == DType::kInt32) v[static_cast<size_t>(k)] = t.data_as<int32_t>()[k];
      else return error("input " + std::to_string(i) + " must be int32 or int64");
    }
    return v;
  }
};

/// NCHW16c on the CPU backend: a float32 tensor of logical shape [N, C, spatial...] stored
/// as [N][ceil(C / 16)][spatial...][16], the channels past C padding (finite values that
/// kernels ignore). cpu_nchwc_mode: how the CPU backend runs this node in that layout,
/// given ctx.nchwc_inputs (bit i: input i is blocked now): 1 = blocked output (Conv;
/// MaxPool and a row/column-copying Resize of a blocked X; Concat along channels of blocked
/// inputs), 2 = blocked X and a plain output (GlobalAveragePool), 0 = not at all
/// (x86-64 with AVX-512F only; see backends/cpu/x86/x86_kernels.h). The planner keeps runs
/// of such nodes blocked and converts at their edges with make_cpu_nchwc_reorder
/// (to_blocked: NCHW -> NCHW16c; else back), one step per tensor. nchwc_storage_shape: the
/// shape of the storage of a blocked tensor of that logical shape, [N, ceil(C / 16),
/// spatial..., 16] (rank >= 2).
int cpu_nchwc_mode(const CompileContext& ctx);
std::unique_ptr<Kernel> make_cpu_nchwc_reorder(const Shape& shape, bool to_blocked, int threads);
Shape nchwc_storage_shape(const Shape& shape);

using KernelFactory = Result<std::unique_ptr<Kernel>> (*)(const CompileContext& ctx);

/// A Kernel made from a callable `Status f(const KernelContext&)`; the callable captures
/// the parsed attributes by value.
template <typename F>
class FnKernel final : public Kernel {
 public:
  FnKernel(F f, size_t scratch) : f_(std::move(f)), scratch_(scratch) {}
  size_t scratch_bytes() const override { return scratch_; }
  Status run(const KernelContext& ctx) const override { return f_(ctx); }

 private:
  F f_;
  size_t scratch_;
};

template <typename F>
Result<std::unique_ptr<Kernel>> make_fn_kernel(F f, size_t scratch_bytes = 0) {
  return std::unique_ptr<Kernel>(new FnKernel<F>(std::move(f), scratch_bytes));
}

/// Device work a backend recorded once and replays (a CUDA graph), owned by the plan whose
/// steps it holds; see Backend::run_recorded.
class DeviceGraph {
 public:
  virtual ~DeviceGraph() = default;
};

class Backend {
 public:
  virtual ~Backend() = default;
  /// Short name used in preference lists and reports: "cpu", "vulkan", "cuda".
  virtual std::string name() const = 0;
  /// True if this backend can run `ctx.node` with these dtypes and shapes.
  virtual bool supports(const CompileContext& ctx) const = 0;
  /// Compiles the node. With ctx.epilogue set, returns a null kernel (not an error) when
  /// this backend cannot run the node with that tail fused.
  virtual Result<std::unique_ptr<Kernel>> compile(const CompileContext& ctx) const = 0;
  /// True when the backend's buffers are host memory (no copies needed to/from the CPU).
  /// A backend answering false (a GPU) gets its nodes' inputs, outputs and scratch in device
  /// memory: the planner gives each plan value a location, copies values between host and
  /// device where a consumer's backend differs from where a value lives, and the session
  /// allocates one device arena per plan with allocate() and uploads the plan's constants
  /// (weights) into it once, at prepare time. The four functions below serve that.
  virtual bool host_memory() const { return true; }
  /// Allocates `bytes` bytes of device memory (at least 256-byte aligned); called once per
  /// plan, never per run. Errors: kOutOfMemory; kUnimplemented for host-memory backends.
  virtual Result<void*> allocate(uint64_t bytes) { return unimplemented(name() + ": no device memory"); }
  /// Frees memory from allocate() (nullptr: nothing). Waits for work using it to finish.
  virtual void deallocate(void* device_ptr) {}
  /// Copies `bytes` bytes from host `src` to device `dst`, ordered after the work already
  /// submitted; `src` may be reused as soon as this returns.
  virtual Status copy_to_device(void* dst, const void* src, uint64_t bytes) {
    return unimplemented(name() + ": no device memory");
  }
  /// Copies `bytes` bytes from device `src` to host `dst` after the work already submitted,
  /// and returns when `dst` holds them (a CPU kernel may read them next).
  virtual Status copy_to_host(void* dst, const void* src, uint64_t bytes) {
    return unimplemented(name() + ": no device memory");
  }
  /// Waits for all work submitted by this backend to finish; reports an asynchronous error
  /// of that work (a failed kernel) as a status.
  virtual Status synchronize() { return Status::ok(); }
  /// Runs a segment of consecutive device steps of one plan (no copies, no host work
  /// between them), which `record` enqueues one by one on this backend. The segment always
  /// uses the same buffers, so a backend may record its work once into `slot` (empty at
  /// first, kept by the plan) and replay it in later runs without calling `record`. The
  /// default runs `record` every time. Errors: those of `record` or of the replay.
  virtual Status run_recorded(std::unique_ptr<DeviceGraph>& slot, const std::function<Status()>& record) {
    (void)slot;
    return record();
  }
};

/// The CPU backend: reference kernels for every op of op_list.def.
std::unique_ptr<Backend> make_cpu_backend();
/// Creates a backend by name ("cpu", "cuda" when built with CUDA). Errors: kInvalidArgument
/// naming the backend if unknown; kUnimplemented if not built or (CUDA) no device was found,
/// which a Session turns into a note and a CPU fallback.
Result<std::unique_ptr<Backend>> make_backend(const std::string& name);

}  // namespace tessera
