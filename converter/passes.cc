// Optimization passes over the Graph IR, run by the converter:
//  * Constant nodes -> initializers;
//  * constant folding: a node whose inputs are all constant is evaluated with the
//    reference kernels and replaced by its outputs;
//  * Conv + BatchNormalization folding (inference form, ONNX BatchNormalization-9/14/15):
//      y = gamma * (conv(x, W) + B - mean) / sqrt(var + eps) + beta
//        = conv(x, W * s) + (B - mean) * s + beta,   s = gamma / sqrt(var + eps) per channel;
//  * Conv + constant Mul/Div/Add/Sub folding (per channel or scalar, as onnxruntime's
//    ConvMulFusion/ConvAddFusion): conv(x, W) * s + d = conv(x, W * s) + (B * s + d);
//  * decomposed HardSwish: x * Clip(x + 3, 0, 6) / 6 (the form PaddlePaddle and others
//    export) -> HardSwish-14 (x * max(0, min(1, x / 6 + 1/2))), equal up to rounding, so
//    that the planner can fuse it into the Conv or Gemm before it;
//  * dead-code removal: nodes and values no graph output depends on.
#include <cmath>
#include <cstring>
#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "converter/converter.h"
#include "runtime/ops/op_schema.h"
#include "runtime/plan/evaluate.h"
#include "tessera/tsr_file.h"

namespace tessera {

namespace {

bool is_onnx(const Node& n, const char* op) { return (n.domain.empty() || n.domain == "ai.onnx") && n.op_type == op; }

bool has_subgraph(const Node& n) {
  for (const Attribute& a : n.attributes)
    if (a.g || !a.graphs.empty()) return true;
  return false;
}

template <typename F>
void for_each_subgraph(Graph& g, F&& f) {
  for (Node& n : g.nodes)
    for (Attribute& a : n.attributes) {
      if (a.g) f(*a.g);
      for (auto& sg : a.graphs) f(*sg);
    }
}

Status constants_to_initializers(Graph& g, ConvertReport* report) {
  std::vector<Node> kept;
  for (Node& n : g.nodes) {
    if (is_onnx(n, "Constant") && n.outputs.size() == 1 && n.outputs[0] >= 0) {
      TSR_ASSIGN_OR_RETURN(std::vector<Tensor> outs, evaluate_node(n, {}));
      Value& v = g.values[n.outputs[0]];
      v.initializer = std::make_shared<const Tensor>(std::move(outs[0]));
      v.dtype = v.initializer->dtype();
      v.has_shape = true;
      v.shape.clear();
      for (int64_t d : v.initializer->shape()) v.shape.push_back({d, ""});
      if (report) ++report->constants_to_weights;
      continue;
    }
    kept.push_back(std::move(n));
  }
  g.nodes = std::move(kept);
  Status st;
  for_each_subgraph(g, [&](Graph& sg) {
    if (st.is_ok()) st = constants_to_initializers(sg, report);
  });
  return st;
}

Status fold_constants(Graph& g, const ConvertOptions& opt, ConvertReport* report) {
  std::vector<Node> kept;
  for (Node& n : g.nodes) {
    bool foldable = !has_subgraph(n) && !n.inputs.empty();
    const OpSchema* schema = find_op_schema(n.domain, n.op_type);
    if (!schema || schema->kind != OpKind::kKernel) foldable = false;
    std::vector<const Tensor*> ins;
    for (int i : n.inputs) {
      if (i < 0) {
        ins.push_back(nullptr);
        continue;
      }
      const Value& v = g.values[i];
      if (!v.initializer) foldable = false;
      ins.push_back(v.initializer.get());
    }
    if (foldable) {
      auto outs = evaluate_node(n, ins);
      bool small = outs.is_ok();
      if (small)
        for (const Tensor& t : outs.value())
          if (static_cast<int64_t>(t.nbytes()) > opt.max_folded_bytes) small = false;
      if (small) {
        for (size_t k = 0; k < n.outputs.size(); ++k) {
          if (n.outputs[k] < 0) continue;
          Value& v = g.values[n.outputs[k]];
          v.initializer = std::make_shared<const Tensor>(std::move(outs.value()[k]));
          v.dtype = v.initializer->dtype();
          v.has_shape = true;
          v.shape.clear();
          for (int64_t d : v.initializer->shape()) v.shape.push_back({d, ""});
        }
        if (report) ++report->folded;
        continue;
      }
      // Not foldable now (e.g. an error the run will report with more context): keep it.
    }
    kept.push_back(std::move(n));
  }
  g.nodes = std::move(kept);
  Status st;
  for_each_subgraph(g, [&](Graph& sg) {
    if (st.is_ok()) st = fold_constants(sg, opt, report);
  });
  return st;
}

/// Number of times each value is read (node inputs, graph outputs, subgraph references).
std::vector<int> use_counts(const Graph& g) {
  std::vector<int> uses(g.values.size(), 0);
  for (const Node& n : g.nodes)
    for (int i : n.inputs)
      if (i >= 0) ++uses[i];
  for (int o : g.outputs) ++uses[o];
  std::unordered_set<std::string> outer;
  for (const Node& n : g.nodes) n.outer_reads(outer);
  for (const auto& name : outer) {
    int id = g.find_value(name);
    if (id >= 0) ++uses[id];
  }
  return uses;
}

/// For each value of `g`, the index of the node that writes it, or -1.
std::vector<int> producers(const Graph& g) {
  std::vector<int> producer(g.values.size(), -1);
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (int o : g.nodes[i].outputs)
      if (o >= 0) producer[o] = static_cast<int>(i);
  return producer;
}

/// Gives Conv node `ci` of `g` new constant weights W and bias B (fresh initializers named
/// after the node with `suffix`) and makes it write value `out` (the output of the node
/// folded into it).
void set_conv_weights(Graph& g, int ci, Tensor w, Tensor b, int out, const std::string& suffix) {
  Value nw, nb;
  nw.name = g.nodes[ci].name + "/W_" + suffix;
  nb.name = g.nodes[ci].name + "/B_" + suffix;
  for (Value* v : {&nw, &nb}) {
    while (g.find_value(v->name) >= 0) v->name += "_";
    v->dtype = DType::kFloat32;
    v->has_shape = true;
  }
  for (int64_t d : w.shape()) nw.shape.push_back({d, ""});
  for (int64_t d : b.shape()) nb.shape.push_back({d, ""});
  nw.initializer = std::make_shared<const Tensor>(std::move(w));
  nb.initializer = std::make_shared<const Tensor>(std::move(b));
  const int wid = g.add_value(std::move(nw));
  const int bid = g.add_value(std::move(nb));
  Node& conv = g.nodes[ci];
  conv.inputs.resize(3);
  conv.inputs[1] = wid;
  conv.inputs[2] = bid;
  conv.outputs[0] = out;
}

Status fold_batchnorm(Graph& g, ConvertReport* report) {
  std::vector<int> producer = producers(g);
  std::vector<int> uses = use_counts(g);
  std::vector<char> drop(g.nodes.size(), 0);
  for (size_t bi = 0; bi < g.nodes.size(); ++bi) {
    Node& bn = g.nodes[bi];
    if (!is_onnx(bn, "BatchNormalization") || bn.inputs.size() != 5 || bn.outputs.empty()) continue;
    if (bn.attr_i("training_mode", 0) != 0) continue;
    int extra_outputs = 0;
    for (size_t k = 1; k < bn.outputs.size(); ++k) extra_outputs += bn.outputs[k] >= 0;
    if (extra_outputs) continue;
    int x = bn.inputs[0];
    if (x < 0 || producer[x] < 0 || uses[x] != 1) continue;
    Node& conv = g.nodes[producer[x]];
    if (!is_onnx(conv, "Conv") || conv.inputs.size() < 2 || conv.outputs.size() != 1) continue;
    const Value& wv = g.values[conv.inputs[1]];
    if (!wv.initializer || wv.dtype != DType::kFloat32 || wv.initializer->rank() < 3) continue;
    bool params_ok = true;
    const Tensor* p[4];
    const int64_t oc = wv.initializer->dim(0);
    for (int k = 0; k < 4; ++k) {
      int id = bn.inputs[1 + k];
      if (id < 0 || !g.values[id].initializer || g.values[id].dtype != DType::kFloat32 ||
          g.values[id].initializer->numel() != oc) {
        params_ok = false;
        break;
      }
      p[k] = g.values[id].initializer.get();
    }
    const Tensor* bias = nullptr;
    if (conv.inputs.size() > 2 && conv.inputs[2] >= 0) {
      const Value& bv = g.values[conv.inputs[2]];
      if (!bv.initializer || bv.dtype != DType::kFloat32 || bv.initializer->numel() != oc) params_ok = false;
      bias = bv.initializer.get();
    }
    if (!params_ok) continue;
    const float eps = bn.attr_f("epsilon", 1e-5f);
    const float *gamma = p[0]->data_as<float>(), *beta = p[1]->data_as<float>(), *mean = p[2]->data_as<float>(),
                *var = p[3]->data_as<float>();
    TSR_ASSIGN_OR_RETURN(Tensor w2, wv.initializer->clone());
    TSR_ASSIGN_OR_RETURN(Tensor b2, Tensor::allocate(DType::kFloat32, {oc}));
    const int64_t per_oc = w2.numel() / std::max<int64_t>(oc, 1);
    for (int64_t c = 0; c < oc; ++c) {
      // Double precision for the per-channel scale keeps the fold within float rounding.
      double s = static_cast<double>(gamma[c]) / std::sqrt(static_cast<double>(var[c]) + eps);
      float* w = w2.data_as<float>() + c * per_oc;
      for (int64_t k = 0; k < per_oc; ++k) w[k] = static_cast<float>(w[k] * s);
      double b = bias ? bias->data_as<float>()[c] : 0.0;
      b2.data_as<float>()[c] = static_cast<float>((b - mean[c]) * s + beta[c]);
    }
    // The Conv now writes the BatchNormalization's output.
    set_conv_weights(g, producer[x], std::move(w2), std::move(b2), bn.outputs[0], "bn_folded");
    drop[bi] = 1;
    if (report) ++report->batchnorms_folded;
  }
  std::vector<Node> kept;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (!drop[i]) kept.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(kept);
  Status st;
  for_each_subgraph(g, [&](Graph& sg) {
    if (st.is_ok()) st = fold_batchnorm(sg, report);
  });
  return st;
}

/// A float constant (an initializer) of `g`, or nullptr.
const Tensor* float_const(const Graph& g, int id) {
  if (id < 0 || !g.values[id].initializer || g.values[id].dtype != DType::kFloat32) return nullptr;
  return g.values[id].initializer.get();
}

/// Per-channel values of constant `c` for a Conv output of rank `rank` with `oc` channels
/// (dim 1) under numpy broadcasting, when c broadcasts along the channel dim only (a scalar,
/// [oc, 1, ...], [1, oc, 1, ...]) and does not enlarge the output; empty otherwise.
std::vector<double> per_channel(const Tensor& c, size_t rank, int64_t oc) {
  const Shape& cs = c.shape();
  if (cs.size() > rank) return {};
  for (size_t j = 0; j < cs.size(); ++j) {
    const size_t d = rank - cs.size() + j;
    if (cs[j] != 1 && !(d == 1 && cs[j] == oc)) return {};
  }
  std::vector<double> v(static_cast<size_t>(oc));
  const float* p = c.data_as<float>();
  for (int64_t k = 0; k < oc; ++k) v[static_cast<size_t>(k)] = c.numel() == 1 ? p[0] : p[k];
  return v;
}

/// Folds constant Mul, Div, Add and Sub after a Conv with constant float W (and B) into W
/// and B, repeatedly. The Conv's output must have no other reader.
Status fold_conv_affine(Graph& g, ConvertReport* report) {
  bool changed = true;
  while (changed) {
    changed = false;
    std::vector<int> producer = producers(g);
    std::vector<int> uses = use_counts(g);
    for (size_t ni = 0; ni < g.nodes.size() && !changed; ++ni) {
      const Node& op = g.nodes[ni];
      const bool mul = is_onnx(op, "Mul"), div = is_onnx(op, "Div"), add = is_onnx(op, "Add"), sub = is_onnx(op, "Sub");
      if (!(mul || div || add || sub) || op.inputs.size() != 2 || op.outputs.size() != 1) continue;
      for (int side = 0; side < 2 && !changed; ++side) {
        const int x = op.inputs[side], k = op.inputs[1 - side];
        if ((div || sub) && side != 0) continue;  // only conv / s and conv - d
        if (x < 0 || producer[x] < 0 || uses[x] != 1) continue;
        const Node& conv = g.nodes[producer[x]];
        if (!is_onnx(conv, "Conv") || conv.inputs.size() < 2 || conv.outputs.size() != 1) continue;
        const Tensor* w = float_const(g, conv.inputs[1]);
        const Tensor* kc = float_const(g, k);
        if (!w || !kc || w->rank() < 3) continue;
        const int64_t oc = w->dim(0);
        const Tensor* b = nullptr;
        if (conv.inputs.size() > 2 && conv.inputs[2] >= 0) {
          b = float_const(g, conv.inputs[2]);
          if (!b || b->numel() != oc) continue;
        }
        std::vector<double> c = per_channel(*kc, w->rank(), oc);
        if (c.empty()) continue;
        bool finite = true;
        for (double v : c) finite = finite && std::isfinite(v) && !(div && v == 0.0);
        if (!finite) continue;
        TSR_ASSIGN_OR_RETURN(Tensor w2, w->clone());
        TSR_ASSIGN_OR_RETURN(Tensor b2, Tensor::allocate(DType::kFloat32, {oc}));
        const int64_t per_oc = w2.numel() / std::max<int64_t>(oc, 1);
        for (int64_t ch = 0; ch < oc; ++ch) {
          const double s = mul ? c[ch] : div ? 1.0 / c[ch] : 1.0;
          const double d = add ? c[ch] : sub ? -c[ch] : 0.0;
          float* wp = w2.data_as<float>() + ch * per_oc;
          if (mul || div)
            for (int64_t q = 0; q < per_oc; ++q) wp[q] = static_cast<float>(div ? wp[q] / c[ch] : wp[q] * s);
          const double bv = b ? b->data_as<float>()[ch] : 0.0;
          b2.data_as<float>()[ch] = static_cast<float>(div ? bv / c[ch] : bv * s + d);
        }
        // The Conv now writes the Mul/Div/Add/Sub's output.
        set_conv_weights(g, producer[x], std::move(w2), std::move(b2), g.nodes[ni].outputs[0], "affine_folded");
        g.nodes.erase(g.nodes.begin() + static_cast<std::ptrdiff_t>(ni));
        if (report) ++report->conv_affine_folded;
        changed = true;
      }
    }
  }
  Status st;
  for_each_subgraph(g, [&](Graph& sg) {
    if (st.is_ok()) st = fold_conv_affine(sg, report);
  });
  return st;
}

/// The scalar value of float constant `id`, if it is one element.
bool scalar_const(const Graph& g, int id, float* v) {
  const Tensor* t = float_const(g, id);
  if (!t || t->numel() != 1) return false;
  *v = t->data_as<float>()[0];
  return true;
}

/// Whether the constant inputs of nodes `absorbed` and `last` (indices in g.nodes), which a
/// fusion is about to replace by a one-input op on `x`, leave the shape of x unchanged: a
/// scalar constant of rank r broadcasts x up to rank r (x: [50], 0.5 of shape [1,1,1] ->
/// [1,1,50]), which the fused op would lose. Without x's rank, constants of rank <= 1 pass
/// (exporters write [1]-shaped scalars, e.g. Paddle's p2o.helper.constant; they change the
/// shape only of a rank-0 x).
bool constants_keep_rank(const Graph& g, size_t last, const std::vector<int>& absorbed, int x) {
  const Value& xv = g.values[static_cast<size_t>(x)];
  auto ok = [&](const Node& n) {
    for (int v : n.inputs) {
      if (v < 0 || v == x || !g.values[static_cast<size_t>(v)].initializer) continue;
      const size_t r = g.values[static_cast<size_t>(v)].initializer->shape().size();
      if (r > (xv.has_shape ? xv.shape.size() : size_t{1})) return false;
    }
    return true;
  };
  if (!ok(g.nodes[last])) return false;
  for (int k : absorbed)
    if (!ok(g.nodes[static_cast<size_t>(k)])) return false;
  return true;
}

/// Replaces a matched pattern: node `last` (index in g.nodes) by a one-input node `op`
/// (opset `opset`, named after `last`) that reads `x` and writes last's output; the nodes
/// listed in `absorbed` (indices) are removed. Indices are those before the call.
void replace_pattern(Graph& g, size_t last, const std::vector<int>& absorbed, const char* op, int opset, int x,
                     const char* suffix) {
  Node n;
  n.name = g.nodes[last].name + suffix;
  n.op_type = op;
  n.opset = opset;
  n.inputs = {x};
  n.outputs = {g.nodes[last].outputs[0]};
  std::vector<char> drop(g.nodes.size(), 0);
  for (int k : absorbed) drop[static_cast<size_t>(k)] = 1;
  std::vector<Node> kept;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (i == last) kept.push_back(n);
    else if (!drop[i]) kept.push_back(std::move(g.nodes[i]));
  }
  g.nodes = std::move(kept);
}

/// x * Clip(x + 3, 0, 6) / 6 (also (x + 3) first, the Mul's operands either way, and
/// Clip(...) / 6 before the Mul, or * (1/6)) -> HardSwish(x). Clip-11+ only (min and max
/// as inputs), float32.
Status fuse_hardswish(Graph& g, ConvertReport* report) {
  bool changed = true;
  while (changed) {
    changed = false;
    std::vector<int> producer = producers(g);
    std::vector<int> uses = use_counts(g);
    auto single = [&](int v) { return v >= 0 && uses[v] == 1 && producer[v] >= 0; };
    // Is node `n` "t * k" or "t / 6" scaling by 1/6? Returns t.
    auto sixth_of = [&](const Node& n, int* t) {
      float k = 0;
      if (n.inputs.size() != 2 || n.outputs.size() != 1) return false;
      if (is_onnx(n, "Div") && scalar_const(g, n.inputs[1], &k) && k == 6.f) return *t = n.inputs[0], true;
      if (is_onnx(n, "Mul"))
        for (int s = 0; s < 2; ++s)
          if (scalar_const(g, n.inputs[1 - s], &k) && std::fabs(k - 1.f / 6.f) < 1e-7f) return *t = n.inputs[s], true;
      return false;
    };
    // Is value `v` Clip(x + 3, 0, 6) (each intermediate read once)? Returns x and the nodes.
    auto relu6_of_x_plus_3 = [&](int v, int* x, std::vector<int>* nodes) {
      if (!single(v)) return false;
      const Node& clip = g.nodes[producer[v]];
      float lo = 0, hi = 0;
      if (!is_onnx(clip, "Clip") || clip.opset < 11 || clip.inputs.size() != 3 || !scalar_const(g, clip.inputs[1], &lo) ||
          !scalar_const(g, clip.inputs[2], &hi) || lo != 0.f || hi != 6.f)
        return false;
      const int a = clip.inputs[0];
      if (!single(a)) return false;
      const Node& add = g.nodes[producer[a]];
      if (!is_onnx(add, "Add") || add.inputs.size() != 2) return false;
      for (int s = 0; s < 2; ++s) {
        float three = 0;
        if (scalar_const(g, add.inputs[1 - s], &three) && three == 3.f && add.inputs[s] >= 0 &&
            g.values[add.inputs[s]].dtype != DType::kFloat16) {
          *x = add.inputs[s];
          nodes->push_back(producer[a]);
          nodes->push_back(producer[v]);
          return true;
        }
      }
      return false;
    };
    for (size_t ni = 0; ni < g.nodes.size() && !changed; ++ni) {
      const Node& last = g.nodes[ni];
      if (last.outputs.size() != 1 || last.outputs[0] < 0) continue;
      int x = -1;
      std::vector<int> nodes;
      int t = -1;
      if (sixth_of(last, &t) && single(t) && is_onnx(g.nodes[producer[t]], "Mul")) {
        // (x * relu6(x + 3)) / 6
        const Node& m = g.nodes[producer[t]];
        if (m.inputs.size() != 2) continue;
        for (int s = 0; s < 2 && x < 0; ++s) {
          std::vector<int> ns;
          int xx = -1;
          if (relu6_of_x_plus_3(m.inputs[1 - s], &xx, &ns) && xx == m.inputs[s]) {
            x = xx;
            nodes = ns;
            nodes.push_back(producer[t]);
          }
        }
      } else if (is_onnx(last, "Mul") && last.inputs.size() == 2) {
        // x * (relu6(x + 3) / 6)
        for (int s = 0; s < 2 && x < 0; ++s) {
          const int q = last.inputs[1 - s];
          if (!single(q)) continue;
          int r = -1;
          if (!sixth_of(g.nodes[producer[q]], &r)) continue;
          std::vector<int> ns;
          int xx = -1;
          if (relu6_of_x_plus_3(r, &xx, &ns) && xx == last.inputs[s]) {
            x = xx;
            nodes = ns;
            nodes.push_back(producer[q]);
          }
        }
      }
      if (x < 0 || g.values[x].dtype == DType::kFloat16 || g.values[x].dtype == DType::kBFloat16) continue;
      if (g.values[x].dtype != DType::kFloat32 && g.values[x].dtype != DType::kUndefined) continue;
      if (!constants_keep_rank(g, ni, nodes, x)) continue;
      // HardSwish takes the last node's place (its output), the others go.
      replace_pattern(g, ni, nodes, "HardSwish", std::max(14, last.opset), x, "/hardswish");
      if (report) ++report->hardswish_fused;
      changed = true;
    }
  }
  Status st;
  for_each_subgraph(g, [&](Graph& sg) {
    if (st.is_ok()) st = fuse_hardswish(sg, report);
  });
  return st;
}

/// Removes nodes no output depends on, then values nothing refers to, and renumbers.
Status remove_dead(Graph& g, ConvertReport* report) {
  for_each_subgraph(g, [&](Graph& sg) { (void)remove_dead(sg, report); });
  std::vector<char> live_value(g.values.size(), 0);
  for (int o : g.outputs) live_value[o] = 1;
  std::unordered_set<std::string> outer;
  std::vector<char> live_node(g.nodes.size(), 0);
  for (int i = static_cast<int>(g.nodes.size()) - 1; i >= 0; --i) {
    const Node& n = g.nodes[i];
    bool live = false;
    for (int o : n.outputs)
      if (o >= 0 && live_value[o]) live = true;
    if (!live) continue;
    live_node[i] = 1;
    for (int in : n.inputs)
      if (in >= 0) live_value[in] = 1;
    std::unordered_set<std::string> names;
    n.outer_reads(names);
    for (const auto& name : names) {
      int id = g.find_value(name);
      if (id >= 0) live_value[id] = 1;
    }
  }
  for (int i : g.inputs) live_value[i] = 1;
  // Node outputs that are unused stay as values (kernels still write them).
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (live_node[i])
      for (int o : g.nodes[i].outputs)
        if (o >= 0) live_value[o] = 1;
  for (const Value& v : g.values)
    if (v.outer_scope) live_value[&v - g.values.data()] = 1;

  std::vector<int> remap(g.values.size(), -1);
  std::vector<Value> values;
  for (size_t i = 0; i < g.values.size(); ++i)
    if (live_value[i]) {
      remap[i] = static_cast<int>(values.size());
      values.push_back(std::move(g.values[i]));
    }
  std::vector<Node> nodes;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (!live_node[i]) {
      if (report) ++report->dead_removed;
      continue;
    }
    Node n = std::move(g.nodes[i]);
    for (int& in : n.inputs)
      if (in >= 0) in = remap[in];
    for (int& o : n.outputs)
      if (o >= 0) o = remap[o];
    nodes.push_back(std::move(n));
  }
  for (int& i : g.inputs) i = remap[i];
  for (int& o : g.outputs) o = remap[o];
  g.values = std::move(values);
  g.nodes = std::move(nodes);
  g.reindex();
  return Status::ok();
}

/// 0.5 * x * (1 + Erf(x / sqrt(2))) -> Gelu(x) (ONNX Gelu-20, approximate "none"): the
/// decomposition exporters write for opsets before 20 (Hendrycks & Gimpel, "Gaussian Error
/// Linear Units", 2016). Matched: Erf of x * c (c = 1/sqrt(2)) or x / c (c = sqrt(2)), to
/// within 1e-6; + 1 (either operand order); then multiplied by x and by 0.5 in any grouping:
/// (x * 0.5) * s, (x * s) * 0.5, x * (s * 0.5), and the operands of each Mul either way.
/// Each intermediate must have no other reader. float32 only.
Status fuse_gelu(Graph& g, ConvertReport* report) {
  bool changed = true;
  while (changed) {
    changed = false;
    std::vector<int> producer = producers(g);
    std::vector<int> uses = use_counts(g);
    auto single = [&](int v) { return v >= 0 && uses[v] == 1 && producer[v] >= 0; };
    auto node_of = [&](int v) -> const Node* { return v >= 0 && producer[v] >= 0 ? &g.nodes[producer[v]] : nullptr; };
    // Is `n` a binary op `op` with a scalar constant operand equal to `k` (within tol)?
    // Returns the other operand.
    auto with_const = [&](const Node* n, const char* op, double k, double tol, int* other) {
      if (!n || !is_onnx(*n, op) || n->inputs.size() != 2 || n->outputs.size() != 1) return false;
      for (int side = 0; side < 2; ++side) {
        float v = 0;
        if (scalar_const(g, n->inputs[1 - side], &v) && std::fabs(v - k) <= tol) return *other = n->inputs[side], true;
      }
      return false;
    };
    // Is value `s` (read once) 1 + Erf(x / sqrt(2))? Returns x and the three nodes.
    auto one_plus_erf = [&](int s, int* x, std::vector<int>* nodes) {
      int e = -1, d = -1, xx = -1;
      if (!single(s) || !with_const(node_of(s), "Add", 1.0, 0.0, &e) || !single(e)) return false;
      const Node* erf = node_of(e);
      if (!erf || !is_onnx(*erf, "Erf") || erf->inputs.size() != 1 || !single(erf->inputs[0])) return false;
      d = erf->inputs[0];
      const Node* scale = node_of(d);
      const bool div = scale && is_onnx(*scale, "Div") && scale->inputs.size() == 2 &&
                       [&] { float v = 0; return scalar_const(g, scale->inputs[1], &v) && std::fabs(v - std::sqrt(2.0)) <= 1e-6; }();
      if (div) xx = scale->inputs[0];
      else if (!with_const(scale, "Mul", 1.0 / std::sqrt(2.0), 1e-6, &xx)) return false;
      *x = xx;
      *nodes = {producer[s], producer[e], producer[d]};
      return true;
    };
    for (size_t ni = 0; ni < g.nodes.size() && !changed; ++ni) {
      const Node& last = g.nodes[ni];
      if (!is_onnx(last, "Mul") || last.inputs.size() != 2 || last.outputs.size() != 1 || last.outputs[0] < 0) continue;
      int x = -1;
      std::vector<int> nodes;
      for (int side = 0; side < 2 && x < 0; ++side) {
        const int u = last.inputs[side], v = last.inputs[1 - side];
        int t = -1, xx = -1;
        std::vector<int> ns;
        // (x * 0.5) * s
        if (single(u) && with_const(node_of(u), "Mul", 0.5, 0.0, &t) && one_plus_erf(v, &xx, &ns) && xx == t) {
          x = xx, nodes = ns, nodes.push_back(producer[u]);
          break;
        }
        // (x * s) * 0.5, with u = x * s and v = 0.5
        float half = 0;
        if (single(u) && scalar_const(g, v, &half) && half == 0.5f) {
          const Node* m = node_of(u);
          if (m && is_onnx(*m, "Mul") && m->inputs.size() == 2)
            for (int s2 = 0; s2 < 2 && x < 0; ++s2)
              if (one_plus_erf(m->inputs[1 - s2], &xx, &ns) && xx == m->inputs[s2])
                x = xx, nodes = ns, nodes.push_back(producer[u]);
          if (x >= 0) break;
        }
        // x * (s * 0.5), with v = s * 0.5
        if (single(v) && with_const(node_of(v), "Mul", 0.5, 0.0, &t) && one_plus_erf(t, &xx, &ns) && xx == u) {
          x = xx, nodes = ns, nodes.push_back(producer[v]);
          break;
        }
      }
      if (x < 0 || (g.values[x].dtype != DType::kFloat32 && g.values[x].dtype != DType::kUndefined)) continue;
      if (!constants_keep_rank(g, ni, nodes, x)) continue;
      replace_pattern(g, ni, nodes, "Gelu", 20, x, "/gelu");
      if (report) ++report->gelu_fused;
      changed = true;
    }
  }
  Status st;
  for_each_subgraph(g, [&](Graph& sg) {
    if (st.is_ok()) st = fuse_gelu(sg, report);
  });
  return st;
}

}  // namespace

Status optimize_model(Model& model, const ConvertOptions& options, ConvertReport* report) {
  Graph& g = model.graph;
  TSR_RETURN_IF_ERROR(constants_to_initializers(g, report));
  if (options.fold_constants) TSR_RETURN_IF_ERROR(fold_constants(g, options, report));
  if (options.fold_batchnorm) TSR_RETURN_IF_ERROR(fold_batchnorm(g, report));
  if (options.fold_conv_affine) TSR_RETURN_IF_ERROR(fold_conv_affine(g, report));
  if (options.fuse_hardswish) TSR_RETURN_IF_ERROR(fuse_hardswish(g, report));
  if (options.fuse_gelu) TSR_RETURN_IF_ERROR(fuse_gelu(g, report));
  if (options.remove_dead) TSR_RETURN_IF_ERROR(remove_dead(g, report));
  TSR_RETURN_IF_ERROR(g.validate().with_context("after optimization"));
  if (report) report->nodes_out = count_nodes(g);
  return Status::ok();
}

Status convert_onnx_file(const std::string& onnx_path, const std::string& tsr_path, const ConvertOptions& options,
                         ConvertReport* report) {
  TSR_ASSIGN_OR_RETURN(std::shared_ptr<Model> model, import_onnx(onnx_path, options, report));
  TSR_RETURN_IF_ERROR(optimize_model(*model, options, report));
  return write_tsr_file(*model, tsr_path);
}

}  // namespace tessera
