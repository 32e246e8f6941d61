// The CUDA backend: device choice, one stream per session, device memory for the plan's
// arena, host<->device copies, and dispatch of nodes to the op table (blas.cc, conv.cc,
// ops.cc). A node whose dtypes, attributes or shapes a CUDA kernel does not take is
// declined and runs on the CPU, with copies inserted by the planner (see plan.h).
#include "backends/cuda/cuda_backend.h"
#include "backends/unary_math.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

namespace tessera {
namespace cuda {

Status cuda_check(cudaError_t e, const std::string& what) {
  if (e == cudaSuccess) return Status::ok();
  return internal_error("CUDA: " + what + ": " + cudaGetErrorString(e));
}
Status cublas_check(cublasStatus_t e, const std::string& what) {
  if (e == CUBLAS_STATUS_SUCCESS) return Status::ok();
  return internal_error("cuBLAS: " + what + ": " + lib().cublasGetStatusString(e));
}
Status cudnn_check(cudnnStatus_t e, const std::string& what) {
  if (e == CUDNN_STATUS_SUCCESS) return Status::ok();
  return internal_error("cuDNN: " + what + ": " + lib().cudnnGetErrorString(e));
}

Status ensure_cublas(const CudaContext& c) {
  if (c.cublas) return Status::ok();
  cublasHandle_t h = nullptr;
  TSR_RETURN_IF_ERROR(cublas_check(lib().cublasCreate(&h), "create handle"));
  c.cublas = h;
  TSR_RETURN_IF_ERROR(cublas_check(lib().cublasSetStream(h, c.stream), "set stream"));
  // CUBLAS_DEFAULT_MATH never uses TF32 (or other reduced precision) for float32 GEMMs;
  // TF32 tensor cores only when the user allowed them. (CUBLAS_PEDANTIC_MATH measured slower
  // on BERT-sized GEMMs for no precision gain in float32.)
  TSR_RETURN_IF_ERROR(cublas_check(
      lib().cublasSetMathMode(h, c.allow_tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH), "math mode"));
  // A workspace of our own, so that cuBLAS allocates nothing while a run is captured into a
  // CUDA graph (it would otherwise take memory from the stream's pool during capture).
  TSR_RETURN_IF_ERROR(cuda_check(cudaMalloc(&c.cublas_workspace, kCublasWorkspaceBytes), "cuBLAS workspace"));
  return cublas_check(lib().cublasSetWorkspace(h, c.cublas_workspace, kCublasWorkspaceBytes), "set workspace");
}

bool add_tail(const Epilogue& ep, const Shape& out_shape, CudaEpilogue* out) {
  UnaryMath u;
  if (!unary_math_of_activation(ep.act, &u)) return false;
  EpilogueParams& p = out->params;
  p.has_act = u.op != UnaryOp::kIdentity;
  p.op = u.op;
  p.alpha = u.alpha;
  p.beta = u.beta;
  p.scale = ep.act.scale;
  p.shift = ep.act.shift;
  out->addend_input = ep.addend_input;
  out->col_bias_input = ep.col_bias_input;
  out->col_count = out_shape.empty() ? 1 : std::max<int64_t>(out_shape.back(), 1);
  return true;
}

Status run_epilogue(const CudaContext& c, const CudaEpilogue& e, const KernelContext& kc) {
  Tensor& y = kc.output(0);
  EpilogueParams p = e.params;
  auto in = [&](int i) { return i >= 0 ? kc.input(static_cast<size_t>(i)).data_as<float>() : nullptr; };
  p.chan_bias = in(e.chan_bias_input);
  p.chan_inner = std::max<int64_t>(e.chan_inner, 1);
  p.chan_count = std::max<int64_t>(e.chan_count, 1);
  p.col_bias = in(e.col_bias_input);
  p.col_count = e.col_count;
  p.addend = in(e.addend_input);
  return cuda_check(launch_epilogue_f32(y.data_as<float>(), y.numel(), p, c.stream), "fused bias/residual/activation");
}

Status ensure_cudnn(const CudaContext& c) {
  if (c.cudnn) return Status::ok();
  cudnnHandle_t h = nullptr;
  TSR_RETURN_IF_ERROR(cudnn_check(lib().cudnnCreate(&h), "create handle"));
  c.cudnn = h;
  return cudnn_check(lib().cudnnSetStream(h, c.stream), "set stream");
}

bool all_float32(const CompileContext& ctx) {
  for (size_t i = 0; i < ctx.inputs.size(); ++i)
    if (ctx.has_input(i) && ctx.input(i).dtype != DType::kFloat32) return false;
  for (const ValueInfo& o : ctx.outputs)
    if (o.dtype != DType::kFloat32 && o.dtype != DType::kUndefined) return false;
  return true;
}

namespace {

/// A MatMul or Gemm kernel followed by its fused tail.
class EpilogueKernel final : public Kernel {
 public:
  EpilogueKernel(std::unique_ptr<Kernel> base, CudaEpilogue e, const CudaContext* c)
      : base_(std::move(base)), e_(e), c_(c) {}
  size_t scratch_bytes() const override { return base_->scratch_bytes(); }
  Status run(const KernelContext& kc) const override {
    TSR_RETURN_IF_ERROR(base_->run(kc));
    return run_epilogue(*c_, e_, kc);
  }

 private:
  std::unique_ptr<Kernel> base_;
  CudaEpilogue e_;
  const CudaContext* c_;
};

/// The CUDA graph of one run of consecutive device steps (Backend::run_recorded).
class CudaGraph final : public DeviceGraph {
 public:
  ~CudaGraph() override {
    if (exec) cudaGraphExecDestroy(exec);
  }
  cudaGraphExec_t exec = nullptr;
  int eager_runs = 0;   // runs made before capturing
  bool eager = false;   // capture failed: always run the steps one by one
};

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(CudaContext c) : c_(c) {
    if (const char* g = std::getenv("TESSERA_CUDA_GRAPHS")) graphs_ = std::strcmp(g, "0") != 0;
    std::vector<CudaOp> ops;
    add_blas_ops(ops);
    add_conv_ops(ops);
    add_basic_ops(ops);
    for (const CudaOp& op : ops) table_[op.op_type] = op.make;
  }
  ~CudaBackend() override {
    cudaStreamSynchronize(c_.stream);
    if (c_.cudnn) lib().cudnnDestroy(c_.cudnn);
    if (c_.cublas) lib().cublasDestroy(c_.cublas);
    if (c_.cublas_workspace) cudaFree(c_.cublas_workspace);
    if (c_.error_flag) cudaFree(c_.error_flag);
    if (c_.stream) cudaStreamDestroy(c_.stream);
  }

  std::string name() const override { return "cuda"; }
  bool host_memory() const override { return false; }

  // supports() compiles the node (a CUDA kernel's checks are its compile), keeping the
  // kernel for the compile() call that the planner makes next for the same node.
  bool supports(const CompileContext& ctx) const override {
    pending_.reset();
    pending_node_ = nullptr;
    if (!(ctx.node.domain.empty() || ctx.node.domain == "ai.onnx")) return false;
    if (ctx.epilogue && !ctx.epilogue->empty()) return false;
    auto it = table_.find(ctx.node.op_type);
    if (it == table_.end()) return false;
    Result<std::unique_ptr<Kernel>> k = it->second(c_, ctx);
    if (!k.is_ok() || !k.value()) return false;  // declined or not possible here: the CPU runs it
    pending_ = std::move(k).value();
    pending_node_ = &ctx.node;
    return true;
  }
  Result<std::unique_ptr<Kernel>> compile(const CompileContext& ctx) const override {
    // A fused elementwise tail (CompileContext::epilogue): Conv, MatMul and Gemm take it
    // (one launch_epilogue_f32 pass after the library call); a null kernel otherwise, and
    // the planner then plans the nodes one by one.
    if (ctx.epilogue && !ctx.epilogue->empty()) return compile_fused(ctx);
    if (pending_ && pending_node_ == &ctx.node) {
      pending_node_ = nullptr;
      return std::move(pending_);
    }
    auto it = table_.find(ctx.node.op_type);
    if (it == table_.end()) return unimplemented(ctx.node.describe() + ": no CUDA kernel for op " + ctx.node.op_type);
    TSR_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> k, it->second(c_, ctx));
    if (!k) return unimplemented(ctx.node.describe() + ": the CUDA kernel does not take these inputs");
    return k;
  }

  // CUDA graphs: the first run of a segment goes step by step (cuBLAS and cuDNN load their
  // kernels lazily then, which a capture must not see); the second is captured on the
  // session's stream, instantiated and launched; later runs launch the graph. The plan's
  // buffers never move, so the recorded pointers stay valid. If capture fails (a library
  // call that cannot be captured), the segment runs step by step from then on.
  Status run_recorded(std::unique_ptr<DeviceGraph>& slot, const std::function<Status()>& record) override {
    if (!graphs_) return record();
    if (!slot) slot = std::make_unique<CudaGraph>();
    auto* g = static_cast<CudaGraph*>(slot.get());
    if (g->exec) return cuda_check(cudaGraphLaunch(g->exec, c_.stream), "launch the CUDA graph");
    if (g->eager || g->eager_runs++ < 1) return record();
    if (cudaStreamBeginCapture(c_.stream, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
      cudaGetLastError();
      g->eager = true;
      return record();
    }
    Status s = record();
    cudaGraph_t graph = nullptr;
    const cudaError_t e = cudaStreamEndCapture(c_.stream, &graph);
    if (s.is_ok() && e == cudaSuccess && graph && cudaGraphInstantiate(&g->exec, graph, 0) == cudaSuccess) {
      cudaGraphDestroy(graph);
      return cuda_check(cudaGraphLaunch(g->exec, c_.stream), "launch the CUDA graph");
    }
    if (graph) cudaGraphDestroy(graph);
    cudaGetLastError();
    g->exec = nullptr;
    g->eager = true;
    return record();  // nothing recorded ran: run the steps now
  }

  Result<void*> allocate(uint64_t bytes) override {
    void* p = nullptr;
    if (bytes == 0) bytes = 256;
    cudaError_t e = cudaMalloc(&p, bytes);
    if (e != cudaSuccess) {
      cudaGetLastError();  // clear the sticky-free error state of a failed allocation
      return out_of_memory("CUDA: cannot allocate " + std::to_string(bytes) + " bytes of device memory: " +
                           cudaGetErrorString(e));
    }
    // Poisoned like the host arena (0xFF: NaN as float), so a kernel that leaves an output
    // element unwritten shows up as NaN in the tests instead of a lucky zero.
    TSR_RETURN_IF_ERROR(cuda_check(cudaMemsetAsync(p, 0xFF, bytes, c_.stream), "poison the device arena"));
    return p;
  }
  void deallocate(void* p) override {
    if (!p) return;
    cudaStreamSynchronize(c_.stream);
    cudaFree(p);
  }
  Status copy_to_device(void* dst, const void* src, uint64_t bytes) override {
    // From pageable memory the copy is staged before this returns, so `src` may be reused.
    return cuda_check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, c_.stream), "copy to device");
  }
  Status copy_to_host(void* dst, const void* src, uint64_t bytes) override {
    TSR_RETURN_IF_ERROR(cuda_check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, c_.stream), "copy to host"));
    return cuda_check(cudaStreamSynchronize(c_.stream), "a kernel before the copy to the host");
  }
  Status synchronize() override {
    TSR_RETURN_IF_ERROR(cuda_check(cudaStreamSynchronize(c_.stream), "a kernel of this run"));
    int flag = 0;
    TSR_RETURN_IF_ERROR(cuda_check(cudaMemcpy(&flag, c_.error_flag, sizeof(int), cudaMemcpyDeviceToHost), "error flag"));
    if (flag) {
      cudaMemset(c_.error_flag, 0, sizeof(int));
      return invalid_argument("CUDA: a Gather index was out of range in this run (its output holds zeros there)");
    }
    return Status::ok();
  }

 private:
  Result<std::unique_ptr<Kernel>> compile_fused(const CompileContext& ctx) const {
    const std::string& op = ctx.node.op_type;
    if (op != "Conv" && op != "MatMul" && op != "Gemm") return std::unique_ptr<Kernel>();
    if (ctx.outputs.size() != 1) return std::unique_ptr<Kernel>();
    CudaEpilogue tail;
    if (!add_tail(*ctx.epilogue, ctx.outputs[0].shape, &tail)) return std::unique_ptr<Kernel>();
    // The node's own inputs only: the tail's operands sit after them.
    const size_t own_n = std::min(ctx.node.inputs.size(), ctx.inputs.size());
    std::vector<const ValueInfo*> own(ctx.inputs.begin(), ctx.inputs.begin() + static_cast<std::ptrdiff_t>(own_n));
    CompileContext base{ctx.node, own, ctx.outputs};
    base.threads = ctx.threads;
    for (int i : {tail.addend_input, tail.col_bias_input})
      if (i >= 0 && (!ctx.has_input(static_cast<size_t>(i)) || ctx.input(static_cast<size_t>(i)).dtype != DType::kFloat32))
        return std::unique_ptr<Kernel>();
    if (op == "Conv") return make_conv_fused(c_, base, tail);
    TSR_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> k, table_.at(op)(c_, base));
    if (!k) return k;
    return std::unique_ptr<Kernel>(new EpilogueKernel(std::move(k), tail, &c_));
  }

  CudaContext c_;
  bool graphs_ = true;  // TESSERA_CUDA_GRAPHS=0 turns CUDA graph capture off
  std::unordered_map<std::string, CudaMake> table_;
  mutable std::unique_ptr<Kernel> pending_;
  mutable const Node* pending_node_ = nullptr;
};

}  // namespace
}  // namespace cuda

Result<std::unique_ptr<Backend>> make_cuda_backend() {
  using cuda::cuda_check;
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    // With no GPU (or no driver) the runtime reports an error rather than 0 devices.
    std::string why = e != cudaSuccess ? cudaGetErrorString(e) : "0 devices";
    cudaGetLastError();
    return unimplemented("backend 'cuda': no CUDA device was found (" + why + ")");
  }
  const cuda::CudaLibs& libs = cuda::cuda_libs();
  if (!libs.loaded) return unimplemented("backend 'cuda': " + libs.error);
  cuda::CudaContext c;
  if (const char* d = std::getenv("TESSERA_CUDA_DEVICE")) {
    char* end = nullptr;
    long v = std::strtol(d, &end, 10);
    if (!*d || *end || v < 0 || v >= count)
      return invalid_argument("TESSERA_CUDA_DEVICE is '" + std::string(d) + "'; it must be 0.." + std::to_string(count - 1));
    c.device = static_cast<int>(v);
  }
  if (const char* t = std::getenv("TESSERA_CUDA_ALLOW_TF32")) c.allow_tf32 = std::strcmp(t, "1") == 0;
  TSR_RETURN_IF_ERROR(cuda_check(cudaSetDevice(c.device), "set device " + std::to_string(c.device)));
  TSR_RETURN_IF_ERROR(cuda_check(cudaStreamCreateWithFlags(&c.stream, cudaStreamNonBlocking), "create stream"));
  TSR_RETURN_IF_ERROR(cuda_check(cudaMalloc(reinterpret_cast<void**>(&c.error_flag), sizeof(int)), "error flag"));
  TSR_RETURN_IF_ERROR(cuda_check(cudaMemset(c.error_flag, 0, sizeof(int)), "error flag"));
  return std::unique_ptr<Backend>(new cuda::CudaBackend(c));
}

}  // namespace tessera
