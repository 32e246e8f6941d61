// FusedActivation (backends/backend.h): the activations the planner fuses into Conv, MatMul
// and Gemm kernels, with the math of their ONNX ops in float:
//   Relu-6/13/14: max(x, 0); LeakyRelu-6/16: x >= 0 ? x : alpha * x; Clip-6/11/12/13:
//   min(max(x, min), max); Sigmoid-6/13: 1 / (1 + exp(-x)); HardSigmoid-6:
//   max(0, min(1, alpha * x + beta)); HardSwish-14: x * max(0, min(1, x / 6 + 1/2));
//   Tanh-6/13: tanh(x); then the optional scalar affine map act(x) * scale + shift (a fused
//   Mul and Add). Written as a multiply and an add (not std::fma, which is a slow library
//   call on a baseline x86-64 build); the compiler may contract it into one FMA where the
//   target has one, as the SIMD micro-kernel epilogues do.
// The reference kernels evaluate in double and round once; these evaluate in float, so
// Sigmoid and Tanh may differ from them by an ulp or two, the others not at all.
#include <algorithm>
#include <cmath>

#include "backends/backend.h"

namespace tessera {

namespace {
float activate(const FusedActivation& a, float x) {
  using Kind = FusedActivation::Kind;
  const float alpha = a.alpha, beta = a.beta;
  switch (a.kind) {
    case Kind::kNone: return x;
    case Kind::kRelu: return x > 0.f ? x : (x == x ? 0.f : x);  // NaN stays NaN
    case Kind::kLeakyRelu: return x >= 0.f ? x : alpha * x;
    case Kind::kClip: return x < alpha ? alpha : (x > beta ? beta : x);
    case Kind::kSigmoid: return 1.f / (1.f + std::exp(-x));
    case Kind::kHardSigmoid: return std::max(0.f, std::min(1.f, alpha * x + beta));
    case Kind::kHardSwish: return x * std::max(0.f, std::min(1.f, x / 6.f + 0.5f));
    case Kind::kTanh: return std::tanh(x);
  }
  return x;
}
}  // namespace

float FusedActivation::apply(float x) const {
  const float r = activate(*this, x);
  return has_affine() ? r * scale + shift : r;
}

void FusedActivation::apply(float* x, int64_t n) const {
  apply_activation(x, n);
  if (has_affine())
    for (int64_t i = 0; i < n; ++i) x[i] = x[i] * scale + shift;
}

void FusedActivation::apply_activation(float* x, int64_t n) const {
  switch (kind) {
    case Kind::kNone: return;
    case Kind::kRelu:
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] > 0.f ? x[i] : (x[i] == x[i] ? 0.f : x[i]);
      return;
    case Kind::kClip: {
      const float lo = alpha, hi = beta;
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] < lo ? lo : (x[i] > hi ? hi : x[i]);
      return;
    }
    case Kind::kHardSwish:
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] * std::max(0.f, std::min(1.f, x[i] / 6.f + 0.5f));
      return;
    default:
      for (int64_t i = 0; i < n; ++i) x[i] = activate(*this, x[i]);
  }
}

}  // namespace tessera
