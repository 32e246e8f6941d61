// `tessera convert --shard tp=N` (converter/sharding.h): Megatron-style column/row
// parallel MLP and attention blocks, vocab-parallel embeddings.
#include "converter/sharding.h"

#include <algorithm>
#include <map>
#include <set>

#include "train/sbp_rules.h"

namespace tessera {

namespace {

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
  // A block: seed linear ops (one for an MLP; Q, K and V reading the same input for
  // attention) whose outputs reach one linear op (the row-parallel one) only through
  // elementwise ops, biases, head reshapes/transposes, softmax and products of two block
  // values; nothing else reads the block's values.
  struct Block {
    bool ok = false;
    int out = -1;                       // the row-parallel node
    std::vector<int> biases, reshapes;  // bias initializers [F]; Reshape nodes in the block
  };
  auto find_block = [&](const std::vector<int>& seeds, int64_t f) {
    Block b;
    std::set<int> region, region_nodes;
    for (int sd : seeds) region.insert(g.nodes[sd].outputs[0]);
    const int first = *std::min_element(seeds.begin(), seeds.end());
    for (size_t j = first + 1; j < g.nodes.size(); ++j) {
      if (std::count(seeds.begin(), seeds.end(), static_cast<int>(j))) continue;
      const Node& m = g.nodes[j];
      bool reads = false;
      for (int in : m.inputs)
        if (in >= 0 && region.count(in)) reads = true;
      if (!reads) continue;
      const Linear l2 = linear_of(g, m);
      if (l2.ok && region.count(m.inputs[0]) && !region.count(m.inputs[1]) && (m.inputs.size() < 3 || !region.count(m.inputs[2]))) {
        b.out = static_cast<int>(j);
        break;
      }
      if (!m.domain.empty()) return b;
      if (m.op_type == "Reshape") {
        if (m.inputs.size() < 2 || !region.count(m.inputs[0]) || !g.values[m.inputs[1]].initializer) return b;
        b.reshapes.push_back(static_cast<int>(j));
      } else if (m.op_type == "MatMul") {  // Q K^T, P V: both operands in the block
        if (!region.count(m.inputs[0]) || !region.count(m.inputs[1])) return b;
      } else if (m.op_type == "Transpose" || m.op_type == "Softmax" || m.op_type == "LogSoftmax") {
      } else if (train::keeps_split(m.op_type)) {
        for (int in : m.inputs) {
          if (in < 0 || region.count(in)) continue;
          const Value& v = g.values[in];
          if (v.initializer && v.initializer->numel() <= 1) continue;  // a scalar constant
          if (m.op_type == "Add" && v.initializer && v.initializer->rank() == 1 && v.initializer->dim(0) == f &&
              b.biases.size() < seeds.size()) {
            b.biases.push_back(in);
            continue;
          }
          return b;
        }
      } else {
        return b;
      }
      region_nodes.insert(static_cast<int>(j));
      for (int o : m.outputs)
        if (o >= 0) region.insert(o);
    }
    if (b.out < 0) return b;
    for (int v : region) {
      if (outputs.count(v)) return b;
      for (int c : consumers[v])
        if (c != b.out && !region_nodes.count(c)) return b;
    }
    for (int sd : seeds) {
      const Node& n = g.nodes[sd];
      const int w = n.inputs[1];
      if (consumers[w].size() != 1 || used_weights.count(w)) return b;
      if (n.op_type == "Gemm" && n.inputs.size() > 2 && n.inputs[2] >= 0) {
        const Value& c = g.values[n.inputs[2]];
        if (!c.initializer || c.initializer->rank() != 1 || c.initializer->dim(0) != f) return b;  // not a per-output bias
      }
    }
    const Linear l2 = linear_of(g, g.nodes[b.out]);
    const int w2 = g.nodes[b.out].inputs[1];
    if (l2.k != f || consumers[w2].size() != 1 || used_weights.count(w2)) return b;
    b.ok = true;
    return b;
  };
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n1 = g.nodes[i];
    const Linear l1 = linear_of(g, n1);
    if (!l1.ok || used_nodes.count(static_cast<int>(i)) || n1.outputs.empty()) continue;
    // Q, K, V: the linear ops reading the same input with as many outputs.
    std::vector<int> seeds = {static_cast<int>(i)};
    for (size_t j = i + 1; j < g.nodes.size(); ++j) {
      const Linear l = linear_of(g, g.nodes[j]);
      if (l.ok && l.f == l1.f && g.nodes[j].inputs[0] == n1.inputs[0] && !used_nodes.count(static_cast<int>(j)))
        seeds.push_back(static_cast<int>(j));
    }
    Block b = find_block(seeds, l1.f);
    if (!b.ok && seeds.size() > 1) {
      seeds = {static_cast<int>(i)};
      b = find_block(seeds, l1.f);
    }
    if (!b.ok) continue;
    const Node& m2 = g.nodes[b.out];
    const Linear l2 = linear_of(g, m2);
    const bool attention = seeds.size() > 1 || !b.reshapes.empty();
    const std::string kind = attention ? "attention block" : "MLP block";
    if (l1.f % tp != 0)
      return invalid_argument("--shard tp=" + std::to_string(tp) + ": " + n1.describe() + " has " + std::to_string(l1.f) +
                              " outputs (the hidden size of its column/row parallel pair with " + m2.describe() + ", " + kind + "), which " +
                              std::to_string(tp) + " does not divide");
    for (int r : b.reshapes) {  // the head count must split evenly: each rank takes whole heads
      const Tensor& st = *g.values[g.nodes[r].inputs[1]].initializer;
      const int64_t nc = st.numel();
      auto at = [&](int64_t k) { return st.dtype() == DType::kInt64 ? st.data_as<int64_t>()[k] : static_cast<int64_t>(st.data_as<int32_t>()[k]); };
      if (nc >= 2 && at(nc - 2) > 0 && at(nc - 1) > 0 && at(nc - 2) * at(nc - 1) == l1.f && at(nc - 2) % tp != 0)
        return invalid_argument("--shard tp=" + std::to_string(tp) + ": " + g.nodes[r].describe() + " splits " + std::to_string(l1.f) + " into " +
                                std::to_string(at(nc - 2)) + " heads, which " + std::to_string(tp) + " does not divide");
    }
    const std::string pair = kind + " " + std::to_string(report ? report->pairs + 1 : 0);
    for (int sd : seeds) {
      const Node& n = g.nodes[sd];
      annotate(n.inputs[1], Placement::split(linear_of(g, n).out_dim), "column parallel, " + n.describe() + ", " + pair);
      if (n.op_type == "Gemm" && n.inputs.size() > 2 && n.inputs[2] >= 0)
        annotate(n.inputs[2], Placement::split(0), "bias C of the column-parallel " + n.describe());
      used_nodes.insert(sd);
      used_weights.insert(n.inputs[1]);
    }
    for (int bias : b.biases) annotate(bias, Placement::split(0), "bias of a column-parallel product, " + pair);
    annotate(m2.inputs[1], Placement::split(l2.in_dim), "row parallel, " + m2.describe() + ", " + pair);
    // The second product: Partial(sum). A Gemm's C is added once, after the all-reduce
    // (the training side splits it off): its output, product plus C, is not Partial.
    int c2 = m2.op_type == "Gemm" && m2.inputs.size() > 2 ? m2.inputs[2] : -1;
    if (c2 < 0) annotate(m2.outputs[0], Placement::partial(), "the row-parallel product of " + m2.describe() + ": all-reduced before use");
    if (c2 < 0 && consumers[m2.outputs[0]].size() == 1) {
      const Node& a = g.nodes[consumers[m2.outputs[0]][0]];
      if (a.op_type == "Add" && a.domain.empty() && a.inputs.size() == 2)
        for (int in : a.inputs)
          if (in != m2.outputs[0] && g.values[in].initializer && g.values[in].initializer->rank() == 1) c2 = in;
    }
    if (c2 >= 0 && g.values[c2].initializer) annotate(c2, Placement::broadcast(), "bias of the row-parallel " + m2.describe() + ": replicated");
    used_nodes.insert(b.out);
    used_weights.insert(m2.inputs[1]);
    if (report) {
      ++report->pairs;
      if (attention) ++report->attention;
    }
  }
  // Vocab-parallel embeddings: Gather(table [V, H] initializer, ids) on axis 0.
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (!n.domain.empty() || n.op_type != "Gather" || n.inputs.size() < 2 || n.attr_i("axis", 0) != 0) continue;
    const int t = n.inputs[0];
    const Value& tv = g.values[t];
    if (!tv.initializer || tv.initializer->rank() != 2 || (tv.initializer->dtype() != DType::kFloat32 && tv.initializer->dtype() != DType::kFloat64) || consumers[t].size() != 1 ||
        used_weights.count(t) || outputs.count(n.outputs[0]))
      continue;  // not a table, or one shared with another op (tied embeddings stay replicated)
    const int64_t v = tv.initializer->dim(0);
    if (v % tp != 0)
      return invalid_argument("--shard tp=" + std::to_string(tp) + ": " + n.describe() + " reads an embedding table of " + std::to_string(v) +
                              " rows (the vocabulary), which " + std::to_string(tp) + " does not divide");
    const std::string what = "vocab-parallel embedding " + n.describe();
    annotate(t, Placement::split(0), what);
    annotate(n.outputs[0], Placement::partial(), what + ": ids outside this rank's rows give zeros, all-reduced before use");
    used_weights.insert(t);
    if (report) ++report->embeddings;
  }
  if (shardings.empty())
    return invalid_argument("--shard tp=" + std::to_string(tp) + ": found no MLP or attention block to cut (a MatMul/Gemm with a 2-D "
                            "weight, or Q/K/V ones reading one input, whose outputs reach a second one only through elementwise ops, "
                            "head reshapes/transposes, softmax and their products)");
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
