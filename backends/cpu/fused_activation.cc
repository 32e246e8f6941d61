// FusedActivation (backends/backend.h): the activations the planner fuses into Conv, MatMul
// and Gemm kernels, with the math of their ONNX ops in float:
//   Relu-6/13/14: max(x, 0); LeakyRelu-6/16: x >= 0 ? x : alpha * x; Clip-6/11/12/13:
//   min(max(x, min), max); Sigmoid-6/13: 1 / (1 + exp(-x)); HardSigmoid-6:
//   max(0, min(1, alpha * x + beta)); HardSwish-14: x * max(0, min(1, x / 6 + 1/2));
//   Tanh-6/13: tanh(x); Gelu-20 (approximate "none"): x / 2 * (1 + erf(x / sqrt(2))); then
//   the optional scalar affine map act(x) * scale + shift (a fused
//   Mul and Add). Written as a multiply and an add (not std::fma, which is a slow library
//   call on a baseline x86-64 build); the compiler may contract it into one FMA where the
//   target has one, as the SIMD micro-kernel epilogues do.
// The reference kernels evaluate in double and round once; these evaluate in float, so
// Sigmoid, Tanh and Gelu may differ from them by an ulp or two, the others not at all. On
// x86 with AVX2+FMA and on aarch64, rows of Sigmoid, Tanh and Gelu go through the vectorized elementwise
// kernels' math (elementwise_simd.h), the same as the unfused ops on this CPU.
#include <algorithm>
#include <cmath>

#include "backends/backend.h"
#if defined(__x86_64__) || defined(_M_X64) || defined(__aarch64__)
#include "backends/cpu/x86/elementwise_x86.h"
#define TSR_FUSED_SIMD 1
#endif

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
    case Kind::kGelu: return 0.5f * x * (1.f + std::erf(x * 0.70710678118654752f));
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
#ifdef TSR_FUSED_SIMD
      if (kind == Kind::kSigmoid || kind == Kind::kTanh || kind == Kind::kGelu) {
        static const bool simd = cpu::elementwise_isa_available(cpu::ElementwiseIsa::kAuto);
        if (simd) {
          static const cpu::ElementwiseCore core = cpu::elementwise_core(cpu::ElementwiseIsa::kAuto);
          const cpu::UnaryOp op = kind == Kind::kSigmoid ? cpu::UnaryOp::kSigmoid
                                  : kind == Kind::kTanh  ? cpu::UnaryOp::kTanh
                                                         : cpu::UnaryOp::kGeluErf;
          core.unary(op, cpu::UnaryParams{}, x, x, n);
          return;
        }
      }
#endif
      for (int64_t i = 0; i < n; ++i) x[i] = activate(*this, x[i]);
  }
}

}  // namespace tessera
