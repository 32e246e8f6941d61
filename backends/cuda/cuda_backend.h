// The CUDA backend's internals, shared by its files (not a public header): the per-session
// device state and the op table each file contributes to.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <memory>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "backends/cuda/cuda_libs.h"

namespace tessera::cuda {

/// One per backend instance, i.e. per Session: the device, one stream that every kernel,
/// copy and library call of the session is queued on, the cuBLAS and cuDNN handles bound to
/// that stream, and a device int that kernels set on bad input (e.g. a Gather index out of
/// range), checked at synchronize().
struct CudaContext {
  int device = 0;
  cudaStream_t stream = nullptr;
  // Made by ensure_cublas / ensure_cudnn when the first node needs them (plan time), so a
  // session without MatMul or Conv does not pay for them.
  mutable cublasHandle_t cublas = nullptr;
  mutable cudnnHandle_t cudnn = nullptr;
  /// TF32 tensor cores for float32 MatMul/Gemm/Conv. Off unless TESSERA_CUDA_ALLOW_TF32=1
  /// (TF32 keeps 10 mantissa bits: errors ~1e-3, far above the 1e-4 the tests ask for).
  bool allow_tf32 = false;
  int* error_flag = nullptr;  // device memory
};

/// An op the backend runs: `make` returns a kernel, a null kernel when it declines these
/// dtypes/attributes/shapes (the node then runs on the CPU), or an error.
using CudaMake = Result<std::unique_ptr<Kernel>> (*)(const CudaContext& c, const CompileContext& ctx);
struct CudaOp {
  const char* op_type;
  CudaMake make;
};

/// The ops of each file: blas.cc (MatMul, Gemm), conv.cc (Conv), ops.cc (the rest).
void add_blas_ops(std::vector<CudaOp>& ops);
void add_conv_ops(std::vector<CudaOp>& ops);
void add_basic_ops(std::vector<CudaOp>& ops);

/// Create the cuBLAS handle (pedantic math, or TF32 when allowed) / the cuDNN handle on the
/// session's stream if not made yet. Called by compile functions (plan time, under the
/// session's lock). Errors: the library's.
Status ensure_cublas(const CudaContext& c);
Status ensure_cudnn(const CudaContext& c);

/// A status for a CUDA runtime / cuBLAS / cuDNN error code: ok for success, else kInternal
/// naming `what` and the library's error string.
Status cuda_check(cudaError_t e, const std::string& what);
Status cublas_check(cublasStatus_t e, const std::string& what);
Status cudnn_check(cudnnStatus_t e, const std::string& what);

/// cuBLAS / cuDNN, loaded at the first make_cuda_backend (which checks `loaded`).
inline const CudaLibs& lib() { return cuda_libs(); }

/// A declined node: the planner gives it to the next backend (the CPU).
inline Result<std::unique_ptr<Kernel>> decline() { return std::unique_ptr<Kernel>(); }

/// True when every present input and output of the node is float32.
bool all_float32(const CompileContext& ctx);

}  // namespace tessera::cuda

namespace tessera {
/// The CUDA backend on device `TESSERA_CUDA_DEVICE` (default 0). Errors: kUnimplemented
/// "no CUDA device was found" when the driver reports none (or any error, e.g. no driver).
Result<std::unique_ptr<Backend>> make_cuda_backend();
}  // namespace tessera
