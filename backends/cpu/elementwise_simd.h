// The float32 elementwise ops of elementwise_ops.h written once for any vector ISA, as
// templates over a vector type V that a per-ISA file defines (see Vec16 in
// backends/cpu/x86/vec16_avx512.h for the full list of members):
//   V::F (a register of V::kWidth floats), V::M (a lane mask), load/store (+ _partial for the
//   first n < kWidth lanes), set1, add, sub, mul, div, fmadd(a, b, c) = a * b + c (fused),
//   sqrt, max(a, b) = a > b ? a : b and min(a, b) = a < b ? a : b (x86 maxps/minps order:
//   the second operand when unordered), round (to nearest even), lt/ge/eq/unord masks,
//   select(m, t, f), bit ops and_/or_/xor_, scale_pow2(y, n) = y * 2^n for integral n in
//   [-150, 130] without overflowing the exponent field.
//
// Rule: everything here is a template on V, and only per-ISA files (compiled with their own
// -m flags) include this header. A non-template inline function here would be compiled with
// AVX-512 instructions in one file and could be picked by the linker for all callers.
//
// Accuracy (measured by tests/unit/x86_elementwise_test.cc against long double on a dense
// sweep of inputs, every 331st float bit pattern): exp 0.98 ulp, sigmoid 2.21, tanh 1.26,
// erf 2.26, Gelu(erf) 3.74 (4.50 over every float, see gelu_erf), Gelu(tanh) 7.7 for
// x >= -3 (growing as |2y| ulp below, see gelu_tanh); HardSwish / HardSigmoid within 2 ulp
// of the reference; +, -, *, /, max, min, relu, clip, sqrt, neg, abs bit-exact.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/cpu/elementwise_ops.h"

namespace tessera::cpu::simd {

// ---- several registers as one vector ---------------------------------------------------------

/// N registers of V as one vector of N * V::kWidth lanes: each operation is N independent
/// instructions, one per register. The transcendental functions below are long dependency
/// chains (~60 operations from x to Gelu(x)); run on one register at a time, the
/// out-of-order window holds too few of them to keep the FMA units busy. Four at a time
/// they ran 1.2-1.4x faster (AVX2, hot data, ns a float from one register to four: exp
/// 0.44 -> 0.34, sigmoid 0.61 -> 0.48, tanh 0.79 -> 0.66, erf 1.38 -> 1.16, a draft of the
/// Gelu below 1.43 -> 1.18). Only the lane-wise members the functions use; the loops below
/// handle the tails with V itself.
template <class V, int N>
struct VecN {
  struct F {
    typename V::F r[N];
  };
  struct M {
    typename V::M r[N];
  };
  static constexpr int kWidth = V::kWidth * N;

#define TSR_VECN_EACH(T, expr)                                     \
  T o;                                                             \
  _Pragma("GCC unroll 8") for (int j = 0; j < N; ++j) o.r[j] = expr; \
  return o;
#define TSR_VECN_OP1(name) \
  __attribute__((always_inline)) static F name(F a) { TSR_VECN_EACH(F, V::name(a.r[j])) }
#define TSR_VECN_OP2(R, name) \
  __attribute__((always_inline)) static R name(F a, F b) { TSR_VECN_EACH(R, V::name(a.r[j], b.r[j])) }
  __attribute__((always_inline)) static F load(const float* p) { TSR_VECN_EACH(F, V::load(p + j * V::kWidth)) }
  __attribute__((always_inline)) static void store(float* p, F v) {
#pragma GCC unroll 8
    for (int j = 0; j < N; ++j) V::store(p + j * V::kWidth, v.r[j]);
  }
  __attribute__((always_inline)) static F set1(float f) { TSR_VECN_EACH(F, V::set1(f)) }
  TSR_VECN_OP2(F, add) TSR_VECN_OP2(F, sub) TSR_VECN_OP2(F, mul) TSR_VECN_OP2(F, div)
  TSR_VECN_OP2(F, max) TSR_VECN_OP2(F, min) TSR_VECN_OP2(F, and_) TSR_VECN_OP2(F, or_)
  TSR_VECN_OP2(F, xor_) TSR_VECN_OP2(F, andnot_) TSR_VECN_OP2(F, scale_pow2)
  TSR_VECN_OP2(M, lt) TSR_VECN_OP2(M, ge) TSR_VECN_OP2(M, eq) TSR_VECN_OP2(M, unord)
  TSR_VECN_OP1(sqrt) TSR_VECN_OP1(round)
  __attribute__((always_inline)) static F fmadd(F a, F b, F c) { TSR_VECN_EACH(F, V::fmadd(a.r[j], b.r[j], c.r[j])) }
  __attribute__((always_inline)) static F select(M m, F t, F f) { TSR_VECN_EACH(F, V::select(m.r[j], t.r[j], f.r[j])) }
#undef TSR_VECN_OP2
#undef TSR_VECN_OP1
#undef TSR_VECN_EACH
};

// ---- transcendental functions ------------------------------------------------------------

/// Horner's rule, highest degree first: c[0] x^(N-1) + c[1] x^(N-2) + ... + c[N-1], one
/// FMA per step (the polynomials below are written as their coefficient lists).
template <class V, size_t N>
__attribute__((always_inline)) inline typename V::F horner(typename V::F x, const float (&c)[N]) {
  typename V::F p = V::set1(c[0]);
#pragma GCC unroll 16
  for (size_t i = 1; i < N; ++i) p = V::fmadd(p, x, V::set1(c[i]));
  return p;
}

/// exp(x + x_lo) as y * 2^n, unscaled: y in [0.7, 1.42], n integral in [-150, 128]
/// (V::scale_pow2(y, n) gives the result). Cephes expf (S. L. Moshier, Cephes Math Library
/// 2.2, expf.c): n = round(x log2 e), r = x - n ln 2 with ln 2 split in two (Cody & Waite,
/// "Software Manual for the Elementary Functions", 1980), exp(r) = 1 + r + r^2 P(r) with
/// Cephes' degree-5 P on |r| <= ln2/2. x is clamped to [-104, 88.8] first (exp(-104)
/// rounds to 0, exp(88.8) to inf); NaN stays NaN. kLo: x_lo (|x_lo| << 1, e.g. the rounding
/// error of x) is added to the reduced argument r, where it is exact enough; without it
/// x_lo is ignored. Max error: 1 ulp for normal results.
template <class V, bool kLo>
void exp_unscaled(typename V::F x, typename V::F x_lo, typename V::F* y, typename V::F* n) {
  using F = typename V::F;
  x = V::min(V::set1(88.8f), x);  // min/max with the constant first: NaN passes through
  x = V::max(V::set1(-104.f), x);
  *n = V::round(V::mul(x, V::set1(1.44269504088896341f)));
  F r = V::fmadd(*n, V::set1(-0.693359375f), x);  // ln 2 = 0.693359375 - 2.12194440e-4 (+ tiny)
  r = V::fmadd(*n, V::set1(2.12194440e-4f), r);
  if constexpr (kLo) r = V::add(r, x_lo);
  const F z = V::mul(r, r);
  const F p = horner<V>(r, {
      1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f, 4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f});
  *y = V::add(V::fmadd(p, z, r), V::set1(1.f));  // exp(r) = 1 + r + r^2 P(r)
}

/// exp(x): exp_unscaled, then 2^n applied in two halves (so results down to the subnormals
/// and up to overflow are right). Max error: 1 ulp for normal results.
template <class V>
typename V::F exp(typename V::F x) {
  typename V::F y, n;
  exp_unscaled<V, false>(x, x, &y, &n);
  return V::scale_pow2(y, n);
}

/// sigmoid(x) = 1 / (1 + exp(-x)) for x >= 0, exp(x) / (1 + exp(x)) for x < 0: one
/// exp(-|x|) that never overflows, so results down to the subnormals keep their digits.
/// Error: exp's plus two roundings (<= 3 ulp).
template <class V>
typename V::F sigmoid(typename V::F x) {
  using F = typename V::F;
  const F one = V::set1(1.f);
  const F e = exp<V>(V::or_(x, V::set1(-0.f)));  // exp(-|x|)
  return V::div(V::select(V::lt(x, V::set1(0.f)), e, one), V::add(one, e));
}

/// tanh(x). Cephes tanhf: |x| < 0.625: x + x^3 P(x^2) (degree-4 P, Cephes' coefficients);
/// else 1 - 2 / (exp(2|x|) + 1). Computed on |x| and given x's sign (tanh(-0) = -0).
template <class V>
typename V::F tanh(typename V::F x) {
  using F = typename V::F;
  const F sign = V::set1(-0.f);
  const F ax = V::andnot_(sign, x);
  const F z = V::mul(ax, ax);
  const F p = horner<V>(z, {
      -5.70498872745e-3f, 2.06390887954e-2f, -5.37397155531e-2f, 1.33314422036e-1f, -3.33332819422e-1f});
  const F small = V::fmadd(V::mul(p, z), ax, ax);
  const F one = V::set1(1.f);
  const F e = exp<V>(V::add(ax, ax));
  const F big = V::sub(one, V::div(V::set1(2.f), V::add(e, one)));
  const F r = V::select(V::lt(ax, V::set1(0.625f)), small, big);
  return V::or_(r, V::and_(x, sign));
}

/// erfc(t) for t >= 0.921875 (t given as t_hi + t_lo, |t_lo| <= ulp(t_hi)), as
///   erfc(t) = exp(-t^2) * G(1/t) / t,   G(u) = erfcx(1/u) / u,
/// G a degree-12 polynomial in (u - 0.5924) fitted (least squares on Chebyshev nodes, relative
/// error, then rounded to float: 7.7e-8 relative when evaluated in float) on u in [0.1,
/// 1.0847], i.e. t in [0.921875, 10]; larger t are clamped (erfc(10) = 2e-45: the result
/// is then 0 or the smallest subnormal). t^2 is kept as hi + lo (the FMA gives hi's
/// rounding error exactly), exp(-(hi + lo)) = exp(-hi) (1 - lo), so the argument's
/// rounding does not become a relative error of 2 t^2 ulp.
template <class V>
typename V::F erfc_big(typename V::F t_hi, typename V::F t_lo) {
  using F = typename V::F;
  t_hi = V::min(V::set1(10.5f), t_hi);  // inf -> 10.5 (erfc -> 0), NaN passes
  const F sq = V::mul(t_hi, t_hi);
  const F sq_lo = V::fmadd(V::add(t_hi, t_hi), t_lo, V::fmadd(t_hi, t_hi, V::xor_(sq, V::set1(-0.f))));
  const F u = V::div(V::set1(1.f), t_hi);
  const F v = V::sub(V::max(V::set1(0.1f), u), V::set1(5.923728943e-01f));
  const F g = horner<V>(v, {
      -9.528373182e-02f, 6.939548254e-02f, 5.223652720e-02f, -8.174329251e-02f, 5.869200826e-02f, -3.489914909e-02f,
      -2.913126256e-03f, 5.070829391e-02f, -8.625989407e-02f, 8.282758296e-02f, -8.867820725e-03f, -1.712598503e-01f,
      4.951191545e-01f});
  const F gu = V::mul(g, u);
  // exp(-sq) * gu * (1 - sq_lo)
  return V::mul(exp<V>(V::xor_(sq, V::set1(-0.f))), V::fmadd(V::xor_(gu, V::set1(-0.f)), sq_lo, gu));
}

/// erf(t) / t for |t| < 0.921875 as a degree-6 polynomial in t^2 (least-squares fit on
/// Chebyshev nodes, relative error 5.5e-8 with float coefficients).
template <class V>
typename V::F erf_small_ratio(typename V::F t) {
  using F = typename V::F;
  const F s = V::mul(t, t);
  const F p = horner<V>(s, {
      8.365006215e-05f, -8.141392027e-04f, 5.200905260e-03f, -2.685934119e-02f, 1.128369421e-01f, -3.761263490e-01f});
  return V::fmadd(p, s, V::set1(1.128379226e+00f));
}

/// erf(x): x * (erf(x)/x) for |x| < 0.921875, else sign(x) (1 - erfc(|x|)).
template <class V>
typename V::F erf(typename V::F x) {
  using F = typename V::F;
  const F sign = V::set1(-0.f);
  const F ax = V::andnot_(sign, x);
  const F small = V::mul(x, erf_small_ratio<V>(x));
  const F big = V::or_(V::sub(V::set1(1.f), erfc_big<V>(ax, V::set1(0.f))), V::and_(x, sign));
  return V::select(V::lt(ax, V::set1(0.921875f)), small, big);
}

/// Gelu, approximate="none": x Phi(x), Phi(x) = 1 - erfc(t) / 2 for x >= 0 and erfc(t) / 2
/// for x < 0, with t = |x| / sqrt(2); with h = x / 2 and m = h erfc(t): x - m for x >= 0
/// (m <= x / 2: no cancellation), m for x < 0 (no 1 + erf(z) to cancel). One erfc for all
/// t >= 0, in the form of Numerical Recipes' erfcc (Press et al., 2nd ed., 6.2):
///   erfc(t) = u E(u) exp(-t^2),  u = 1 / (1 + t),  E(u) = erfcx(t) / u,
/// E a degree-12 polynomial in (u - 0.5434783) fitted by scripts/fit_gelu_erfcx.py (least
/// squares on Chebyshev nodes for the relative error, reweighted toward minimax, then
/// rounded to float: 6.4e-9 relative before the rounding) on u in [1/11.5, 1], i.e. t in
/// [0, 10.5]; larger t are clamped (erfc(10.5) = 7e-50: m is then 0). t is kept as
/// t + t_lo and t^2 as sq + sq_lo (the FMAs give the rounding errors), u's rounding is
/// corrected for (below), both corrections go into exp's reduced argument, and the product
/// is scaled by 2^n last, so m keeps its relative accuracy down to the subnormals. x is clamped to [-20, 20] inside (Gelu(x) = x or -0
/// beyond): +inf gives +inf; -inf gives NaN, as the reference; NaN stays NaN; -0 gives -0.
/// Measured: 3.74 ulp on tests/unit/x86_elementwise_test.cc's sweep (every 331st float),
/// 4.50 ulp over every float in [-20, 20] (at x = -10.105, checked once against long
/// double: 48 inputs above 4 ulp); the three-piece erf/erfc form it replaced had 5.0 on
/// the sweep and took 1.5x as long (AVX2, 4 registers a step, hot data: 1.33 against 2.0
/// ns a float).
template <class V>
typename V::F gelu_erf(typename V::F x) {
  using F = typename V::F;
  const F sign = V::set1(-0.f);
  const F xc = V::max(V::set1(-20.f), V::min(V::set1(20.f), x));
  const F c_hi = V::set1(0.707106769f), c_lo = V::set1(1.21016175e-08f);  // 1/sqrt(2) = c_hi + c_lo
  const F z = V::mul(xc, c_hi);
  const F z_lo = V::fmadd(xc, c_lo, V::fmadd(xc, c_hi, V::xor_(z, sign)));
  const F z_sign = V::and_(z, sign);
  const F t = V::min(V::set1(10.5f), V::xor_(z, z_sign));  // |z|
  const F t_lo = V::xor_(z_lo, z_sign);
  const F d = V::add(t, V::set1(1.f));
  const F u = V::div(V::set1(1.f), d);
  const F v = V::sub(u, V::set1(5.434782505e-01f));
  const F e = horner<V>(v, {
      3.294819593e-01f, -6.767844558e-01f, 2.484118938e-01f, 3.600123227e-01f, -4.955592752e-01f, 2.885302603e-01f,
      3.826906905e-02f, -3.101501167e-01f, 3.387705386e-01f, -4.644842818e-02f, -3.923822343e-01f, 4.416218102e-01f,
      8.751047850e-01f});
  // u E(u) = erfcx(t') for t' = 1/u - 1, not quite t: u carries the roundings of 1 + t
  // and of the division, and t its own (t_lo). With D = 1 + t + t_lo = d + d_lo + t_lo
  // (d_lo exact: Fast2Sum of t and 1) and rho = 1 - u D, t - t' = -D rho, and
  // erfcx(t) = erfcx(t') (1 + L D rho), L = -erfcx'/erfcx; L D is 1.0-1.28 on t >= 0,
  // taken as 1.15 (0.13 rho: under 0.2 ulp). Worth 1.2 ulp at t ~ 3 (4.97 -> 3.74).
  const F big = V::max(t, V::set1(1.f)), small = V::min(t, V::set1(1.f));
  const F d_lo = V::sub(small, V::sub(d, big));
  F rho = V::fmadd(V::xor_(u, sign), d, V::set1(1.f));
  rho = V::fmadd(V::xor_(u, sign), V::add(d_lo, t_lo), rho);
  // t^2 = sq + sq_lo: sq_lo = (t t - sq) + 2 t t_lo. exp's argument -sq, its low part
  // -sq_lo + 1.15 rho.
  const F sq = V::mul(t, t);
  const F sq_lo = V::fmadd(V::add(t, t), t_lo, V::fmadd(t, t, V::xor_(sq, sign)));
  F y, n;
  exp_unscaled<V, true>(V::xor_(sq, sign), V::fmadd(V::set1(1.15f), rho, V::xor_(sq_lo, sign)), &y, &n);
  const F m = V::scale_pow2(V::mul(y, V::mul(V::mul(V::mul(xc, V::set1(0.5f)), u), e)), n);
  // x >= 0: x - m >= x / 2 >= 0, so x's sign bit only matters for -0 (-0 - -0 = +0; the
  // reference gives -0).
  const F r = V::select(V::lt(x, V::set1(0.f)), m, V::or_(V::sub(x, m), V::and_(x, sign)));
  // -inf: NaN (-inf * 0), as the reference and onnxruntime give, rather than the limit -0.
  return V::select(V::eq(x, V::set1(-__builtin_inff())), V::set1(__builtin_nanf("")), r);
}

/// Gelu, approximate="tanh": x/2 (1 + tanh(y)) = x / (1 + exp(-2y)),
/// 2y = x (2 sqrt(2/pi) + 2 * 0.044715 sqrt(2/pi) x^2); the second form has no cancellation
/// for negative x. The rounding of 2y (a few ulp) becomes a relative error of about
/// |2y| ulp for x << 0 (x = -5: ~3e-6).
template <class V>
typename V::F gelu_tanh(typename V::F x) {
  using F = typename V::F;
  // 2y = c1 x + c2 x^3 with c1 = 2 sqrt(2/pi) split as c1_hi + c1_lo; the FMAs round the
  // large term c1 x only once.
  // x clamped to [-20, 20] (exp(-2y) is then 0 or inf already) so that inf - inf cannot
  // arise; the final x / (1 + ...) uses x itself: +inf -> +inf, -inf -> NaN (the reference).
  const F xc = V::max(V::set1(-20.f), V::min(V::set1(20.f), x));
  const F p = V::mul(V::mul(V::set1(0.0713548162726f), V::mul(xc, xc)), xc);
  const F two_y = V::fmadd(V::set1(1.595769167f), xc, V::fmadd(V::set1(-4.534068054e-08f), xc, p));
  return V::div(x, V::add(V::set1(1.f), exp<V>(V::xor_(two_y, V::set1(-0.f)))));
}

// ---- one vector of each op -----------------------------------------------------------------

template <class V, BinaryOp kOp>
typename V::F binary_op(typename V::F a, typename V::F b) {
  if constexpr (kOp == BinaryOp::kAdd) {
    return V::add(a, b);
  } else if constexpr (kOp == BinaryOp::kSub) {
    return V::sub(a, b);
  } else if constexpr (kOp == BinaryOp::kMul) {
    return V::mul(a, b);
  } else if constexpr (kOp == BinaryOp::kDiv) {
    return V::div(a, b);
  } else if constexpr (kOp == BinaryOp::kMax) {  // a < b ? b : a == maxps(b, a); NaN -> canonical NaN
    return V::select(V::unord(a, b), V::set1(__builtin_nanf("")), V::max(b, a));
  } else if constexpr (kOp == BinaryOp::kMin) {  // b < a ? b : a == minps(b, a)
    return V::select(V::unord(a, b), V::set1(__builtin_nanf("")), V::min(b, a));
  } else {  // kPRelu: a < 0 ? b * a : a
    return V::select(V::lt(a, V::set1(0.f)), V::mul(b, a), a);
  }
}

template <class V, UnaryOp kOp>
typename V::F unary_op(const UnaryParams& p, typename V::F x) {
  using F = typename V::F;
  if constexpr (kOp == UnaryOp::kRelu) {
    return V::max(V::set1(0.f), x);  // 0 > x ? 0 : x
  } else if constexpr (kOp == UnaryOp::kLeakyRelu) {
    return V::select(V::ge(x, V::set1(0.f)), x, V::mul(x, V::set1(p.alpha)));
  } else if constexpr (kOp == UnaryOp::kClip) {
    return V::min(V::set1(p.beta), V::max(V::set1(p.alpha), x));  // lo > x ? lo : x, then hi < v ? hi : v
  } else if constexpr (kOp == UnaryOp::kSigmoid) {
    return sigmoid<V>(x);
  } else if constexpr (kOp == UnaryOp::kHardSigmoid) {
    const F t = V::min(V::fmadd(x, V::set1(p.alpha), V::set1(p.beta)), V::set1(1.f));  // t < 1 ? t : 1 (NaN -> 1)
    return V::max(t, V::set1(0.f));
  } else if constexpr (kOp == UnaryOp::kHardSwish) {
    // x / 6 + 1/2 as (x + 3) / 6: x + 3 is exact near the kink at -3 (Sterbenz), where
    // x * (1/6) + 1/2 would cancel and lose most digits of t.
    const F t = V::min(V::div(V::add(x, V::set1(3.f)), V::set1(6.f)), V::set1(1.f));
    return V::mul(x, V::max(t, V::set1(0.f)));
  } else if constexpr (kOp == UnaryOp::kTanh) {
    return tanh<V>(x);
  } else if constexpr (kOp == UnaryOp::kExp) {
    return exp<V>(x);
  } else if constexpr (kOp == UnaryOp::kErf) {
    return erf<V>(x);
  } else if constexpr (kOp == UnaryOp::kGeluErf) {
    return gelu_erf<V>(x);
  } else if constexpr (kOp == UnaryOp::kGeluTanh) {
    return gelu_tanh<V>(x);
  } else if constexpr (kOp == UnaryOp::kSqrt) {
    return V::sqrt(x);
  } else if constexpr (kOp == UnaryOp::kNeg) {
    return V::xor_(x, V::set1(-0.f));
  } else if constexpr (kOp == UnaryOp::kAbs) {
    return V::select(V::lt(x, V::set1(0.f)), V::xor_(x, V::set1(-0.f)), x);
  } else if constexpr (kOp == UnaryOp::kSquare) {
    return V::mul(x, x);
  } else if constexpr (kOp == UnaryOp::kPowHalf) {
    const F s = V::add(V::sqrt(x), V::set1(0.f));  // sqrt(-0) + 0 = +0
    return V::select(V::eq(x, V::set1(-__builtin_inff())), V::set1(__builtin_inff()), s);
  } else {
    return x;
  }
}

// ---- loops over n floats ---------------------------------------------------------------------

/// y[i] = op(a[i * sa], b[i * sb]) for i < n, sa and sb in {0, 1}; kSa/kSb: the strides.
template <class V, BinaryOp kOp, bool kSa, bool kSb>
void binary_loop(const float* a, const float* b, float* y, int64_t n) {
  using F = typename V::F;
  constexpr int64_t W = V::kWidth;
  const F va0 = kSa ? V::set1(0.f) : V::set1(*a), vb0 = kSb ? V::set1(0.f) : V::set1(*b);
  int64_t i = 0;
  for (; i + 4 * W <= n; i += 4 * W) {
#pragma GCC unroll 4
    for (int u = 0; u < 4; ++u) {
      const F va = kSa ? V::load(a + i + u * W) : va0, vb = kSb ? V::load(b + i + u * W) : vb0;
      V::store(y + i + u * W, binary_op<V, kOp>(va, vb));
    }
  }
  for (; i + W <= n; i += W) {
    const F va = kSa ? V::load(a + i) : va0, vb = kSb ? V::load(b + i) : vb0;
    V::store(y + i, binary_op<V, kOp>(va, vb));
  }
  if (i < n) {
    const int r = static_cast<int>(n - i);
    const F va = kSa ? V::load_partial(a + i, r) : va0, vb = kSb ? V::load_partial(b + i, r) : vb0;
    V::store_partial(y + i, binary_op<V, kOp>(va, vb), r);
  }
}

template <class V, BinaryOp kOp>
void binary_strided(const float* a, int64_t sa, const float* b, int64_t sb, float* y, int64_t n) {
  if (sa && sb) binary_loop<V, kOp, true, true>(a, b, y, n);
  else if (sa) binary_loop<V, kOp, true, false>(a, b, y, n);
  else if (sb) binary_loop<V, kOp, false, true>(a, b, y, n);
  else binary_loop<V, kOp, false, false>(a, b, y, n);  // both repeated: n copies of one value
}

/// The ISA's ElementwiseCore::binary.
template <class V>
void binary(BinaryOp op, const float* a, int64_t sa, const float* b, int64_t sb, float* y, int64_t n) {
  switch (op) {
    case BinaryOp::kAdd: return binary_strided<V, BinaryOp::kAdd>(a, sa, b, sb, y, n);
    case BinaryOp::kSub: return binary_strided<V, BinaryOp::kSub>(a, sa, b, sb, y, n);
    case BinaryOp::kMul: return binary_strided<V, BinaryOp::kMul>(a, sa, b, sb, y, n);
    case BinaryOp::kDiv: return binary_strided<V, BinaryOp::kDiv>(a, sa, b, sb, y, n);
    case BinaryOp::kMax: return binary_strided<V, BinaryOp::kMax>(a, sa, b, sb, y, n);
    case BinaryOp::kMin: return binary_strided<V, BinaryOp::kMin>(a, sa, b, sb, y, n);
    case BinaryOp::kPRelu: return binary_strided<V, BinaryOp::kPRelu>(a, sa, b, sb, y, n);
  }
}

/// The ops that are long dependency chains: run VecN<V, 4> at a time (see VecN). (A
/// variable template, not a function: see the rule at the top.)
template <UnaryOp kOp>
constexpr bool kUnaryIsChain = kOp == UnaryOp::kSigmoid || kOp == UnaryOp::kTanh || kOp == UnaryOp::kExp ||
                               kOp == UnaryOp::kErf || kOp == UnaryOp::kGeluErf || kOp == UnaryOp::kGeluTanh;

/// y[i] = op(x[i]) for i < n (y may be x). flatten: at -O2 the compiler would otherwise
/// keep some of the VecN helpers out of line and pass their registers through memory.
template <class V, UnaryOp kOp>
__attribute__((flatten)) void unary_loop(const UnaryParams& p, const float* x, float* y, int64_t n) {
  using F = typename V::F;
  constexpr int64_t W = V::kWidth;
  int64_t i = 0;
  if constexpr (kUnaryIsChain<kOp>) {
    using V4 = VecN<V, 4>;
    for (; i + V4::kWidth <= n; i += V4::kWidth) V4::store(y + i, unary_op<V4, kOp>(p, V4::load(x + i)));
  }
  for (; i + 2 * W <= n; i += 2 * W) {
    const F v0 = V::load(x + i), v1 = V::load(x + i + W);
    V::store(y + i, unary_op<V, kOp>(p, v0));
    V::store(y + i + W, unary_op<V, kOp>(p, v1));
  }
  for (; i + W <= n; i += W) V::store(y + i, unary_op<V, kOp>(p, V::load(x + i)));
  if (i < n) {
    const int r = static_cast<int>(n - i);
    V::store_partial(y + i, unary_op<V, kOp>(p, V::load_partial(x + i, r)), r);
  }
}

/// The ISA's ElementwiseCore::unary.
template <class V>
void unary(UnaryOp op, const UnaryParams& p, const float* x, float* y, int64_t n) {
  switch (op) {
#define TSR_UNARY_CASE(k) \
  case UnaryOp::k: return unary_loop<V, UnaryOp::k>(p, x, y, n);
    TSR_UNARY_CASE(kRelu) TSR_UNARY_CASE(kLeakyRelu) TSR_UNARY_CASE(kClip) TSR_UNARY_CASE(kSigmoid)
    TSR_UNARY_CASE(kHardSigmoid) TSR_UNARY_CASE(kHardSwish) TSR_UNARY_CASE(kTanh) TSR_UNARY_CASE(kExp)
    TSR_UNARY_CASE(kErf) TSR_UNARY_CASE(kGeluErf) TSR_UNARY_CASE(kGeluTanh) TSR_UNARY_CASE(kSqrt)
    TSR_UNARY_CASE(kNeg) TSR_UNARY_CASE(kAbs) TSR_UNARY_CASE(kSquare) TSR_UNARY_CASE(kPowHalf)
    TSR_UNARY_CASE(kCopy)
#undef TSR_UNARY_CASE
  }
}

}  // namespace tessera::cpu::simd
