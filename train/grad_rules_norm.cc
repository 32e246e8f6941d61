// Gradient rules of Softmax/LogSoftmax (-13 and the 2-D-coercing -1/-11), LayerNormalization-17,
// BatchNormalization-15 (training and inference mode) and the losses of the training module.
#include "train/grad_rules.h"

namespace tessera::train {
namespace {

using A = GradContext;

// Softmax: dX = Y (dY - sum_axis(dY Y)); LogSoftmax: dX = dY - exp(Y) sum_axis(dY).
template <bool kLog>
Status grad_softmax(GradContext& c) {
  const bool legacy = c.node().opset > 0 && c.node().opset < 13;
  const int64_t axis = c.node().attr_i("axis", legacy ? 1 : -1);
  c.set(0, c.add(kLog ? "LogSoftmaxGrad" : "SoftmaxGrad", {c.dy(0), c.out(0)},
                 {A::attr_i("axis", axis), A::attr_i("legacy", legacy ? 1 : 0)}));
  return Status::ok();
}

// LayerNormalization-17 (Ba et al. 2016): see LayerNormalizationGrad in kernels_norm.cc.
Status grad_layer_norm(GradContext& c) {
  if (c.dy(1) >= 0 || c.dy(2) >= 0) return unimplemented("gradient through LayerNormalization's Mean/InvStdDev outputs");
  std::vector<int> o = c.add_n("LayerNormalizationGrad", {c.dy(0), c.in(0), c.in(1)}, 3, c.attrs());
  c.set(0, o[0]);
  c.set(1, o[1]);
  if (c.in(2) >= 0) c.set(2, o[2]);
  return Status::ok();
}

// BatchNormalization-15 (Ioffe & Szegedy 2015): training mode differentiates through the
// batch statistics; inference mode treats the running statistics as constants.
Status grad_batch_norm(GradContext& c) {
  for (size_t k = 1; k < 3; ++k)
    if (c.dy(k) >= 0) return unimplemented("gradient through BatchNormalization's running statistics");
  if (c.wants(3) || c.wants(4)) return unimplemented("gradient with respect to BatchNormalization's mean or var input");
  std::vector<int> o = c.add_n("BatchNormalizationGrad", {c.dy(0), c.in(0), c.in(1), c.in(3), c.in(4)}, 3, c.attrs());
  c.set(0, o[0]);
  c.set(1, o[1]);
  c.set(2, o[2]);
  return Status::ok();
}

// tessera.train.SoftmaxCrossEntropy: dlogits = (softmax(logits) - q) dL / N.
Status grad_softmax_ce(GradContext& c) {
  c.set(0, c.add("SoftmaxCrossEntropyGrad", {c.dy(0), c.in(0), c.in(1)}, c.attrs()));
  return Status::ok();
}

// tessera.train.MSELoss: dpred = 2 (pred - target) dL / numel, dtarget = -dpred.
Status grad_mse(GradContext& c) {
  int g = c.add("MSELossGrad", {c.dy(0), c.in(0), c.in(1)});
  c.set(0, g);
  if (c.wants(1)) c.set(1, c.onnx("Neg", {g}));
  return Status::ok();
}

}  // namespace

void register_norm_grads(GradRuleTable& t) {
  t[":Softmax"] = grad_softmax<false>;
  t[":LogSoftmax"] = grad_softmax<true>;
  t[":LayerNormalization"] = grad_layer_norm;
  t[":BatchNormalization"] = grad_batch_norm;
  t["tessera.train:SoftmaxCrossEntropy"] = grad_softmax_ce;
  t["tessera.train:MSELoss"] = grad_mse;
}

}  // namespace tessera::train
