// cuBLAS and cuDNN, loaded with dlopen when the first CUDA session is made, not linked:
// a Tessera binary built with CUDA then starts as fast as a CPU-only one (those libraries
// are hundreds of MiB) and runs on machines that lack them (the CUDA backend is then
// reported unavailable and the CPU runs everything).
#pragma once

#include <cublas_v2.h>
#include <cudnn.h>

#include <string>

namespace tessera::cuda {

// The functions the backend calls. cublas_v2.h maps some names to their _v2 symbols with
// macros (cublasCreate -> cublasCreate_v2); the members take the same mapped names.
#define TSR_CUDA_LIB_FUNCTIONS(X)                                                                           \
  X(cublas, cublasCreate) X(cublas, cublasDestroy) X(cublas, cublasSetStream) X(cublas, cublasSetMathMode) X(cublas, cublasSetWorkspace)  \
  X(cublas, cublasGetStatusString) X(cublas, cublasSgemm) X(cublas, cublasSgemmStridedBatched)              \
  X(cudnn, cudnnCreate) X(cudnn, cudnnDestroy) X(cudnn, cudnnSetStream) X(cudnn, cudnnGetErrorString)       \
  X(cudnn, cudnnCreateTensorDescriptor) X(cudnn, cudnnDestroyTensorDescriptor)                              \
  X(cudnn, cudnnSetTensor4dDescriptor) X(cudnn, cudnnCreateFilterDescriptor)                                \
  X(cudnn, cudnnDestroyFilterDescriptor) X(cudnn, cudnnSetFilter4dDescriptor)                               \
  X(cudnn, cudnnCreateConvolutionDescriptor) X(cudnn, cudnnDestroyConvolutionDescriptor)                    \
  X(cudnn, cudnnSetConvolution2dDescriptor) X(cudnn, cudnnSetConvolutionGroupCount)                         \
  X(cudnn, cudnnSetConvolutionMathType) X(cudnn, cudnnGetConvolution2dForwardOutputDim)                     \
  X(cudnn, cudnnGetConvolutionForwardAlgorithm_v7) X(cudnn, cudnnGetConvolutionForwardWorkspaceSize)        \
  X(cudnn, cudnnConvolutionForward) X(cudnn, cudnnAddTensor)

struct CudaLibs {
  bool loaded = false;
  std::string error;  // why loading failed (the library and dlerror())
#define TSR_CUDA_LIB_MEMBER(lib, fn) decltype(&::fn) fn = nullptr;
  TSR_CUDA_LIB_FUNCTIONS(TSR_CUDA_LIB_MEMBER)
#undef TSR_CUDA_LIB_MEMBER
};

/// The loaded libraries (libcublas.so.<CUBLAS_VER_MAJOR>, libcudnn.so.<CUDNN_MAJOR>, found
/// through the dynamic loader's search path, e.g. LD_LIBRARY_PATH); loaded once, thread-safe.
/// `loaded` false with `error` set when a library or function is missing.
const CudaLibs& cuda_libs();

}  // namespace tessera::cuda
