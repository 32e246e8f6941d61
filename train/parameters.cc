#include "train/parameters.h"

#include <map>
#include <regex>
#include <set>

#include "train/interpreter.h"

namespace tessera::train {

Result<std::vector<std::string>> trainable_parameters(const Graph& g, const std::string& freeze_text,
                                                      std::vector<std::string>* frozen, const std::vector<bool>* stage_nodes) {
  std::regex freeze;
  if (!freeze_text.empty()) {
    try {
      freeze = std::regex(freeze_text);
    } catch (const std::regex_error& e) {
      return invalid_argument("--freeze '" + freeze_text + "' is not a valid regular expression: " + e.what());
    }
  }
  std::set<int> used, excluded;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    const bool mine = !stage_nodes || (i < stage_nodes->size() && (*stage_nodes)[i]);
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      if (n.inputs[k] < 0) continue;
      if (mine) used.insert(n.inputs[k]);
      if (n.op_type == "BatchNormalization" && k >= 3) excluded.insert(n.inputs[k]);
      if ((n.op_type == "Clip" || n.op_type == "Pow" || n.op_type == "Dropout" || n.op_type == "Reshape") && k >= 1)
        excluded.insert(n.inputs[k]);
    }
  }
  std::vector<std::string> params;
  for (int v : used) {
    const Value& val = g.values[v];
    if (!val.initializer || val.initializer->dtype() != DType::kFloat32 || excluded.count(v) || val.initializer->numel() <= 1) continue;
    if (!freeze_text.empty() && std::regex_search(val.name, freeze)) {
      if (frozen) frozen->push_back(val.name);
      continue;
    }
    params.push_back(val.name);
  }
  return params;
}

int loss_input(const Graph& g, const std::string& loss, std::string* skipped) {
  if (skipped) skipped->clear();
  int v = g.outputs.empty() ? -1 : g.outputs[0];
  if (v < 0 || loss != "ce") return v;
  auto producer = [&](int x) {
    for (size_t i = 0; i < g.nodes.size(); ++i)
      for (int o : g.nodes[i].outputs)
        if (o == x) return static_cast<int>(i);
    return -1;
  };
  for (int p = producer(v); p >= 0; p = producer(v)) {
    const Node& n = g.nodes[p];
    if (n.op_type == "Identity") { v = n.inputs[0]; continue; }
    if (n.op_type == "Softmax" || n.op_type == "LogSoftmax") {
      v = n.inputs[0];
      if (skipped) *skipped = n.op_type;
    }
    break;
  }
  return v;
}

int append_loss_node(Graph& tg, const std::string& loss, double label_smoothing, int pred, std::string* target) {
  Value tv;
  tv.name = "tessera.train.target";
  tv.dtype = loss == "ce" ? DType::kInt64 : DType::kFloat32;
  const int tid = tg.add_value(std::move(tv));
  tg.inputs.push_back(tid);
  *target = tg.values[tid].name;
  Node n;
  n.op_type = loss == "ce" ? "SoftmaxCrossEntropy" : "MSELoss";
  n.domain = kTrainOpDomain;
  n.opset = 1;
  n.name = "tessera.train.loss";
  n.inputs = {pred, tid};
  if (loss == "ce") {
    Attribute a;
    a.name = "label_smoothing";
    a.type = AttrType::kFloat;
    a.f = static_cast<float>(label_smoothing);
    n.attributes.push_back(a);
  }
  Value lv;
  lv.name = n.name;
  lv.dtype = DType::kFloat32;
  n.outputs = {tg.add_value(std::move(lv))};
  tg.nodes.push_back(n);
  return n.outputs[0];
}

void set_int_attribute(Node& n, const std::string& name, int64_t v) {
  for (Attribute& a : n.attributes)
    if (a.name == name) {
      a.type = AttrType::kInt;
      a.i = v;
      return;
    }
  Attribute a;
  a.name = name;
  a.type = AttrType::kInt;
  a.i = v;
  n.attributes.push_back(a);
}

void set_dropout_training(Graph& g) {
  for (Node& n : g.nodes)
    if (n.op_type == "Dropout" && n.domain.empty()) set_int_attribute(n, "training_mode", 1);
}

bool zero_gradient(const Graph& tg, const std::string& grad) {
  const int gv = tg.find_value(grad);
  for (const Node& n : tg.nodes)
    if (!n.outputs.empty() && n.outputs[0] == gv && n.op_type == "ZerosLike") return true;
  return false;
}

Result<Param> param_to_train(const Graph& g, const std::string& name, const Model& model) {
  Param p;
  p.name = name;
  p.value = g.values[g.find_value(name)].initializer->clone().value();
  if (!model.training) return p;
  for (const OptimizerStateTensor& st : model.training->states)
    if (st.value == p.name) {
      if (st.data->shape() != p.value.shape() || st.data->dtype() != DType::kFloat32)
        return invalid_argument("checkpoint: optimizer state '" + st.value + "/" + st.name + "' " + st.data->describe() +
                                " does not match the parameter " + p.value.describe());
      p.state.push_back({st.name, st.data->clone().value()});
    }
  return p;
}

Status check_resumed_optimizer(const Model& model, const std::string& kind) {
  if (model.training && !model.training->optimizer.empty() && model.training->optimizer != kind)
    return invalid_argument("checkpoint was trained with optimizer '" + model.training->optimizer + "'; resuming with '" + kind +
                            "' would discard its state (give --optimizer " + model.training->optimizer + ")");
  if (!model.training) return Status::ok();
  // Each parameter's state is the set this optimizer keeps (optim.h, check_resumed_state):
  // another optimizer's state, or a misnamed one, would be carried along unused while the
  // optimizer started its own from zeros.
  std::map<std::string, std::vector<std::string>> names;  // parameter -> its state names, in file order
  for (const OptimizerStateTensor& st : model.training->states) names[st.value].push_back(st.name);
  OptimizerConfig c;
  c.kind = kind;
  for (const auto& [param, states] : names) TSR_RETURN_IF_ERROR(check_resumed_state(c, param, states));
  return Status::ok();
}

}  // namespace tessera::train
