// Float32 elementwise kernels for x86 (AVX-512F, AVX2+FMA), chosen at run time, and for
// aarch64 (NEON, backends/cpu/arm/elementwise_neon.cc; this kernel file is built there too):
// Add, Sub, Mul, Div, Max, Min (two inputs), PRelu, Pow (constant scalar exponent 2, 0.5
// or 1) with numpy broadcasting; Relu, LeakyRelu, Clip, Sigmoid, HardSigmoid, HardSwish,
// Tanh, Exp, Erf, Gelu (opset 20, both forms), Sqrt, Neg, Abs.
//
// Layout: backends/cpu/broadcast_runs.h splits a broadcast output into contiguous runs;
// backends/cpu/elementwise_simd.h holds each op's math once, as templates over a vector
// type; elementwise_avx512.cc / elementwise_avx2.cc instantiate them (each compiled with its
// own -m flags) into an ElementwiseCore; elementwise_x86.cc holds the kernels, which split
// the output over the session's thread pool and call the core on each run. A node of
// another dtype, with an unsupported exponent or attribute, or on a CPU without AVX2+FMA
// (or an x86 CPU without AVX2+FMA) gets a null kernel: the CPU backend then uses the
// reference kernel.
#pragma once

#include "backends/backend.h"
#include "backends/cpu/elementwise_ops.h"

namespace tessera::cpu {

enum class ElementwiseIsa { kAuto, kAvx512, kAvx2, kNeon };

/// "auto", "avx512", "avx2", "neon".
const char* elementwise_isa_name(ElementwiseIsa isa);
/// True if this build and CPU can run the path (AVX-512F; AVX2 and FMA; NEON: every
/// aarch64 build). kAuto: true if any is.
bool elementwise_isa_available(ElementwiseIsa isa);
/// The core of a path; kAuto: AVX-512F if the CPU has it, else AVX2+FMA; NEON on aarch64.
/// Precondition: elementwise_isa_available(isa).
ElementwiseCore elementwise_core(ElementwiseIsa isa);

#if defined(__x86_64__) || defined(_M_X64)
/// Defined in elementwise_avx512.cc / elementwise_avx2.cc.
ElementwiseCore elementwise_core_avx512();
ElementwiseCore elementwise_core_avx2();
#elif defined(__aarch64__)
/// Defined in backends/cpu/arm/elementwise_neon.cc.
ElementwiseCore elementwise_core_neon();
#endif

}  // namespace tessera::cpu

namespace tessera::x86 {

/// The optimized kernel for the node (one of the ops listed above, by ctx.node.op_type) on
/// ISA path `isa` (tests force one; factories use kAuto), or a null kernel when the node is
/// not one it takes (dtype other than float32, a fused epilogue, Pow with another or a
/// non-constant exponent, Max/Min with other than two inputs, more than 16 dims that do not
/// merge, shapes that do not broadcast) or the path is not available; no errors at plan
/// time. The kernel's run() returns invalid_argument if the run-time shapes do not broadcast
/// to the output's (the executor gives it the planned shapes, so this is a defence only).
Result<std::unique_ptr<Kernel>> make_elementwise(const CompileContext& ctx, cpu::ElementwiseIsa isa);

/// The factory for `op_type` if it is one of the ops above (make_elementwise on kAuto),
/// else nullptr.
KernelFactory find_x86_elementwise_kernel(const std::string& op_type);

}  // namespace tessera::x86
