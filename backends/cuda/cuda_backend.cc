// The CUDA backend: device choice, one stream per session, device memory for the plan's
// arena, host<->device copies, and dispatch of nodes to the op table (blas.cc, conv.cc,
// ops.cc). A node whose dtypes, attributes or shapes a CUDA kernel does not take is
// declined and runs on the CPU, with copies inserted by the planner (see plan.h).
#include "backends/cuda/cuda_backend.h"

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
  // CUBLAS_DEFAULT_MATH never uses TF32 for float32 GEMMs; pedantic also rules out other
  // reduced-precision shortcuts.
  return cublas_check(lib().cublasSetMathMode(h, c.allow_tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_PEDANTIC_MATH),
                      "math mode");
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

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(CudaContext c) : c_(c) {
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
    // A fused elementwise tail (CompileContext::epilogue): not taken by CUDA kernels yet, so
    // decline; the planner then plans the nodes one by one (all of them can still run here).
    if (ctx.epilogue && !ctx.epilogue->empty()) return std::unique_ptr<Kernel>();
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
  CudaContext c_;
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
