// The transforms of Winograd's minimal filtering F(4x4, 3x3) (Lavin & Gray, "Fast
// Algorithms for Convolutional Neural Networks", CVPR 2016) on vectors, for the interpolation
// points 0, 1, -1, 2, -2: B^T (6 x 6) on the input and A^T (4 x 6) on the output, applied to
// six vectors at a time (each lane an independent tile or channel), shared by the NCHW
// (conv_winograd.cc) and NCHW16c (conv_winograd_nchwc.cc) kernels. The weight transform
// G (6 x 3) is winograd_f43_weights (conv_winograd.h).
#pragma once

namespace tessera::x86 {

// z = B^T d for six vectors (rows of B^T: [4 0 -5 0 1 0], [0 -4 -4 1 1 0], [0 4 -4 -1 1 0],
// [0 -2 -1 2 1 0], [0 2 -1 -2 1 0], [0 4 0 -5 0 1]).
template <class V>
__attribute__((always_inline)) inline void bt6(V d0, V d1, V d2, V d3, V d4, V d5, V* z) {
  const V a = d4 - 4.f * d2, b = d3 - 4.f * d1, c = d4 - d2, e = 2.f * (d3 - d1);
  z[0] = 4.f * d0 - 5.f * d2 + d4;
  z[1] = a + b;
  z[2] = a - b;
  z[3] = c + e;
  z[4] = c - e;
  z[5] = 4.f * d1 - 5.f * d3 + d5;
}

// o = A^T m for six vectors (rows of A^T: [1 1 1 1 1 0], [0 1 -1 2 -2 0], [0 1 1 4 4 0],
// [0 1 -1 8 -8 1]).
template <class V>
__attribute__((always_inline)) inline void at6(V m0, V m1, V m2, V m3, V m4, V m5, V* o) {
  const V s12 = m1 + m2, d12 = m1 - m2, s34 = m3 + m4, d34 = m3 - m4;
  o[0] = m0 + s12 + s34;
  o[1] = d12 + 2.f * d34;
  o[2] = s12 + 4.f * s34;
  o[3] = d12 + 8.f * d34 + m5;
}

}  // namespace tessera::x86
