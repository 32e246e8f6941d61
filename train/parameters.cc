#include "train/parameters.h"

#include <regex>
#include <set>

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

}  // namespace tessera::train
