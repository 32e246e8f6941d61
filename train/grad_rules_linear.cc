// Gradient rules of MatMul-13, Gemm-13, Conv-11 (groups, depthwise, dilations, 1-D/2-D),
// MaxPool-12, AveragePool-11 and GlobalAveragePool-1.
#include "train/grad_rules.h"

namespace tessera::train {
namespace {

using A = GradContext;

// MatMul-13 (rank >= 2 operands, batch dims broadcast): Y = A B;
// dA = sum_to(dY B^T, A), dB = sum_to(A^T dY, B).
Status grad_matmul(GradContext& c) {
  if (c.wants(0)) c.set(0, c.sum_to(c.add("MatMulT", {c.dy(0), c.in(1)}, {A::attr_i("transB", 1)}), c.in(0)));
  if (c.wants(1)) c.set(1, c.sum_to(c.add("MatMulT", {c.in(0), c.dy(0)}, {A::attr_i("transA", 1)}), c.in(1)));
  return Status::ok();
}

// Gemm-13: Y = alpha op(A) op(B) + beta C.
//   dop(A) = alpha dY op(B)^T, dop(B) = alpha op(A)^T dY, dC = sum_to(beta dY, C);
//   when transA, dA = dop(A)^T = alpha op(B) dY^T (and likewise for B).
Status grad_gemm(GradContext& c) {
  const int64_t ta = c.node().attr_i("transA", 0), tb = c.node().attr_i("transB", 0);
  const float alpha = c.node().attr_f("alpha", 1.0f), beta = c.node().attr_f("beta", 1.0f);
  auto scaled = [&](int v, float s) { return s == 1.0f ? v : c.onnx("Mul", {v, c.scalar(s)}); };
  if (c.wants(0)) {
    int g = ta ? c.add("MatMulT", {c.in(1), c.dy(0)}, {A::attr_i("transA", tb), A::attr_i("transB", 1)})
               : c.add("MatMulT", {c.dy(0), c.in(1)}, {A::attr_i("transB", 1 - tb)});
    c.set(0, scaled(g, alpha));
  }
  if (c.wants(1)) {
    int g = tb ? c.add("MatMulT", {c.dy(0), c.in(0)}, {A::attr_i("transA", 1), A::attr_i("transB", ta)})
               : c.add("MatMulT", {c.in(0), c.dy(0)}, {A::attr_i("transA", 1 - ta)});
    c.set(1, scaled(g, alpha));
  }
  if (c.wants(2)) c.set(2, c.sum_to(scaled(c.dy(0), beta), c.in(2)));
  return Status::ok();
}

// Conv-11: dX = ConvGradInput(dY, W) (the transposed convolution), dW = ConvGradWeight(X, dY)
// (the correlation of X with dY), dB = sum of dY over batch and space.
Status grad_conv(GradContext& c) {
  if (c.wants(0)) c.set(0, c.add("ConvGradInput", {c.dy(0), c.in(1), c.shape(c.in(0))}, c.attrs()));
  if (c.wants(1)) c.set(1, c.add("ConvGradWeight", {c.in(0), c.dy(0), c.shape(c.in(1))}, c.attrs()));
  if (c.wants(2)) c.set(2, c.add("ConvBiasGrad", {c.dy(0)}));
  return Status::ok();
}

// MaxPool-12: dY goes to the first maximum of each window (recomputed from X).
Status grad_max_pool(GradContext& c) {
  if (c.out(1) >= 0) return unimplemented("MaxPool with an Indices output has no gradient rule yet");
  c.set(0, c.add("MaxPoolGrad", {c.dy(0), c.in(0)}, c.attrs()));
  return Status::ok();
}

// AveragePool-11: dY / count spread uniformly over each window.
Status grad_avg_pool(GradContext& c) {
  c.set(0, c.add("AveragePoolGrad", {c.dy(0), c.shape(c.in(0))}, c.attrs()));
  return Status::ok();
}

// GlobalAveragePool-1: dX[n,c,...] = dY[n,c] / (spatial size).
Status grad_global_avg_pool(GradContext& c) {
  c.set(0, c.add("GlobalAveragePoolGrad", {c.dy(0), c.shape(c.in(0))}));
  return Status::ok();
}

}  // namespace

void register_linear_grads(GradRuleTable& t) {
  t[":MatMul"] = grad_matmul;
  t[":Gemm"] = grad_gemm;
  t[":Conv"] = grad_conv;
  t[":MaxPool"] = grad_max_pool;
  t[":AveragePool"] = grad_avg_pool;
  t[":GlobalAveragePool"] = grad_global_avg_pool;
}

}  // namespace tessera::train
