// Optimized kernels of the CPU backend on aarch64. The backend asks find_arm_kernel(op)
// first; a factory returns a null kernel (not an error) for a node it does not handle (another
// dtype or shape), and the backend then uses the reference kernel. Every kernel listed here
// is tested against its reference (tests/CMakeLists.txt: TSR_KERNEL_TEST_SOURCES, run under
// qemu-aarch64 by scripts/cross_build_arm64.sh).
//
// Today: MatMul, Gemm and Conv, the ISA-independent kernels of backends/cpu/x86/
// (x86_kernels.h) on top of the packed SGEMM, which runs the NEON micro-kernel
// (sgemm_neon.cc) here; the float32 elementwise ops and activations (elementwise_x86.h)
// on their NEON core (elementwise_neon.cc); pooling, Softmax, LogSoftmax,
// LayerNormalization, ReduceSum/Mean/Max and Resize, whose ISA templates are compiled on a
// NEON vector type (pool_neon.cc, softmax_neon.cc, resize_neon.cc); Transpose on 4 x 4 NEON
// tiles (transpose_neon.cc).
#pragma once

#include <string>

#include "backends/backend.h"

namespace tessera::arm {

/// The optimized factory for `op_type` on aarch64, or nullptr (then the reference kernel).
KernelFactory find_arm_kernel(const std::string& op_type);

/// True for the ops whose aarch64 kernel applies a fused tail (CompileContext::epilogue:
/// residual Add and activation in the SGEMM epilogue); no other factory may be given one.
bool takes_epilogue(const std::string& op_type);

}  // namespace tessera::arm
