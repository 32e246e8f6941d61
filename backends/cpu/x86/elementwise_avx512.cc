// AVX-512F core of the float32 elementwise kernels (elementwise_x86.cc): the vector type the
// ISA-neutral templates of backends/cpu/elementwise_simd.h are instantiated with. 16 floats
// per zmm register (Vec16 of vec16_avx512.h); tails use masked loads and stores (no read or
// write past the end).
// Compiled with -mavx512f -mfma (this file only); called only when the CPU has AVX-512F.
// GCC 12 warns falsely from inside avx512fintrin.h (-Wuninitialized on __Y, the
// _mm512_undefined_ps() pass-through operand).
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include "backends/cpu/elementwise_simd.h"
#include "backends/cpu/x86/elementwise_x86.h"
#include "backends/cpu/x86/vec16_avx512.h"

namespace tessera::cpu {

ElementwiseCore elementwise_core_avx512() { return {&simd::binary<Vec16>, &simd::unary<Vec16>}; }

}  // namespace tessera::cpu
