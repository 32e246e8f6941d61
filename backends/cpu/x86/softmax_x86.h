// Softmax / LogSoftmax and LayerNormalization bodies, one per ISA (softmax_avx512.cc,
// softmax_avx2.cc, compiled from softmax_x86_impl.h with their own flags; see simd_x86.h).
// All tensors float32, row-major; exp is vec_exp (vec_math.h: Cephes expf, <= 2 ulp).
#pragma once

#include <cstdint>

namespace tessera::x86 {

/// Softmax (log = false) or LogSoftmax (log = true) of the [outer, n, inner] view along n,
/// for outer indices [begin, end) (ONNX Softmax-13 / LogSoftmax-13 semantics, opset < 13
/// by the coerced 2-D view; the caller builds the view with softmax_layout):
///   m = max_a x[a],  s = sum_a exp(x[a] - m)   (float, kW-lane partial sums)
///   softmax: y[a] = exp(x[a] - m) * (1 / s);  logsoftmax: y[a] = (x[a] - m) - log(s)
/// inner == 1 vectorizes along the row; inner > 1 vectorizes across inner (kW columns at a
/// time). y may not alias x partially (equal pointers are fine).
struct SoftmaxArgs {
  const float* x = nullptr;
  float* y = nullptr;
  int64_t n = 0, inner = 1;
  bool log = false;
};

/// LayerNormalization-17 over rows [begin, end) of x [rows, n]:
///   mean = sum(x) / n,  var = sum((x - mean)^2) / n   (two passes, float, kW-lane sums)
///   y = (x - mean) * (1 / sqrt(var + epsilon)) * scale + bias
/// scale and bias (nullable) hold n floats; mean_out / inv_std_out (nullable) one per row.
struct LayerNormArgs {
  const float* x = nullptr;
  const float* scale = nullptr;
  const float* bias = nullptr;
  float* y = nullptr;
  float* mean_out = nullptr;
  float* inv_std_out = nullptr;
  int64_t n = 0;
  float epsilon = 1e-5f;
};

/// y[i] = exp(x[i]) for i < n with vec_exp (vec_math.h; <= 2 ulp); y may equal x. For Exp-like
/// elementwise kernels and the accuracy test of vec_exp.
namespace avx512 {
void exp_array(const float* x, float* y, int64_t n);
void softmax(const SoftmaxArgs& a, int64_t begin, int64_t end);
void layer_norm(const LayerNormArgs& a, int64_t begin, int64_t end);
}  // namespace avx512
namespace avx2 {
void exp_array(const float* x, float* y, int64_t n);
void softmax(const SoftmaxArgs& a, int64_t begin, int64_t end);
void layer_norm(const LayerNormArgs& a, int64_t begin, int64_t end);
}  // namespace avx2
namespace neon {  // aarch64: backends/cpu/arm/softmax_neon.cc
void exp_array(const float* x, float* y, int64_t n);
void softmax(const SoftmaxArgs& a, int64_t begin, int64_t end);
void layer_norm(const LayerNormArgs& a, int64_t begin, int64_t end);
}  // namespace neon

}  // namespace tessera::x86
