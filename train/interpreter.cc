#include "train/interpreter.h"

#include "train/kernels.h"

namespace tessera::train {

const KernelTable& kernel_table() {
  static const KernelTable kTable = [] {
    KernelTable t;
    register_elementwise_kernels(t);
    register_linear_kernels(t);
    register_norm_kernels(t);
    register_shape_kernels(t);
    register_collective_kernels(t);
    return t;
  }();
  return kTable;
}

namespace {
std::string key_of(const std::string& domain, const std::string& op) {
  return (domain == "ai.onnx" ? std::string() : domain) + ":" + op;
}
}  // namespace

bool has_training_kernel(const std::string& domain, const std::string& op_type) {
  return kernel_table().count(key_of(domain, op_type)) != 0;
}

Result<std::unique_ptr<Interpreter>> Interpreter::create(std::shared_ptr<const Graph> graph,
                                                         const std::vector<std::string>& fetches) {
  auto it = std::unique_ptr<Interpreter>(new Interpreter());
  const Graph& g = *graph;
  for (const std::string& f : fetches) {
    int id = g.find_value(f);
    if (id < 0) return not_found("training graph: no value named '" + f + "' to fetch");
    it->fetch_ids_.push_back(id);
  }
  // Only the nodes some fetch depends on run.
  std::vector<bool> want(g.values.size(), false);
  for (int id : it->fetch_ids_) want[id] = true;
  it->needed_.assign(g.nodes.size(), false);
  for (size_t i = g.nodes.size(); i-- > 0;) {
    const Node& n = g.nodes[i];
    bool need = false;
    for (int o : n.outputs)
      if (o >= 0 && want[o]) need = true;
    if (!need) continue;
    it->needed_[i] = true;
    for (int in : n.inputs)
      if (in >= 0) want[in] = true;
  }
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (!it->needed_[i]) continue;
    if (!has_training_kernel(n.domain, n.op_type))
      return unimplemented(n.describe() + ": op " + (n.domain.empty() ? "" : n.domain + ".") + n.op_type +
                           " is not supported for training (no training kernel)");
  }
  it->last_use_.assign(g.values.size(), -1);
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (it->needed_[i])
      for (int in : g.nodes[i].inputs)
        if (in >= 0) it->last_use_[in] = static_cast<int>(i);
  for (int id : it->fetch_ids_) it->last_use_[id] = static_cast<int>(g.nodes.size());
  it->graph_ = std::move(graph);
  return it;
}

Result<std::vector<Tensor>> Interpreter::run(const std::vector<std::pair<std::string, Tensor>>& feeds, uint64_t seed,
                                             const FetchCallback* on_fetch) const {
  const Graph& g = *graph_;
  std::vector<Tensor> vals(g.values.size());
  for (size_t i = 0; i < g.values.size(); ++i)
    if (g.values[i].initializer) vals[i] = *g.values[i].initializer;
  for (const auto& [name, t] : feeds) {
    int id = g.find_value(name);
    if (id < 0) return invalid_argument("training graph: no input or initializer named '" + name + "'");
    vals[id] = t;
  }
  for (int id : g.inputs)
    if (!vals[id].defined() && last_use_[id] >= 0)
      return invalid_argument("training graph: input '" + g.values[id].name + "' is not fed");
  uint64_t live = 0, peak = 0;
  std::vector<bool> produced(g.values.size(), false);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (!needed_[i]) continue;
    const Node& n = g.nodes[i];
    std::vector<Tensor> out(n.outputs.size());
    KernelArgs args{n, g, {}, out, seed};
    for (int in : n.inputs) {
      if (in < 0) { args.in.push_back(nullptr); continue; }
      if (!vals[in].defined()) return internal_error(n.describe() + ": input '" + g.values[in].name + "' has no value");
      args.in.push_back(&vals[in]);
    }
    try {
      kernel_table().at(key_of(n.domain, n.op_type))(args);
    } catch (const KernelError& e) {
      return invalid_argument(n.describe() + ": " + e.what());
    } catch (const std::exception& e) {
      return internal_error(n.describe() + ": " + e.what());
    }
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      int o = n.outputs[k];
      if (o < 0) continue;
      if (!out[k].defined()) return internal_error(n.describe() + ": output " + std::to_string(k) + " was not computed");
      vals[o] = std::move(out[k]);
      produced[o] = true;
      live += vals[o].nbytes();
      if (on_fetch)
        for (size_t f = 0; f < fetch_ids_.size(); ++f)
          if (fetch_ids_[f] == o) (*on_fetch)(f, vals[o]);
    }
    peak = std::max(peak, live);
    // Release what no later node reads.
    for (int in : n.inputs)
      if (in >= 0 && last_use_[in] == static_cast<int>(i) && vals[in].defined()) {
        if (produced[in]) live -= vals[in].nbytes();
        vals[in] = Tensor();
      }
    for (int o : n.outputs)
      if (o >= 0 && last_use_[o] < 0 && vals[o].defined()) {
        live -= vals[o].nbytes();
        vals[o] = Tensor();
      }
  }
  peak_bytes_ = peak;
  std::vector<Tensor> res;
  for (int id : fetch_ids_) {
    if (!vals[id].defined()) return internal_error("training graph: fetch '" + g.values[id].name + "' was not computed");
    res.push_back(vals[id]);
  }
  return res;
}

}  // namespace tessera::train
