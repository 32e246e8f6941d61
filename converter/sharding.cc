// `tessera convert --shard tp=N` (converter/sharding.h): Megatron-style column/row
// parallel pairs of MatMul/Gemm in MLP blocks.
#include "converter/sharding.h"

#include <map>
#include <set>

namespace tessera {

namespace {

const std::set<std::string>& elementwise_ops() {
  static const std::set<std::string> k = {"Add", "Sub", "Mul", "Div", "Relu", "Gelu", "Erf", "Tanh", "Sigmoid", "Neg",
                                          "Exp", "Sqrt", "Identity", "LeakyRelu", "Elu", "Selu", "Softplus", "HardSigmoid",
                                          "HardSwish", "Abs", "Log", "Reciprocal", "Clip"};
  return k;
}

// A MatMul/Gemm whose weight (input 1) is a 2-D initializer: its input dim K and output
// dim F (0 when it is not such a node).
struct Linear {
  bool ok = false;
  int in_dim = 0, out_dim = 0;  // weight dims holding K and F
  int64_t k = 0, f = 0;
};

Linear linear_of(const Graph& g, const Node& n) {
  Linear l;
  if (!n.domain.empty() || (n.op_type != "MatMul" && n.op_type != "Gemm") || n.inputs.size() < 2 || n.inputs[1] < 0) return l;
  if (n.op_type == "Gemm" && n.attr_i("transA", 0) != 0) return l;
  const Value& w = g.values[n.inputs[1]];
  if (!w.initializer || w.initializer->rank() != 2) return l;
  const bool tb = n.op_type == "Gemm" && n.attr_i("transB", 0) != 0;
  l.ok = true;
  l.in_dim = tb ? 1 : 0;
  l.out_dim = tb ? 0 : 1;
  l.k = w.initializer->dim(l.in_dim);
  l.f = w.initializer->dim(l.out_dim);
  return l;
}

std::string shape_str(const Tensor& t) { return shape_to_string(t.shape()); }

}  // namespace

Result<int> parse_shard_spec(const std::string& text) {
  const std::string bad = "--shard '" + text + "': expected tp=N with N an integer in [1, 65536]";
  if (text.size() < 4 || text.compare(0, 3, "tp=") != 0) return invalid_argument(bad);
  int64_t n = 0;
  for (size_t i = 3; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9' || n > 65536) return invalid_argument(bad);
    n = n * 10 + (text[i] - '0');
  }
  if (n < 1 || n > 65536) return invalid_argument(bad);
  return static_cast<int>(n);
}

Status annotate_tensor_parallel(Model& model, int tp, ShardReport* report) {
  if (tp < 1) return invalid_argument("--shard tp=" + std::to_string(tp) + ": N must be at least 1");
  if (!model.meshes.empty() || !model.shardings.empty())
    return invalid_argument("--shard: the model already has sharding annotations (" + std::to_string(model.meshes.size()) + " meshes, " +
                            std::to_string(model.shardings.size()) + " shardings)");
  const Graph& g = model.graph;
  std::map<int, std::vector<int>> consumers;  // value -> reading nodes
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (int in : g.nodes[i].inputs)
      if (in >= 0) consumers[in].push_back(static_cast<int>(i));
  std::set<int> outputs(g.outputs.begin(), g.outputs.end());
  std::set<int> used_nodes, used_weights;
  const uint32_t mesh = 0;
  std::vector<TensorSharding> shardings;
  auto annotate = [&](int v, Placement p, const std::string& why) {
    TensorSharding s;
    s.value = g.values[v].name;
    s.mesh = mesh;
    s.placements = {p};
    if (g.values[v].initializer) s.global_shape = g.values[v].initializer->shape();
    shardings.push_back(s);
    if (report)
      report->lines.push_back(s.value + (g.values[v].initializer ? " " + shape_str(*g.values[v].initializer) : std::string()) + ": " +
                              p.describe() + "  (" + why + ")");
  };
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n1 = g.nodes[i];
    const Linear l1 = linear_of(g, n1);
    if (!l1.ok || used_nodes.count(static_cast<int>(i)) || n1.outputs.empty()) continue;
    // The region: values computed from n1's output by elementwise ops, up to a second linear op.
    std::set<int> region = {n1.outputs[0]}, region_nodes;
    int bias = -1, n2 = -1;
    bool escapes = false;
    for (size_t j = i + 1; j < g.nodes.size() && n2 < 0 && !escapes; ++j) {
      const Node& m = g.nodes[j];
      bool reads = false;
      for (int in : m.inputs)
        if (in >= 0 && region.count(in)) reads = true;
      if (!reads) continue;
      const Linear l2 = linear_of(g, m);
      if (l2.ok && region.count(m.inputs[0]) && !region.count(m.inputs[1]) && (m.inputs.size() < 3 || !region.count(m.inputs[2]))) {
        n2 = static_cast<int>(j);
        break;
      }
      if (!m.domain.empty() || !elementwise_ops().count(m.op_type)) { escapes = true; break; }
      for (int in : m.inputs) {
        if (in < 0 || region.count(in)) continue;
        const Value& v = g.values[in];
        if (v.initializer && v.initializer->numel() <= 1) continue;  // a scalar constant
        if (m.op_type == "Add" && bias < 0 && v.initializer && v.initializer->rank() == 1 && v.initializer->dim(0) == l1.f &&
            n1.op_type == "MatMul") {
          bias = in;
          continue;
        }
        escapes = true;
      }
      if (escapes) break;
      region_nodes.insert(static_cast<int>(j));
      for (int o : m.outputs)
        if (o >= 0) region.insert(o);
    }
    if (escapes || n2 < 0) continue;
    // Nothing outside the region and the second op may read the region's values.
    for (int v : region) {
      if (outputs.count(v)) escapes = true;
      for (int c : consumers[v])
        if (c != n2 && !region_nodes.count(c)) escapes = true;
    }
    const Node& m2 = g.nodes[n2];
    const Linear l2 = linear_of(g, m2);
    const int w1 = n1.inputs[1], w2 = m2.inputs[1];
    int c1 = n1.op_type == "Gemm" && n1.inputs.size() > 2 ? n1.inputs[2] : -1;
    if (c1 >= 0 && (!g.values[c1].initializer || g.values[c1].initializer->rank() != 1 || g.values[c1].initializer->dim(0) != l1.f))
      escapes = true;  // a Gemm C that is not a per-output bias cannot be split
    if (escapes || l2.k != l1.f || consumers[w1].size() != 1 || consumers[w2].size() != 1 || used_weights.count(w1) || used_weights.count(w2))
      continue;
    if (l1.f % tp != 0)
      return invalid_argument("--shard tp=" + std::to_string(tp) + ": " + n1.describe() + " has " + std::to_string(l1.f) +
                              " outputs (the hidden size of its column/row parallel pair with " + m2.describe() + "), which " +
                              std::to_string(tp) + " does not divide");
    const std::string pair = "pair " + std::to_string(report ? report->pairs + 1 : 0);
    annotate(w1, Placement::split(l1.out_dim), "column parallel, " + n1.describe() + ", " + pair);
    if (bias >= 0) annotate(bias, Placement::split(0), "bias of the column-parallel " + n1.describe());
    if (c1 >= 0) annotate(c1, Placement::split(0), "bias C of the column-parallel " + n1.describe());
    annotate(w2, Placement::split(l2.in_dim), "row parallel, " + m2.describe() + ", " + pair);
    // The second product: Partial(sum) (a Gemm's C is added after the all-reduce).
    annotate(m2.outputs[0], Placement::partial(), "the row-parallel product of " + m2.describe() + ": all-reduced before use");
    int c2 = m2.op_type == "Gemm" && m2.inputs.size() > 2 ? m2.inputs[2] : -1;
    if (c2 < 0 && consumers[m2.outputs[0]].size() == 1) {
      const Node& a = g.nodes[consumers[m2.outputs[0]][0]];
      if (a.op_type == "Add" && a.domain.empty() && a.inputs.size() == 2)
        for (int in : a.inputs)
          if (in != m2.outputs[0] && g.values[in].initializer && g.values[in].initializer->rank() == 1) c2 = in;
    }
    if (c2 >= 0 && g.values[c2].initializer) annotate(c2, Placement::broadcast(), "bias of the row-parallel " + m2.describe() + ": replicated");
    used_nodes.insert(n2);
    used_weights.insert(w1);
    used_weights.insert(w2);
    if (report) ++report->pairs;
  }
  if (shardings.empty())
    return invalid_argument("--shard tp=" + std::to_string(tp) + ": found no MLP block to cut (a MatMul/Gemm with a 2-D weight whose output "
                            "reaches a second one only through elementwise ops)");
  DeviceMesh m;
  m.name = "tp";
  m.shape = {tp};
  m.dim_names = {"tp"};
  m.roles = {MeshDimRole::kTensor};
  model.meshes.push_back(m);
  model.shardings = std::move(shardings);
  return Status::ok();
}

}  // namespace tessera
