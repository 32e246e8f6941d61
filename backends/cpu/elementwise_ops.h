// The float32 elementwise operations that the optimized CPU kernels (x86 AVX2/AVX-512 now,
// ARM NEON later) implement, and the per-ISA "core" interface: an ISA supplies only
//   binary(op, a, sa, b, sb, y, n)   y[i] = op(a[i*sa], b[i*sb]), i < n, sa/sb in {0, 1}
//   unary(op, params, x, y, n)       y[i] = op(x[i]),             i < n
// and the kernels (backends/cpu/x86/elementwise_x86.cc) do the broadcasting
// (broadcast_runs.h) and the threading around those calls. The math of each op, written
// once for every vector ISA, is in elementwise_simd.h.
#pragma once
// Header rule: types only. It is included by files compiled with -mavx512f / -mavx2 flags;
// an inline function defined here could be emitted with those instructions and picked by the
// linker for every caller.

#include <cstdint>

namespace tessera::cpu {

/// Binary ops (ONNX semantics, float32). The NaN and signed-zero behaviour is the reference
/// kernel's (backends/cpu/ref/binary_elementwise.cc), bit for bit:
///   kMax: a < b ? b : a, NaN if either is NaN (the canonical quiet NaN 0x7fc00000);
///   kMin: b < a ? b : a, likewise;  kPRelu: a < 0 ? b * a : a  (a = X, b = slope).
enum class BinaryOp : uint8_t { kAdd, kSub, kMul, kDiv, kMax, kMin, kPRelu };

/// Unary ops (ONNX semantics, float32).
enum class UnaryOp : uint8_t {
  kRelu,         // x < 0 ? 0 : x (-0 and NaN pass through)                  bit-exact
  kLeakyRelu,    // x >= 0 ? x : alpha * x                                     bit-exact
  kClip,         // v = x < alpha ? alpha : x; v > beta ? beta : v             bit-exact
  kSigmoid,      // 1 / (1 + exp(-x))
  kHardSigmoid,  // max(0, min(1, alpha * x + beta)) (fmin/fmax: NaN gives 1, as the reference)
  kHardSwish,    // x * max(0, min(1, x / 6 + 1/2))
  kTanh,
  kExp,
  kErf,
  kGeluErf,      // Gelu-20 approximate="none": x/2 * (1 + erf(x / sqrt(2)))
  kGeluTanh,     // Gelu-20 approximate="tanh": x/2 * (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
  kSqrt,         //                                                              bit-exact
  kNeg,          // sign bit flipped                                             bit-exact
  kAbs,          // x < 0 ? -x : x (-0 stays -0, as the reference)               bit-exact
  kSquare,       // Pow(x, 2) = x * x                                            bit-exact
  kPowHalf,      // Pow(x, 0.5): sqrt(x), with pow's pow(-0, .5) = +0, pow(-inf, .5) = +inf
  kCopy,         // Pow(x, 1)                                                    bit-exact
};

/// Attribute values of a unary op: LeakyRelu alpha; Clip [alpha, beta] = [min, max];
/// HardSigmoid alpha, beta. Unused otherwise.
struct UnaryParams {
  float alpha = 0.f, beta = 0.f;
};

/// The per-ISA entry points. Preconditions (not checked): n >= 0; sa, sb in {0, 1}; y may
/// alias an input with stride 1 (in-place) but must not partially overlap one.
struct ElementwiseCore {
  void (*binary)(BinaryOp op, const float* a, int64_t sa, const float* b, int64_t sb, float* y, int64_t n);
  void (*unary)(UnaryOp op, const UnaryParams& p, const float* x, float* y, int64_t n);
};

}  // namespace tessera::cpu
