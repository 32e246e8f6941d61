// Forward mode (Jacobian-vector products): the transform of autodiff.h's append_jvp and one
// tangent rule per op. Notation: y = f(x_1..x_k), t_i the tangent of x_i (absent = zero),
// the rule emits ty = sum_i (d f / d x_i) t_i.
#include <set>

#include "train/autodiff.h"
#include "train/grad_rules.h"
#include "train/interpreter.h"

namespace tessera::train {
namespace {

// GradContext's node-building helpers, with dy(i) read as the tangent of input i.
class JvpContext : public GradContext {
 public:
  using GradContext::GradContext;
  int t(size_t i) const { return dy(i); }
  bool has_t(size_t i) const { return dy(i) >= 0; }
  void set_out(size_t k, int v) {
    if (outs_.size() <= k) outs_.resize(k + 1, -1);
    outs_[k] = v;
  }
  const std::vector<int>& outs() const { return outs_; }
  int zeros(int like) { return add("ZerosLike", {like}); }
  // a + b where either may be absent (-1).
  int sum(int a, int b) { return a < 0 ? b : b < 0 ? a : onnx("Add", {a, b}); }
  // t broadcast to y's shape (t's shape may be smaller under numpy broadcasting).
  int widen(int tv, int y) { return onnx("Add", {tv, zeros(y)}); }
  // The forward node again with input 0 replaced by v (for ops linear in input 0).
  std::vector<int> same_op(int v) {
    std::vector<int> ins = node().inputs;
    ins[0] = v;
    return add_n(node().op_type, ins, node().outputs.size(), node().attributes, node().domain.empty());
  }

 private:
  std::vector<int> outs_;
};

using JvpRule = Status (*)(JvpContext& c);

// Add/Sub: ty = ta +- tb (broadcast to y).
template <bool kSub>
Status jvp_add(JvpContext& c) {
  int a = c.has_t(0) ? c.t(0) : -1;
  int b = c.has_t(1) ? (kSub ? c.onnx("Neg", {c.t(1)}) : c.t(1)) : -1;
  c.set_out(0, c.widen(c.sum(a, b), c.out(0)));
  return Status::ok();
}

// Mul: ty = ta B + A tb.
Status jvp_mul(JvpContext& c) {
  int a = c.has_t(0) ? c.onnx("Mul", {c.t(0), c.in(1)}) : -1;
  int b = c.has_t(1) ? c.onnx("Mul", {c.in(0), c.t(1)}) : -1;
  c.set_out(0, c.widen(c.sum(a, b), c.out(0)));
  return Status::ok();
}

// Div: ty = ta / B - y tb / B.
Status jvp_div(JvpContext& c) {
  int a = c.has_t(0) ? c.onnx("Div", {c.t(0), c.in(1)}) : -1;
  int b = c.has_t(1) ? c.onnx("Neg", {c.onnx("Div", {c.onnx("Mul", {c.out(0), c.t(1)}), c.in(1)})}) : -1;
  c.set_out(0, c.widen(c.sum(a, b), c.out(0)));
  return Status::ok();
}

// Pow: ty = ta B A^(B-1) + tb y ln A.
Status jvp_pow(JvpContext& c) {
  int a = -1, b = -1;
  if (c.has_t(0)) {
    int bm1 = c.onnx("Sub", {c.in(1), c.scalar(1.0)});
    a = c.onnx("Mul", {c.onnx("Mul", {c.t(0), c.in(1)}), c.onnx("Pow", {c.in(0), bm1})});
  }
  if (c.has_t(1)) b = c.onnx("Mul", {c.onnx("Mul", {c.t(1), c.out(0)}), c.onnx("Log", {c.in(0)})});
  c.set_out(0, c.widen(c.sum(a, b), c.out(0)));
  return Status::ok();
}

// Elementwise f with f' known to the backward op <Op>Grad(t, x or y): ty = f'(x) tx.
template <const char* kOp, bool kFromY>
Status jvp_elementwise(JvpContext& c) {
  c.set_out(0, c.add(kOp, {c.t(0), kFromY ? c.out(0) : c.in(0)}, c.attrs()));
  return Status::ok();
}

Status jvp_clip(JvpContext& c) {
  std::vector<int> ins = {c.t(0), c.in(0)};
  if (c.in(1) >= 0 || c.in(2) >= 0) ins.push_back(c.in(1));
  if (c.in(2) >= 0) ins.push_back(c.in(2));
  c.set_out(0, c.add("ClipGrad", ins, c.attrs()));
  return Status::ok();
}

// Ops linear in input 0 (the only differentiable one): ty = op(tx, other inputs).
Status jvp_linear0(JvpContext& c) {
  for (size_t i = 1; i < c.node().inputs.size(); ++i)
    if (c.has_t(i)) return unimplemented("tangent of input " + std::to_string(i) + " (only input 0 is differentiable)");
  std::vector<int> o = c.same_op(c.t(0));
  for (size_t k = 0; k < o.size(); ++k) c.set_out(k, o[k]);
  return Status::ok();
}

// Neg, Identity and float Cast are linear too (one input).
Status jvp_unary_linear(JvpContext& c) { return jvp_linear0(c); }

// MatMul: ty = tA B + A tB.
Status jvp_matmul(JvpContext& c) {
  int a = c.has_t(0) ? c.onnx("MatMul", {c.t(0), c.in(1)}) : -1;
  int b = c.has_t(1) ? c.onnx("MatMul", {c.in(0), c.t(1)}) : -1;
  c.set_out(0, c.sum(a, b));
  return Status::ok();
}

// Gemm: ty = alpha (op(tA) op(B) + op(A) op(tB)) + beta tC, with Gemm itself.
Status jvp_gemm(JvpContext& c) {
  std::vector<Attribute> at = c.attrs();
  int a = c.has_t(0) ? c.onnx("Gemm", {c.t(0), c.in(1)}, at) : -1;
  int b = c.has_t(1) ? c.onnx("Gemm", {c.in(0), c.t(1)}, at) : -1;
  int y = c.sum(a, b);
  if (c.has_t(2)) {
    const float beta = c.node().attr_f("beta", 1.0f);
    int tc = beta == 1.0f ? c.t(2) : c.onnx("Mul", {c.t(2), c.scalar(beta)});
    y = c.widen(c.sum(y, tc), c.out(0));
  }
  c.set_out(0, y);
  return Status::ok();
}

// Conv: ty = Conv(tX, W, tB) + Conv(X, tW).
Status jvp_conv(JvpContext& c) {
  std::vector<Attribute> at = c.attrs();
  int y = -1;
  if (c.has_t(0) || c.has_t(2)) {
    std::vector<int> ins = {c.has_t(0) ? c.t(0) : c.zeros(c.in(0)), c.in(1)};
    if (c.has_t(2)) ins.push_back(c.t(2));
    y = c.onnx("Conv", ins, at);
  }
  if (c.has_t(1)) y = c.sum(y, c.onnx("Conv", {c.in(0), c.t(1)}, at));
  c.set_out(0, y);
  return Status::ok();
}

Status jvp_max_pool(JvpContext& c) {
  if (c.out(1) >= 0) return unimplemented("MaxPool with an Indices output");
  c.set_out(0, c.add("MaxPoolGather", {c.t(0), c.in(0)}, c.attrs()));
  return Status::ok();
}

// Softmax: ty = y (tx - sum(tx y)) (= SoftmaxGrad, the Jacobian is symmetric).
template <bool kLog>
Status jvp_softmax(JvpContext& c) {
  const bool legacy = c.node().opset > 0 && c.node().opset < 13;
  const int64_t axis = c.node().attr_i("axis", legacy ? 1 : -1);
  c.set_out(0, c.add(kLog ? "LogSoftmaxJvp" : "SoftmaxGrad", {c.t(0), c.out(0)},
                     {GradContext::attr_i("axis", axis), GradContext::attr_i("legacy", legacy ? 1 : 0)}));
  return Status::ok();
}

Status jvp_layer_norm(JvpContext& c) {
  if (c.out(1) >= 0 || c.out(2) >= 0) return unimplemented("tangent of LayerNormalization's Mean/InvStdDev outputs");
  c.set_out(0, c.add("LayerNormalizationJvp", {c.in(0), c.in(1), c.t(0), c.t(1), c.t(2)}, c.attrs()));
  return Status::ok();
}

Status jvp_batch_norm(JvpContext& c) {
  if (c.has_t(3) || c.has_t(4)) return unimplemented("tangent of BatchNormalization's mean or var input");
  c.set_out(0, c.add("BatchNormalizationJvp", {c.in(0), c.in(1), c.in(3), c.in(4), c.t(0), c.t(1), c.t(2)}, c.attrs()));
  return Status::ok();
}

Status jvp_concat(JvpContext& c) {
  std::vector<int> parts;
  for (size_t i = 0; i < c.node().inputs.size(); ++i) parts.push_back(c.has_t(i) ? c.t(i) : c.zeros(c.in(i)));
  c.set_out(0, c.onnx("Concat", parts, c.attrs()));
  return Status::ok();
}

Status jvp_dropout(JvpContext& c) {
  int mask = c.out(1);
  if (mask < 0) return unimplemented("forward mode through Dropout needs its mask output");
  std::vector<int> ins = {c.t(0), mask};
  if (c.in(1) >= 0 || c.in(2) >= 0) ins.push_back(c.in(1));
  if (c.in(2) >= 0) ins.push_back(c.in(2));
  c.set_out(0, c.add("DropoutGrad", ins, c.attrs()));
  return Status::ok();
}

// Losses: dL = sum(dL/dz * tz), with dL/dz from the backward op at a unit cotangent.
Status jvp_softmax_ce(JvpContext& c) {
  int g = c.add("SoftmaxCrossEntropyGrad", {c.scalar(1.0), c.in(0), c.in(1)}, c.attrs());
  c.set_out(0, c.onnx("ReduceSum", {c.onnx("Mul", {g, c.t(0)})}, {GradContext::attr_i("keepdims", 0)}));
  return Status::ok();
}

Status jvp_mse(JvpContext& c) {
  int g = c.add("MSELossGrad", {c.scalar(1.0), c.in(0), c.in(1)});
  int tp = c.has_t(0) ? c.t(0) : -1;
  int tt = c.has_t(1) ? c.onnx("Neg", {c.t(1)}) : -1;
  c.set_out(0, c.onnx("ReduceSum", {c.onnx("Mul", {g, c.sum(tp, tt)})}, {GradContext::attr_i("keepdims", 0)}));
  return Status::ok();
}

// Where: ty = C ? tA : tB.
Status jvp_where(JvpContext& c) {
  c.set_out(0, c.onnx("Where", {c.in(0), c.has_t(1) ? c.t(1) : c.zeros(c.in(1)), c.has_t(2) ? c.t(2) : c.zeros(c.in(2))}));
  c.set_out(0, c.widen(c.outs()[0], c.out(0)));
  return Status::ok();
}

// Sum/Mean: ty = sum of the input tangents (/ n).
template <bool kMean>
Status jvp_sum(JvpContext& c) {
  int y = -1;
  for (size_t i = 0; i < c.node().inputs.size(); ++i)
    if (c.has_t(i)) y = c.sum(y, c.t(i));
  if (kMean) y = c.onnx("Div", {y, c.scalar(static_cast<double>(c.node().inputs.size()))});
  c.set_out(0, c.widen(y, c.out(0)));
  return Status::ok();
}

// Max/Min: ty = sum_i [X_i attains y] tX_i (the transpose of MaxMinGrad).
Status jvp_max_min(JvpContext& c) {
  int y = -1;
  for (size_t i = 0; i < c.node().inputs.size(); ++i)
    if (c.has_t(i)) y = c.sum(y, c.add("MaxMinGrad", {c.widen(c.t(i), c.out(0)), c.in(i), c.out(0)}));
  c.set_out(0, y);
  return Status::ok();
}

constexpr char kReluGrad[] = "ReluGrad", kSigmoidGrad[] = "SigmoidGrad", kTanhGrad[] = "TanhGrad", kExpGrad[] = "ExpGrad";
constexpr char kLeakyReluGrad[] = "LeakyReluGrad", kHardSigmoidGrad[] = "HardSigmoidGrad", kHardSwishGrad[] = "HardSwishGrad",
               kGeluGrad[] = "GeluGrad", kErfGrad[] = "ErfGrad", kLogGrad[] = "LogGrad", kSqrtGrad[] = "SqrtGrad";

const std::unordered_map<std::string, JvpRule>& jvp_rules() {
  static const std::unordered_map<std::string, JvpRule> kRules = {
      {":Add", jvp_add<false>}, {":Sub", jvp_add<true>}, {":Mul", jvp_mul}, {":Div", jvp_div}, {":Pow", jvp_pow},
      {":Neg", jvp_unary_linear}, {":Identity", jvp_unary_linear}, {":Cast", jvp_unary_linear},
      {":Relu", jvp_elementwise<kReluGrad, true>}, {":Sigmoid", jvp_elementwise<kSigmoidGrad, true>},
      {":Tanh", jvp_elementwise<kTanhGrad, true>}, {":Exp", jvp_elementwise<kExpGrad, true>},
      {":LeakyRelu", jvp_elementwise<kLeakyReluGrad, false>}, {":HardSigmoid", jvp_elementwise<kHardSigmoidGrad, false>},
      {":HardSwish", jvp_elementwise<kHardSwishGrad, false>}, {":Gelu", jvp_elementwise<kGeluGrad, false>},
      {":Erf", jvp_elementwise<kErfGrad, false>}, {":Log", jvp_elementwise<kLogGrad, false>},
      {":Sqrt", jvp_elementwise<kSqrtGrad, false>}, {":Clip", jvp_clip},
      {":MatMul", jvp_matmul}, {":Gemm", jvp_gemm}, {":Conv", jvp_conv}, {":MaxPool", jvp_max_pool},
      {":AveragePool", jvp_linear0}, {":GlobalAveragePool", jvp_linear0},
      {":Softmax", jvp_softmax<false>}, {":LogSoftmax", jvp_softmax<true>},
      {":LayerNormalization", jvp_layer_norm}, {":BatchNormalization", jvp_batch_norm},
      {":Reshape", jvp_linear0}, {":Flatten", jvp_linear0}, {":Squeeze", jvp_linear0}, {":Unsqueeze", jvp_linear0},
      {":Transpose", jvp_linear0}, {":Slice", jvp_linear0}, {":Split", jvp_linear0}, {":Gather", jvp_linear0},
      {":ReduceSum", jvp_linear0}, {":ReduceMean", jvp_linear0}, {":Concat", jvp_concat}, {":Dropout", jvp_dropout},
      {"tessera.train:SoftmaxCrossEntropy", jvp_softmax_ce}, {"tessera.train:MSELoss", jvp_mse},
      {":Where", jvp_where}, {":Expand", jvp_linear0}, {":Sum", jvp_sum<false>}, {":Mean", jvp_sum<true>},
      {":Max", jvp_max_min}, {":Min", jvp_max_min},
  };
  return kRules;
}

bool is_float(DType t) { return t == DType::kFloat32 || t == DType::kFloat64; }

}  // namespace

Result<JvpInfo> append_jvp(Graph& g, const std::string& output, const std::vector<std::string>& wrt) {
  const int out_id = g.find_value(output);
  if (out_id < 0) return not_found("forward mode: no value named '" + output + "'");
  const size_t nv = g.values.size(), nn = g.nodes.size();
  std::vector<int> tangent(nv, -1);
  JvpInfo info;
  for (const std::string& w : wrt) {
    int id = g.find_value(w);
    if (id < 0) return not_found("forward mode: no value named '" + w + "' to differentiate with respect to");
    if (!is_float(g.values[id].dtype))
      return invalid_argument("forward mode: '" + w + "' is " + dtype_name(g.values[id].dtype) + "; only float and double values have tangents");
    Value t;
    t.name = w + "_tangent";
    for (int k = 1; g.find_value(t.name) >= 0; ++k) t.name = w + "_tangent." + std::to_string(k);
    t.dtype = g.values[id].dtype;
    t.has_shape = g.values[id].has_shape;
    t.shape = g.values[id].shape;
    int tid = g.add_value(std::move(t));
    g.inputs.push_back(tid);
    tangent[id] = tid;
    info.tangent_inputs.push_back(g.values[tid].name);
  }
  std::map<int, int> shape_cache;
  for (size_t i = 0; i < nn; ++i) {
    std::vector<int> ts;
    bool any = false;
    for (int in : g.nodes[i].inputs) {
      int t = in >= 0 && in < static_cast<int>(nv) ? tangent[in] : -1;
      ts.push_back(t);
      any |= t >= 0;
    }
    if (!any) continue;
    const Node& fn = g.nodes[i];
    const std::string key = (fn.domain == "ai.onnx" ? std::string() : fn.domain) + ":" + fn.op_type;
    auto it = jvp_rules().find(key);
    if (it == jvp_rules().end())
      return unimplemented(fn.describe() + ": op " + (fn.domain.empty() ? "" : fn.domain + ".") + fn.op_type +
                           " has no tangent rule (forward mode)");
    JvpContext ctx(g, i, ts, std::vector<bool>(ts.size(), false), &shape_cache);
    Status st = it->second(ctx);
    if (!st.is_ok()) return st.with_context(ctx.node().describe() + " tangent");
    for (size_t k = 0; k < ctx.outs().size() && k < ctx.node().outputs.size(); ++k)
      if (ctx.node().outputs[k] >= 0 && ctx.outs()[k] >= 0) tangent[ctx.node().outputs[k]] = ctx.outs()[k];
  }
  int t = tangent[out_id];
  if (t < 0) {
    Node n;
    n.op_type = "ZerosLike";
    n.domain = kTrainOpDomain;
    n.name = output + "/tangent/zeros";
    n.inputs = {out_id};
    Value v;
    v.name = output + "_tangent_out";
    for (int k = 1; g.find_value(v.name) >= 0; ++k) v.name = output + "_tangent_out." + std::to_string(k);
    v.dtype = g.values[out_id].dtype;
    n.outputs = {g.add_value(std::move(v))};
    t = n.outputs[0];
    g.nodes.push_back(std::move(n));
  }
  info.output_tangent = g.values[t].name;
  return info;
}

}  // namespace tessera::train
