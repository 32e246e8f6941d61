#include "backends/cuda/cuda_libs.h"

#include <dlfcn.h>

namespace tessera::cuda {

namespace {

#define TSR_STR2(x) #x
#define TSR_STR(x) TSR_STR2(x)

CudaLibs load() {
  CudaLibs l;
  const std::string cublas_name = "libcublas.so." TSR_STR(CUBLAS_VER_MAJOR);
  const std::string cudnn_name = "libcudnn.so." TSR_STR(CUDNN_MAJOR);
  void* cublas = dlopen(cublas_name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!cublas) {
    const char* e = dlerror();
    l.error = "cannot load " + cublas_name + " (" + (e ? e : "?") + ")";
    return l;
  }
  void* cudnn = dlopen(cudnn_name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!cudnn) {
    const char* e = dlerror();
    l.error = "cannot load " + cudnn_name + " (" + (e ? e : "?") + ")";
    return l;
  }
  // TSR_STR(fn) expands cublas_v2.h's macros first: "cublasCreate_v2" for cublasCreate.
#define TSR_CUDA_LIB_LOAD(lib, fn)                                               \
  l.fn = reinterpret_cast<decltype(l.fn)>(dlsym(lib, TSR_STR(fn)));              \
  if (!l.fn) {                                                                   \
    l.error = std::string(#lib " has no function ") + TSR_STR(fn);               \
    return l;                                                                    \
  }
  TSR_CUDA_LIB_FUNCTIONS(TSR_CUDA_LIB_LOAD)
#undef TSR_CUDA_LIB_LOAD
  l.loaded = true;
  return l;
}

}  // namespace

const CudaLibs& cuda_libs() {
  static const CudaLibs libs = load();  // C++11 static init: once, thread-safe
  return libs;
}

}  // namespace tessera::cuda
