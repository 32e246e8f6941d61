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

size_t Interpreter::segment_of(size_t node, const std::vector<size_t>& starts) {
  size_t s = 0;
  for (size_t b : starts) s += node >= b ? 1 : 0;
  return s;
}

int Interpreter::segments_reading(const std::string& value, const std::vector<size_t>& segment_starts) const {
  const Graph& g = *graph_;
  const int id = g.find_value(value);
  if (id < 0) return 0;
  std::vector<bool> seen(segment_starts.size() + 1, false);
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (needed_[i])
      for (int in : g.nodes[i].inputs)
        if (in == id) seen[segment_of(i, segment_starts)] = true;
  int n = 0;
  for (bool b : seen) n += b ? 1 : 0;
  return n;
}

Result<std::vector<Tensor>> Interpreter::run(const std::vector<std::pair<std::string, Tensor>>& feeds, uint64_t seed,
                                             const FetchCallback* on_fetch, const ValueSource* source,
                                             const std::vector<bool>* drop_reported) const {
  const Graph& g = *graph_;
  std::vector<Tensor> vals(g.values.size());
  // ValueSource: provided[v] = k + 1 for names[k]; release_after[i] lists the provided
  // values whose last read in node i's segment is node i.
  std::vector<int> provided(g.values.size(), 0);
  std::vector<std::vector<int>> release_after(g.nodes.size());
  std::vector<int> acquire_order;  // indices into source->names
  size_t acquired = 0;
  if (source) {
    for (size_t k = 0; k < source->names.size(); ++k) {
      const int id = g.find_value(source->names[k]);
      if (id < 0) return invalid_argument("training graph: no value named '" + source->names[k] + "' to provide");
      provided[id] = static_cast<int>(k) + 1;
    }
    std::vector<int> last(g.values.size(), -1);  // last reader so far, per provided value
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (!needed_[i]) continue;
      for (int in : g.nodes[i].inputs) {
        if (in < 0 || !provided[in] || last[in] == static_cast<int>(i)) continue;
        if (last[in] >= 0 && segment_of(static_cast<size_t>(last[in]), source->segment_starts) != segment_of(i, source->segment_starts))
          release_after[last[in]].push_back(in);
        last[in] = static_cast<int>(i);
      }
    }
    for (size_t v = 0; v < g.values.size(); ++v)
      if (last[v] >= 0 && last_use_[v] != static_cast<int>(g.nodes.size())) release_after[last[v]].push_back(static_cast<int>(v));
    // The order in which the run below will acquire provided values (for prefetch hints).
    std::vector<bool> held(g.values.size(), false);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (!needed_[i]) continue;
      for (int in : g.nodes[i].inputs)
        if (in >= 0 && provided[in] && !held[in]) { held[in] = true; acquire_order.push_back(provided[in] - 1); }
      for (int v : release_after[i]) held[v] = false;
    }
  }
  for (size_t i = 0; i < g.values.size(); ++i)
    if (g.values[i].initializer && !provided[i]) vals[i] = *g.values[i].initializer;
  for (const auto& [name, t] : feeds) {
    int id = g.find_value(name);
    if (id < 0) return invalid_argument("training graph: no input or initializer named '" + name + "'");
    vals[id] = t;
  }
  for (int id : g.inputs)
    if (!vals[id].defined() && last_use_[id] >= 0)
      return invalid_argument("training graph: input '" + g.values[id].name + "' is not fed");
  uint64_t live = 0, peak = 0;
  std::vector<bool> produced(g.values.size(), false), dropped(g.values.size(), false);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (!needed_[i]) continue;
    const Node& n = g.nodes[i];
    std::vector<Tensor> out(n.outputs.size());
    KernelArgs args{n, g, {}, out, seed};
    for (int in : n.inputs) {
      if (in < 0) { args.in.push_back(nullptr); continue; }
      if (provided[in] && !vals[in].defined()) {
        auto t = source->acquire(static_cast<size_t>(provided[in] - 1));
        if (!t.is_ok()) return t.status().with_context(n.describe() + ": providing '" + g.values[in].name + "'");
        vals[in] = std::move(*t);
        if (++acquired < acquire_order.size() && source->prefetch) source->prefetch(static_cast<size_t>(acquire_order[acquired]));
      }
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
      bool drop = false;
      if (on_fetch)
        for (size_t f = 0; f < fetch_ids_.size(); ++f)
          if (fetch_ids_[f] == o) {
            (*on_fetch)(f, vals[o]);
            drop |= drop_reported && f < drop_reported->size() && (*drop_reported)[f];
          }
      if (drop) {
        peak = std::max(peak, live);
        live -= vals[o].nbytes();
        vals[o] = Tensor();
        dropped[o] = true;
      }
    }
    peak = std::max(peak, live);
    for (int v : release_after[i]) {
      if (!vals[v].defined()) continue;
      vals[v] = Tensor();
      source->release(static_cast<size_t>(provided[v] - 1));
    }
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
    if (dropped[id]) { res.emplace_back(); continue; }
    if (!vals[id].defined()) return internal_error("training graph: fetch '" + g.values[id].name + "' was not computed");
    res.push_back(vals[id]);
  }
  return res;
}

}  // namespace tessera::train
