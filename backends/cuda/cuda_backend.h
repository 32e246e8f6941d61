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
#include "backends/cuda/cuda_kernels.h"
#include "backends/cuda/cuda_libs.h"

namespace tessera::cuda {

/// cuBLAS's workspace per session (Hopper's GEMMs want up to 32 MiB).
constexpr size_t kCublasWorkspaceBytes = size_t{32} << 20;

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
  mutable void* cublas_workspace = nullptr;  // kCublasWorkspaceBytes, given to cuBLAS
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

/// A fused elementwise tail (the planner's Epilogue, backends/backend.h) in the form
/// launch_epilogue_f32 applies it after a Conv, MatMul or Gemm has written its output:
/// which KernelContext inputs hold the per-channel bias (a Conv's own B), the per-column
/// bias and the addend (-1: none), and the activation and affine map.
struct CudaEpilogue {
  int chan_bias_input = -1;
  int64_t chan_inner = 1, chan_count = 1;  // bias index = (i / chan_inner) % chan_count
  int col_bias_input = -1;
  int64_t col_count = 1;                   // bias index = i % col_count
  int addend_input = -1;
  EpilogueParams params;                   // has_act, op, alpha, beta, scale, shift
  bool active() const {
    return chan_bias_input >= 0 || col_bias_input >= 0 || addend_input >= 0 || params.has_act ||
           params.scale != 1.f || params.shift != 0.f;
  }
};

/// Adds the planner's tail `ep` (its addend, column bias, activation and affine map) to
/// `out`, with col_count = the last dim of `out_shape`. False when its activation has no
/// CUDA form (the node is then planned without the tail).
bool add_tail(const Epilogue& ep, const Shape& out_shape, CudaEpilogue* out);
/// Runs the epilogue on output 0 of `kc` (float32, in place) on the session's stream.
Status run_epilogue(const CudaContext& c, const CudaEpilogue& e, const KernelContext& kc);

/// Conv with a fused tail (conv.cc): `own` holds only the node's own inputs (X, W[, B]).
Result<std::unique_ptr<Kernel>> make_conv_fused(const CudaContext& c, const CompileContext& own, const CudaEpilogue& tail);

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
