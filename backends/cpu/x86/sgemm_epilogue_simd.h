// Internal to the SGEMM micro-kernels (sgemm_avx512.cc, sgemm_avx2.cc): the epilogue of one
// vector of a C row, written once over a vector-traits type V so that every ISA file applies
// the same terms in the same order (see SgemmEpilogue; the AVX-512 kernel writes the same
// sequence with masked loads and stores, and takes activate() and the constants from here):
//   r = alpha * acc + bias[j]; r += beta * C; r += row_bias[i]; r += addend[i][j]; r = act(r);
//   r = r * scale + shift (the activation's optional affine map)
// Activations follow their ONNX ops (FusedActivation), NaN-propagating like the reference
// kernels: max/min are ordered so that a NaN r is returned (x86 MAXPS/MINPS return the
// second operand when either is NaN). HardSwish divides by 6 as the reference does.
//
// V provides: using T; zero(), set1(float), load(const float*), store(float*, T), add, mul,
// div, fmadd(a, b, c) = a*b + c, max(a, b), min(a, b), select_ge0(x, if_ge0, otherwise).
#pragma once

#include "backends/cpu/x86/sgemm_kernels.h"

namespace tessera::cpu {

template <class V>
struct EpilogueSimd {
  using T = typename V::T;
  using K = FusedActivation::Kind;
  T alpha, beta, p0, p1, six, half, one, zero, scale, shift;
  K act;
  bool read_c, affine;

  explicit EpilogueSimd(const SgemmEpilogue& ep)
      : alpha(V::set1(ep.alpha)), beta(V::set1(ep.beta)), p0(V::set1(ep.act.alpha)), p1(V::set1(ep.act.beta)),
        six(V::set1(6.f)), half(V::set1(0.5f)), one(V::set1(1.f)), zero(V::zero()), scale(V::set1(ep.act.scale)),
        shift(V::set1(ep.act.shift)), act(ep.act.kind), read_c(ep.beta != 0.f), affine(ep.act.has_affine()) {}

  /// Each activation on one vector (the kinds kernel_applies() accepts; the others pass r).
  static inline T relu(T zero, T r) { return V::max(zero, r); }
  static inline T clip(T lo, T hi, T r) { return V::min(hi, V::max(lo, r)); }

  /// The activation (only the kinds kernel_applies() accepts), chosen per call.
  inline T activate(T r) const {
    switch (act) {
      case K::kRelu: return relu(zero, r);
      case K::kLeakyRelu: return V::select_ge0(r, r, V::mul(p0, r));
      case K::kClip: return clip(p0, p1, r);
      case K::kHardSigmoid: return V::max(zero, V::min(one, V::add(V::mul(p0, r), p1)));
      case K::kHardSwish: return V::mul(r, V::max(zero, V::min(one, V::add(V::div(r, six), half))));
      default: return r;
    }
  }

  /// Calls f(a) once with a as the activation, a callable T -> T chosen once here rather
  /// than per vector: None, Relu and Clip inlined, the other kinds through activate(). For
  /// a tile's epilogue, whose switch per stored vector (a jump table each) cost MobileNetV2's
  /// short-reduction convs ~18% of their time.
  template <class F>
  __attribute__((always_inline)) inline void with_activation(F&& f) const {
    switch (act) {
      case K::kNone: f([](T r) __attribute__((always_inline)) { return r; }); break;
      case K::kRelu: f([z = zero](T r) __attribute__((always_inline)) { return relu(z, r); }); break;
      case K::kClip: f([lo = p0, hi = p1](T r) __attribute__((always_inline)) { return clip(lo, hi, r); }); break;
      default: f([this](T r) __attribute__((always_inline)) { return activate(r); }); break;
    }
  }

  /// Finishes one vector of row i at column offset j: acc the products, bias_j the column
  /// bias vector (zero when none), rb the row bias (0 when none), z the addend pointer or
  /// nullptr; stores into c.
  inline void finish(T acc, T bias_j, T rb, const float* z, float* c) const {
    T r = V::fmadd(alpha, acc, bias_j);
    if (read_c) r = V::fmadd(beta, V::load(c), r);
    r = V::add(r, rb);
    if (z) r = V::add(r, V::load(z));
    r = activate(r);
    if (affine) r = V::fmadd(r, scale, shift);
    V::store(c, r);
  }
};

}  // namespace tessera::cpu
