// 16 floats as one GCC vector, and the fused activation on a row of them: shared by the
// x86 Conv kernels (conv_x86.cc, conv_winograd.cc), whose hot loops are written on it
// because the build's -O2 does not vectorize them by itself. Include only into functions
// built per ISA (target_clones) or for the baseline; GCC lowers V16 to the target's vectors.
#pragma once

#include <cstdint>

#include "backends/backend.h"

namespace tessera::x86 {

// 16 floats as one GCC vector: a zmm in the AVX-512 clone, two ymm in the AVX2 one; local
// variables of this type stay in registers (an array of floats did not: the compiler kept
// it on the stack and every tap stored and reloaded it).
typedef float V16 __attribute__((vector_size(64)));

// The fused activation (and affine map) on one output row, inlined into each ISA clone of
// the depthwise kernel: the common kinds on V16 vectors (the build's -O2 does not
// vectorize such loops by itself), the rest and the row's tail through
// FusedActivation::apply. NaN propagates as in the reference kernels (comparisons with NaN
// are false, so a NaN passes through the selects).
__attribute__((always_inline)) inline void activate_row(const FusedActivation& a, float* y, int64_t n) {
  using K = FusedActivation::Kind;
  const bool vec = a.kind == K::kRelu || a.kind == K::kClip || a.kind == K::kHardSwish || a.kind == K::kNone;
  int64_t i = 0;
  if (vec) {
    const V16 zero = {}, one = zero + 1.f, lo = zero + a.alpha, hi = zero + a.beta, sc = zero + a.scale,
              sh = zero + a.shift;
    const bool affine = a.has_affine();
    for (; i + 16 <= n; i += 16) {
      V16 v;
      __builtin_memcpy(&v, y + i, sizeof v);
      if (a.kind == K::kRelu) {
        v = v < zero ? zero : v;
      } else if (a.kind == K::kClip) {
        v = v < lo ? lo : v;
        v = v > hi ? hi : v;
      } else if (a.kind == K::kHardSwish) {
        V16 u = v / 6.f + 0.5f;
        u = u < zero ? zero : u;
        u = u > one ? one : u;
        v = v * u;
      }
      if (affine) v = v * sc + sh;
      __builtin_memcpy(y + i, &v, sizeof v);
    }
  }
  if (i < n) a.apply(y + i, n - i);
}

}  // namespace tessera::x86
