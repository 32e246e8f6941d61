// Run-time ISA choice for the x86 kernels of pooling, Softmax, LayerNormalization, the
// reductions and Transpose (the *_x86.cc files that are not SGEMM's). Each of those kernels
// has an AVX-512F body and an AVX2+FMA body, compiled from one template in its own file with
// its own -m flags (<op>_avx512.cc, <op>_avx2.cc; see CMakeLists.txt), and a factory that
// picks one at plan time with best_isa(); on a CPU with neither, the factory declines and
// the backend runs the reference kernel. On aarch64 the same templates are compiled once
// more with a NEON vector type (simd_x86.h; backends/cpu/arm/<op>_neon.cc) for pooling,
// Softmax, LayerNormalization, the reductions and Resize; Transpose has its own NEON block
// (transpose_neon.cc); best_isa() is kNeon there.
#pragma once

#include <optional>

namespace tessera::x86 {

enum class Isa { kAvx512, kAvx2, kScalar, kNeon };

/// "avx512", "avx2", "scalar" or "neon".
const char* isa_name(Isa isa);
/// True if this CPU can run `isa` (x86-64, __builtin_cpu_supports: avx512f; avx2 and fma;
/// aarch64: neon). kScalar: always.
bool isa_available(Isa isa);
/// The path factories use: the override when one is set, else the environment variable
/// TESSERA_X86_ISA (avx512, avx2, neon or scalar; read once; ignored when this CPU lacks
/// that path or the value is another string), else AVX-512F, else AVX2+FMA, else NEON
/// (aarch64), else kScalar (the
/// factories then decline, and the reference kernel runs). SGEMM, MatMul, Gemm and Conv
/// choose their path separately (sgemm.h).
Isa best_isa();
/// Forces best_isa() to return `isa` (nullopt: back to detection). For tests and
/// benchmarks that compare the paths; the caller must only force an available path, and
/// must not change it while another thread plans a model. Kernels capture the path when
/// they are compiled, so it affects only kernels compiled afterwards.
void set_isa_override(std::optional<Isa> isa);

/// Calls the body of path `isa` (not kScalar): `TSR_ISA_DISPATCH(isa, softmax(a, b, e));`
/// runs avx512::softmax, avx2::softmax or (aarch64) neon::softmax.
#if defined(__aarch64__)
#define TSR_ISA_DISPATCH(isa, ...) \
  do {                              \
    (void)(isa);                    \
    neon::__VA_ARGS__;              \
  } while (0)
#else
#define TSR_ISA_DISPATCH(isa, ...)                     \
  do {                                                 \
    if ((isa) == ::tessera::x86::Isa::kAvx512) avx512::__VA_ARGS__; \
    else avx2::__VA_ARGS__;                            \
  } while (0)
#endif

}  // namespace tessera::x86
