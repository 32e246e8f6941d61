// Vector exp for the x86 kernels (Softmax, LogSoftmax; shareable by Exp, Sigmoid, Gelu...).
// Include after simd_x86.h, in a file compiled with its ISA flags (see simd_x86.h).
//
// exp(x), float32, lane-wise. Algorithm and constants: Cephes expf.c (S. L. Moshier,
// Cephes Math Library 2.2, 1992; the same constants as avx_mathfun / sse_mathfun):
//   n = round(x * log2(e)),  r = x - n * ln2  (Cody–Waite: ln2 = C1 + C2, C1 = 0.693359375
//   exact in 9 bits, so n * C1 is exact for |n| <= 2^14), |r| <= ln2 / 2,
//   exp(r) ~ 1 + r + r^2 * P(r), P a degree-5 minimax polynomial,
//   exp(x) = 2^n * exp(r) (2^n built in the exponent field).
// Error: at most 2 ulp against exp in double over [-87.3, 88.3] (tests/unit/x86_softmax_test.cc
// measures it on a dense sweep). Range: x > 88.376 returns exp(88.376) ~ 2.4e38 (no +inf),
// x < -87.336 returns 0 (no subnormals), NaN gives NaN.
#pragma once

#ifndef TSR_X86_ISA
#error "include simd_x86.h first"
#endif

namespace tessera::x86::TSR_X86_ISA {

inline Vec::T vec_exp(Vec::T x) {
  const Vec::T lo = Vec::set1(-87.3365447f), hi = Vec::set1(88.3762626647949f);
  const Vec::T in = x;
  x = Vec::min(hi, Vec::max(lo, x));  // operand order keeps NaN (maxps returns the 2nd on NaN)
  const Vec::T n = Vec::round(Vec::mul(x, Vec::set1(1.44269504088896341f)));
  x = Vec::fmadd(n, Vec::set1(-0.693359375f), x);
  x = Vec::fmadd(n, Vec::set1(2.12194440e-4f), x);
  Vec::T p = Vec::set1(1.9875691500e-4f);
  p = Vec::fmadd(p, x, Vec::set1(1.3981999507e-3f));
  p = Vec::fmadd(p, x, Vec::set1(8.3334519073e-3f));
  p = Vec::fmadd(p, x, Vec::set1(4.1665795894e-2f));
  p = Vec::fmadd(p, x, Vec::set1(1.6666665459e-1f));
  p = Vec::fmadd(p, x, Vec::set1(5.0000001201e-1f));
  const Vec::T x2 = Vec::mul(x, x);
  p = Vec::fmadd(p, x2, Vec::add(x, Vec::set1(1.f)));
  return Vec::zero_if_less(in, lo, Vec::mul(p, Vec::pow2i(n)));
}

}  // namespace tessera::x86::TSR_X86_ISA
