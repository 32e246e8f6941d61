// Gradient rules: one function per op, registered in one table (grad_rules()). A rule gets
// the forward node and the cotangents of its outputs, and emits backward nodes that compute
// the cotangents of the inputs that need one (Griewank & Walther 2008, ch. 3). Internal to
// train/.
#pragma once

#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "tessera/graph.h"
#include "tessera/status.h"

namespace tessera::train {

class GradContext {
 public:
  GradContext(Graph& g, size_t node_index, std::vector<int> dys, std::vector<bool> wants, std::map<int, int>* shape_cache);

  /// The forward node (a copy: appending nodes moves g.nodes).
  const Node& node() const { return node_; }
  /// The forward node in the graph, for rules that must add an output (Dropout's mask).
  Node& forward_node() { return g_.nodes[index_]; }
  Graph& graph() { return g_; }
  /// Value id of input / output i, -1 when omitted.
  int in(size_t i) const { return i < node_.inputs.size() ? node_.inputs[i] : -1; }
  int out(size_t i) const { return i < node_.outputs.size() ? node_.outputs[i] : -1; }
  /// Cotangent value of output i, -1 when the loss does not depend on it.
  int dy(size_t i) const { return i < dys_.size() ? dys_[i] : -1; }
  /// Whether input i needs a cotangent.
  bool wants(size_t i) const { return i < wants_.size() && wants_[i]; }
  /// The float dtype of the cotangents (that of the first output cotangent).
  DType dtype() const { return dtype_; }

  /// Appends node `op` (domain "tessera.train" unless `onnx`) and returns its output ids
  /// (dtype `dtype()` unless `out_dtype` is given).
  std::vector<int> add_n(const std::string& op, const std::vector<int>& inputs, size_t outputs,
                         std::vector<Attribute> attrs = {}, bool onnx = false, DType out_dtype = DType::kUndefined);
  int add(const std::string& op, const std::vector<int>& inputs, std::vector<Attribute> attrs = {}, bool onnx = false) {
    return add_n(op, inputs, 1, std::move(attrs), onnx)[0];
  }
  int onnx(const std::string& op, const std::vector<int>& inputs, std::vector<Attribute> attrs = {}) {
    return add(op, inputs, std::move(attrs), true);
  }
  /// Shape(v) (int64 [rank]), made once per value.
  int shape(int v);
  /// ReduceSumTo(grad, Shape(like)): undoes numpy broadcasting of `like`.
  int sum_to(int grad, int like);
  /// A scalar initializer of dtype() holding v.
  int scalar(double v);
  /// Records the cotangent of input i.
  void set(size_t i, int grad) { if (wants(i) && grad >= 0) grads_[i] = grad; }
  const std::vector<int>& grads() const { return grads_; }

  static Attribute attr_i(const std::string& n, int64_t v);
  static Attribute attr_f(const std::string& n, float v);
  static Attribute attr_ints(const std::string& n, std::vector<int64_t> v);
  /// The forward node's attributes (to pass to a *Grad op that shares them).
  std::vector<Attribute> attrs() const { return node_.attributes; }

 private:
  Graph& g_;
  size_t index_;
  Node node_;
  std::vector<int> dys_;
  std::vector<bool> wants_;
  std::vector<int> grads_;
  DType dtype_ = DType::kFloat32;
  std::map<int, int>* shape_cache_;
};

using GradRule = Status (*)(GradContext& c);
using GradRuleTable = std::unordered_map<std::string, GradRule>;

void register_elementwise_grads(GradRuleTable& t);
void register_linear_grads(GradRuleTable& t);
void register_norm_grads(GradRuleTable& t);
void register_shape_grads(GradRuleTable& t);
/// The transposes of train/boxing.h's collective nodes.
void register_collective_grads(GradRuleTable& t);
/// Key: "domain:op" with "" for ONNX.
const GradRuleTable& grad_rules();

}  // namespace tessera::train
