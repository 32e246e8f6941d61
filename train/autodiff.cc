#include "train/autodiff.h"

#include <algorithm>
#include <set>

#include "train/grad_rules.h"
#include "train/interpreter.h"

namespace tessera::train {

const GradRuleTable& grad_rules() {
  static const GradRuleTable kTable = [] {
    GradRuleTable t;
    register_elementwise_grads(t);
    register_linear_grads(t);
    register_norm_grads(t);
    register_shape_grads(t);
    register_collective_grads(t);
    return t;
  }();
  return kTable;
}

std::vector<std::string> differentiable_ops() {
  std::vector<std::string> ops;
  for (const auto& [k, f] : grad_rules()) ops.push_back(k[0] == ':' ? k.substr(1) : k);
  std::sort(ops.begin(), ops.end());
  return ops;
}

namespace {

bool is_float(DType t) { return t == DType::kFloat32 || t == DType::kFloat64; }
std::string rule_key(const Node& n) { return (n.domain == "ai.onnx" ? std::string() : n.domain) + ":" + n.op_type; }

std::string fresh_name(const Graph& g, const std::string& base) {
  if (g.find_value(base) < 0) return base;
  for (int i = 1;; ++i) {
    std::string n = base + "." + std::to_string(i);
    if (g.find_value(n) < 0) return n;
  }
}

}  // namespace

GradContext::GradContext(Graph& g, size_t node_index, std::vector<int> dys, std::vector<bool> wants,
                         std::map<int, int>* shape_cache)
    : g_(g), index_(node_index), node_(g.nodes[node_index]), dys_(std::move(dys)), wants_(std::move(wants)),
      grads_(node_.inputs.size(), -1), shape_cache_(shape_cache) {
  for (int d : dys_)
    if (d >= 0) { dtype_ = g.values[d].dtype; break; }
}

std::vector<int> GradContext::add_n(const std::string& op, const std::vector<int>& inputs, size_t outputs,
                                    std::vector<Attribute> attrs, bool onnx, DType out_dtype) {
  Node n;
  n.op_type = op;
  n.domain = onnx ? "" : kTrainOpDomain;
  n.opset = onnx ? 17 : 1;
  n.name = fresh_name(g_, node_.name + "/grad/" + op);
  // Node names need not be unique in the IR, but readable ones help errors.
  n.inputs = inputs;
  n.attributes = std::move(attrs);
  for (size_t k = 0; k < outputs; ++k) {
    Value v;
    v.name = fresh_name(g_, (node_.name.empty() ? node_.op_type : node_.name) + "/grad/" + op + (outputs > 1 ? "_" + std::to_string(k) : ""));
    v.dtype = out_dtype == DType::kUndefined ? dtype_ : out_dtype;
    n.outputs.push_back(g_.add_value(std::move(v)));
  }
  std::vector<int> outs = n.outputs;
  g_.nodes.push_back(std::move(n));
  return outs;
}

int GradContext::shape(int v) {
  auto it = shape_cache_->find(v);
  if (it != shape_cache_->end()) return it->second;
  // An initializer that is not a graph input has a fixed shape (the trainer feeds new
  // values of a parameter, never new shapes): a constant, so that the backward pass does
  // not read the tensor for its shape (ZeRO-3 would all-gather a parameter for that).
  const Value& val = g_.values[v];
  if (val.initializer && std::find(g_.inputs.begin(), g_.inputs.end(), v) == g_.inputs.end()) {
    const Shape dims = val.initializer->shape();
    Value c;
    c.name = fresh_name(g_, val.name + "/shape");
    c.dtype = DType::kInt64;
    c.has_shape = true;
    c.shape = {Dim{static_cast<int64_t>(dims.size()), ""}};
    Tensor t = Tensor::allocate(DType::kInt64, {static_cast<int64_t>(dims.size())}).value();
    for (size_t d = 0; d < dims.size(); ++d) t.data_as<int64_t>()[d] = dims[d];
    c.initializer = std::make_shared<Tensor>(std::move(t));
    const int id = g_.add_value(std::move(c));
    (*shape_cache_)[v] = id;
    return id;
  }
  int s = add_n("Shape", {v}, 1, {}, true, DType::kInt64)[0];
  (*shape_cache_)[v] = s;
  return s;
}

int GradContext::sum_to(int grad, int like) {
  const Value& a = g_.values[grad];
  const Value& b = g_.values[like];
  if (a.has_shape && b.has_shape && a.shape.size() == b.shape.size()) {
    bool same = true;
    for (size_t i = 0; i < a.shape.size(); ++i)
      if (!a.shape[i].is_static() || a.shape[i].value != b.shape[i].value) same = false;
    if (same) return grad;
  }
  return add("ReduceSumTo", {grad, shape(like)});
}

int GradContext::scalar(double v) {
  Value val;
  val.name = fresh_name(g_, node_.name + "/grad/const");
  val.dtype = dtype_;
  val.has_shape = true;
  auto t = Tensor::allocate(dtype_, {});
  if (dtype_ == DType::kFloat64) t->data_as<double>()[0] = v;
  else t->data_as<float>()[0] = static_cast<float>(v);
  val.initializer = std::make_shared<Tensor>(std::move(t).value());
  return g_.add_value(std::move(val));
}

Attribute GradContext::attr_i(const std::string& n, int64_t v) {
  Attribute a;
  a.name = n;
  a.type = AttrType::kInt;
  a.i = v;
  return a;
}
Attribute GradContext::attr_f(const std::string& n, float v) {
  Attribute a;
  a.name = n;
  a.type = AttrType::kFloat;
  a.f = v;
  return a;
}
Attribute GradContext::attr_ints(const std::string& n, std::vector<int64_t> v) {
  Attribute a;
  a.name = n;
  a.type = AttrType::kInts;
  a.ints = std::move(v);
  return a;
}

Result<BackwardInfo> append_backward(Graph& g, const std::string& loss, const std::vector<std::string>& wrt) {
  const int loss_id = g.find_value(loss);
  if (loss_id < 0) return not_found("autodiff: no value named '" + loss + "' (the loss)");
  if (!is_float(g.values[loss_id].dtype))
    return invalid_argument(std::string("autodiff: the loss '") + loss + "' is " + dtype_name(g.values[loss_id].dtype) + ", not float or double");
  const size_t nv = g.values.size(), nn = g.nodes.size();
  std::vector<bool> reach(nv, false);
  std::vector<int> wrt_ids;
  for (const std::string& w : wrt) {
    int id = g.find_value(w);
    if (id < 0) return not_found("autodiff: no value named '" + w + "' to differentiate with respect to");
    if (!is_float(g.values[id].dtype))
      return invalid_argument("autodiff: '" + w + "' is " + dtype_name(g.values[id].dtype) + "; only float and double values have gradients");
    reach[id] = true;
    wrt_ids.push_back(id);
  }
  // Forward: values that depend on a wrt value through float edges.
  for (size_t i = 0; i < nn; ++i) {
    const Node& n = g.nodes[i];
    bool any = false;
    for (int in : n.inputs)
      if (in >= 0 && reach[in]) any = true;
    if (any)
      for (int o : n.outputs)
        // Intermediate values of a converted model may carry no dtype (kUndefined): only a
        // known non-float dtype stops the gradient.
        if (o >= 0 && (is_float(g.values[o].dtype) || g.values[o].dtype == DType::kUndefined)) reach[o] = true;
  }
  // Seed.
  BackwardInfo info;
  info.forward_nodes = nn;
  {
    Value s;
    s.name = fresh_name(g, loss + "_grad");
    s.dtype = g.values[loss_id].dtype;
    s.has_shape = g.values[loss_id].has_shape;
    s.shape = g.values[loss_id].shape;
    int sid = g.add_value(std::move(s));
    g.inputs.push_back(sid);
    info.seed = g.values[sid].name;
  }
  std::vector<std::vector<int>> contrib(nv);
  contrib[loss_id].push_back(g.find_value(info.seed));
  std::map<int, int> shape_cache;
  // The final cotangent of v: its contributions summed.
  auto total = [&](int v) -> int {
    std::vector<int>& c = contrib[v];
    if (c.empty()) return -1;
    while (c.size() > 1) {
      Node n;
      n.op_type = "Add";
      n.opset = 17;
      n.name = fresh_name(g, g.values[v].name + "/grad/accumulate");
      n.inputs = {c[0], c[1]};
      Value s;
      s.name = fresh_name(g, g.values[v].name + "/grad/sum");
      s.dtype = g.values[c[0]].dtype;
      n.outputs = {g.add_value(std::move(s))};
      int out = n.outputs[0];
      g.nodes.push_back(std::move(n));
      c.erase(c.begin(), c.begin() + 2);
      c.insert(c.begin(), out);
    }
    return c[0];
  };
  for (size_t i = nn; i-- > 0;) {
    std::vector<int> dys;
    bool any_dy = false;
    for (int o : g.nodes[i].outputs) {
      int d = o >= 0 && o < static_cast<int>(nv) ? total(o) : -1;
      dys.push_back(d);
      any_dy |= d >= 0;
    }
    if (!any_dy) continue;
    std::vector<bool> wants;
    bool any_want = false;
    for (int in : g.nodes[i].inputs) {
      bool w = in >= 0 && reach[in];
      wants.push_back(w);
      any_want |= w;
    }
    if (!any_want) continue;
    const Node& fn = g.nodes[i];
    auto it = grad_rules().find(rule_key(fn));
    if (it == grad_rules().end())
      return unimplemented(fn.describe() + ": op " + (fn.domain.empty() ? "" : fn.domain + ".") + fn.op_type +
                           " has no gradient rule, so it cannot be trained through");
    GradContext ctx(g, i, dys, wants, &shape_cache);
    Status st = it->second(ctx);
    if (!st.is_ok()) return st.with_context(ctx.node().describe() + " gradient");
    for (size_t k = 0; k < ctx.grads().size(); ++k)
      if (ctx.grads()[k] >= 0) contrib[ctx.node().inputs[k]].push_back(ctx.grads()[k]);
  }
  for (int id : wrt_ids) {
    int gid = total(id);
    if (gid < 0) {
      Node n;
      n.op_type = "ZerosLike";
      n.domain = kTrainOpDomain;
      n.name = fresh_name(g, g.values[id].name + "/grad/zeros");
      n.inputs = {id};
      Value s;
      s.name = fresh_name(g, g.values[id].name + "_grad");
      s.dtype = g.values[id].dtype;
      n.outputs = {g.add_value(std::move(s))};
      gid = n.outputs[0];
      g.nodes.push_back(std::move(n));
    }
    info.grads.push_back(g.values[gid].name);
  }
  // Move each backward Shape() of a forward value to just after the value's producer, so the
  // value itself is not kept alive until the backward pass only for its shape.
  std::vector<int> producer(g.values.size(), -1);
  for (size_t i = 0; i < nn; ++i)
    for (int o : g.nodes[i].outputs)
      if (o >= 0) producer[o] = static_cast<int>(i);
  std::vector<std::vector<Node>> after(nn + 1);  // after[p + 1]: moved behind node p (index 0: first)
  std::vector<Node> rest;
  for (size_t i = nn; i < g.nodes.size(); ++i) {
    Node& n = g.nodes[i];
    const bool fwd_shape = n.op_type == "Shape" && n.domain.empty() && n.inputs.size() == 1 &&
                           n.inputs[0] < static_cast<int>(nv);
    if (fwd_shape) after[producer[n.inputs[0]] + 1].push_back(std::move(n));
    else rest.push_back(std::move(n));
  }
  std::vector<Node> order;
  order.reserve(g.nodes.size());
  for (Node& n : after[0]) order.push_back(std::move(n));
  for (size_t i = 0; i < nn; ++i) {
    order.push_back(std::move(g.nodes[i]));
    for (Node& n : after[i + 1]) order.push_back(std::move(n));
  }
  info.forward_nodes = order.size();
  for (Node& n : rest) order.push_back(std::move(n));
  g.nodes = std::move(order);
  return info;
}

std::vector<std::string> saved_activations(const Graph& g, size_t forward_nodes) {
  std::set<int> fwd_out;
  for (size_t i = 0; i < forward_nodes && i < g.nodes.size(); ++i)
    for (int o : g.nodes[i].outputs)
      if (o >= 0) fwd_out.insert(o);
  std::set<std::string> saved;
  for (size_t i = forward_nodes; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    for (int in : n.inputs)
      if (in >= 0 && fwd_out.count(in) && is_float(g.values[in].dtype)) saved.insert(g.values[in].name);
  }
  return {saved.begin(), saved.end()};
}

}  // namespace tessera::train
