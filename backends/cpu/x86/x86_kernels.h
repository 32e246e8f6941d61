// Optimized x86 kernels of the CPU backend. The backend asks find_x86_kernel(op) first; a
// factory returns a null kernel (not an error) for a node it does not handle (another dtype
// or shape), and the backend then uses the reference kernel. Each kernel file sits beside
// its reference (backends/cpu/ref/<op>.cc) and is tested against it.
#pragma once

#include <string>

#include "backends/backend.h"

namespace tessera::x86 {

/// MatMul (ONNX MatMul-1/9/13, numpy.matmul), float32, on the packed SGEMM.
Result<std::unique_ptr<Kernel>> make_MatMul(const CompileContext& ctx);
/// Gemm (ONNX Gemm-7/9/11/13), float32, on the packed SGEMM.
Result<std::unique_ptr<Kernel>> make_Gemm(const CompileContext& ctx);
/// Conv (ONNX Conv-1/11), float32, N-d: im2col + the packed SGEMM, or a direct loop for
/// depthwise-like 2-D convs (fewer than 4 output channels per group).
Result<std::unique_ptr<Kernel>> make_Conv(const CompileContext& ctx);

/// True for the ops whose optimized kernel applies a fused tail (CompileContext::epilogue);
/// every other factory must not be given one.
bool takes_epilogue(const std::string& op_type);

/// The optimized factory for `op_type`, or nullptr. x86-64 builds only (MatMul, Gemm and
/// Conv above are ISA-independent and are also built on aarch64: see arm/arm_kernels.h).
KernelFactory find_x86_kernel(const std::string& op_type);

}  // namespace tessera::x86
