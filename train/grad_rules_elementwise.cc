// Gradient rules of the elementwise ops (with Where, Expand, Max/Min/Sum/Mean), the
// reductions, Dropout, Identity and Cast.
// Notation: y = f(x), dy the output cotangent, dx the input cotangent; sum_to(g, x) sums g
// over the dims numpy broadcasting added to x (ONNX "Broadcasting in ONNX").
#include "train/grad_rules.h"

namespace tessera::train {
namespace {

// Add-14: dA = sum_to(dy, A), dB = sum_to(dy, B).
Status grad_add(GradContext& c) {
  if (c.wants(0)) c.set(0, c.sum_to(c.dy(0), c.in(0)));
  if (c.wants(1)) c.set(1, c.sum_to(c.dy(0), c.in(1)));
  return Status::ok();
}

// Sub-14: dA = sum_to(dy, A), dB = -sum_to(dy, B).
Status grad_sub(GradContext& c) {
  if (c.wants(0)) c.set(0, c.sum_to(c.dy(0), c.in(0)));
  if (c.wants(1)) c.set(1, c.sum_to(c.onnx("Neg", {c.dy(0)}), c.in(1)));
  return Status::ok();
}

// Mul-14: dA = sum_to(dy * B, A), dB = sum_to(dy * A, B).
Status grad_mul(GradContext& c) {
  if (c.wants(0)) c.set(0, c.sum_to(c.onnx("Mul", {c.dy(0), c.in(1)}), c.in(0)));
  if (c.wants(1)) c.set(1, c.sum_to(c.onnx("Mul", {c.dy(0), c.in(0)}), c.in(1)));
  return Status::ok();
}

// Div-14: y = A / B; dA = sum_to(dy / B, A), dB = sum_to(-dy * y / B, B).
Status grad_div(GradContext& c) {
  if (c.wants(0)) c.set(0, c.sum_to(c.onnx("Div", {c.dy(0), c.in(1)}), c.in(0)));
  if (c.wants(1)) {
    int t = c.onnx("Div", {c.onnx("Mul", {c.dy(0), c.out(0)}), c.in(1)});
    c.set(1, c.sum_to(c.onnx("Neg", {t}), c.in(1)));
  }
  return Status::ok();
}

// Pow-15: y = A^B; dA = sum_to(dy * B * A^(B-1), A), dB = sum_to(dy * y * ln A, B).
Status grad_pow(GradContext& c) {
  if (c.wants(0)) {
    int bm1 = c.onnx("Sub", {c.in(1), c.scalar(1.0)});
    int t = c.onnx("Mul", {c.onnx("Mul", {c.dy(0), c.in(1)}), c.onnx("Pow", {c.in(0), bm1})});
    c.set(0, c.sum_to(t, c.in(0)));
  }
  if (c.wants(1)) c.set(1, c.sum_to(c.onnx("Mul", {c.onnx("Mul", {c.dy(0), c.out(0)}), c.onnx("Log", {c.in(0)})}), c.in(1)));
  return Status::ok();
}

Status grad_neg(GradContext& c) {
  c.set(0, c.onnx("Neg", {c.dy(0)}));
  return Status::ok();
}

Status grad_identity(GradContext& c) {
  c.set(0, c.dy(0));
  return Status::ok();
}

// Relu-14 from its output: dx = dy * (y > 0). Sigmoid-13: dy * y (1 - y). Tanh-13: dy (1 - y^2).
// Exp-13: dy * y.
template <const char* kOp>
Status grad_from_y(GradContext& c) {
  c.set(0, c.add(kOp, {c.dy(0), c.out(0)}));
  return Status::ok();
}

// From the input x with the forward node's attributes: LeakyRelu-16 (alpha), HardSigmoid-6
// (max(0, min(1, alpha x + beta))' = alpha inside), HardSwish-14 (x/3 + 1/2 on [-3, 3]),
// Gelu-20 (approximate none|tanh), Erf-13 (2/sqrt(pi) e^{-x^2}), Log-13 (1/x), Sqrt-13
// (1/(2 sqrt x)).
template <const char* kOp>
Status grad_from_x(GradContext& c) {
  c.set(0, c.add(kOp, {c.dy(0), c.in(0)}, c.attrs()));
  return Status::ok();
}

// Clip-13: dx = dy where min <= x <= max, else 0 (min, max: inputs 1, 2; no gradient to them).
Status grad_clip(GradContext& c) {
  std::vector<int> ins = {c.dy(0), c.in(0)};
  if (c.in(1) >= 0 || c.in(2) >= 0) ins.push_back(c.in(1));
  if (c.in(2) >= 0) ins.push_back(c.in(2));
  c.set(0, c.add("ClipGrad", ins, c.attrs()));
  return Status::ok();
}

// ReduceSum-13 / ReduceMean-18 (and the attribute-axes forms before them): dx = dy broadcast
// back over the reduced axes, divided by their element count for the mean.
template <bool kMean>
Status grad_reduce(GradContext& c) {
  std::vector<Attribute> at = c.attrs();
  at.push_back(GradContext::attr_i("mean", kMean ? 1 : 0));
  std::vector<int> ins = {c.dy(0), c.shape(c.in(0))};
  if (c.in(1) >= 0) ins.push_back(c.in(1));
  c.set(0, c.add("ReduceGrad", ins, at));
  return Status::ok();
}

// Dropout-13: dx = dy * mask / (1 - ratio) in training mode, dy otherwise; the forward node
// is given a mask output when it has none.
Status grad_dropout(GradContext& c) {
  int mask = c.out(1);
  if (mask < 0) {
    Value m;
    m.name = c.graph().values[c.out(0)].name + "/mask";
    for (int k = 1; c.graph().find_value(m.name) >= 0; ++k) m.name += std::to_string(k);
    m.dtype = DType::kBool;
    mask = c.graph().add_value(std::move(m));
    Node& fwd = c.forward_node();
    fwd.outputs.resize(2, -1);
    fwd.outputs[1] = mask;
  }
  std::vector<int> ins = {c.dy(0), mask};
  if (c.in(1) >= 0 || c.in(2) >= 0) ins.push_back(c.in(1));
  if (c.in(2) >= 0) ins.push_back(c.in(2));
  c.set(0, c.add("DropoutGrad", ins, c.attrs()));
  return Status::ok();
}

// Cast-13 between float types: dx = Cast(dy) back to x's dtype.
Status grad_cast(GradContext& c) {
  const DType from = c.graph().values[c.in(0)].dtype;
  c.set(0, c.add_n("Cast", {c.dy(0)}, 1, {GradContext::attr_i("to", static_cast<int64_t>(from))}, true, from)[0]);
  return Status::ok();
}

// Where-16: dA = sum_to(dY where C, A), dB = sum_to(dY where !C, B); no gradient to C.
Status grad_where(GradContext& c) {
  if (c.wants(1)) c.set(1, c.sum_to(c.add("WhereGrad", {c.dy(0), c.in(0)}, {GradContext::attr_i("select", 1)}), c.in(1)));
  if (c.wants(2)) c.set(2, c.sum_to(c.add("WhereGrad", {c.dy(0), c.in(0)}, {GradContext::attr_i("select", 0)}), c.in(2)));
  return Status::ok();
}

// Expand-13: dX = sum_to(dY, X).
Status grad_expand(GradContext& c) {
  c.set(0, c.sum_to(c.dy(0), c.in(0)));
  return Status::ok();
}

// Sum-13: dX_i = sum_to(dY, X_i); Mean-13: the same divided by the input count.
template <bool kMean>
Status grad_sum(GradContext& c) {
  const size_t n = c.node().inputs.size();
  int g = kMean ? c.onnx("Div", {c.dy(0), c.scalar(static_cast<double>(n))}) : c.dy(0);
  for (size_t i = 0; i < n; ++i)
    if (c.wants(i)) c.set(i, c.sum_to(g, c.in(i)));
  return Status::ok();
}

// Max/Min-13: dX_i = sum_to(dY where X_i equals the result, X_i) (ties: every input that
// attains the extremum gets dY, as onnxruntime's gradient builder does).
Status grad_max_min(GradContext& c) {
  for (size_t i = 0; i < c.node().inputs.size(); ++i)
    if (c.wants(i)) c.set(i, c.sum_to(c.add("MaxMinGrad", {c.dy(0), c.in(i), c.out(0)}), c.in(i)));
  return Status::ok();
}

constexpr char kReluGrad[] = "ReluGrad", kSigmoidGrad[] = "SigmoidGrad", kTanhGrad[] = "TanhGrad", kExpGrad[] = "ExpGrad";
constexpr char kLeakyReluGrad[] = "LeakyReluGrad", kHardSigmoidGrad[] = "HardSigmoidGrad", kHardSwishGrad[] = "HardSwishGrad",
               kGeluGrad[] = "GeluGrad", kErfGrad[] = "ErfGrad", kLogGrad[] = "LogGrad", kSqrtGrad[] = "SqrtGrad";

}  // namespace

void register_elementwise_grads(GradRuleTable& t) {
  t[":Add"] = grad_add;
  t[":Sub"] = grad_sub;
  t[":Mul"] = grad_mul;
  t[":Div"] = grad_div;
  t[":Pow"] = grad_pow;
  t[":Neg"] = grad_neg;
  t[":Identity"] = grad_identity;
  t[":Relu"] = grad_from_y<kReluGrad>;
  t[":Sigmoid"] = grad_from_y<kSigmoidGrad>;
  t[":Tanh"] = grad_from_y<kTanhGrad>;
  t[":Exp"] = grad_from_y<kExpGrad>;
  t[":LeakyRelu"] = grad_from_x<kLeakyReluGrad>;
  t[":HardSigmoid"] = grad_from_x<kHardSigmoidGrad>;
  t[":HardSwish"] = grad_from_x<kHardSwishGrad>;
  t[":Gelu"] = grad_from_x<kGeluGrad>;
  t[":Erf"] = grad_from_x<kErfGrad>;
  t[":Log"] = grad_from_x<kLogGrad>;
  t[":Sqrt"] = grad_from_x<kSqrtGrad>;
  t[":Clip"] = grad_clip;
  t[":ReduceSum"] = grad_reduce<false>;
  t[":ReduceMean"] = grad_reduce<true>;
  t[":Dropout"] = grad_dropout;
  t[":Cast"] = grad_cast;
  t[":Where"] = grad_where;
  t[":Expand"] = grad_expand;
  t[":Sum"] = grad_sum<false>;
  t[":Mean"] = grad_sum<true>;
  t[":Max"] = grad_max_min;
  t[":Min"] = grad_max_min;
}

}  // namespace tessera::train
