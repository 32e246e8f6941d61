// AVX2+FMA core of the float32 elementwise kernels (elementwise_x86.cc): the vector type the
// ISA-neutral templates of backends/cpu/elementwise_simd.h are instantiated with. 8 floats
// per ymm register (Vec8Avx2 of simd_avx2.h); tails use vmaskmovps (no read or write past
// the end).
// Compiled with -mavx2 -mfma (this file only); called only when the CPU has AVX2 and FMA.
#include <immintrin.h>

#include "backends/cpu/elementwise_simd.h"
#include "backends/cpu/x86/elementwise_x86.h"
#include "backends/cpu/x86/simd_avx2.h"

namespace tessera::cpu {

ElementwiseCore elementwise_core_avx2() { return {&simd::binary<Vec8Avx2>, &simd::unary<Vec8Avx2>}; }

}  // namespace tessera::cpu
