#include "tessera/graph.h"

#include <unordered_set>

namespace tessera {

const Attribute* Node::find_attr(const std::string& n) const {
  for (const Attribute& a : attributes)
    if (a.name == n) return &a;
  return nullptr;
}

int64_t Node::attr_i(const std::string& n, int64_t def) const {
  const Attribute* a = find_attr(n);
  return a && a->type == AttrType::kInt ? a->i : def;
}

float Node::attr_f(const std::string& n, float def) const {
  const Attribute* a = find_attr(n);
  return a && a->type == AttrType::kFloat ? a->f : def;
}

std::string Node::attr_s(const std::string& n, const std::string& def) const {
  const Attribute* a = find_attr(n);
  return a && a->type == AttrType::kString ? a->s : def;
}

std::vector<int64_t> Node::attr_ints(const std::string& n, const std::vector<int64_t>& def) const {
  const Attribute* a = find_attr(n);
  return a && a->type == AttrType::kInts ? a->ints : def;
}

std::vector<float> Node::attr_floats(const std::string& n, const std::vector<float>& def) const {
  const Attribute* a = find_attr(n);
  return a && a->type == AttrType::kFloats ? a->floats : def;
}

std::string Node::describe() const {
  std::string d = domain.empty() ? op_type : domain + "." + op_type;
  return d + " node '" + name + "'";
}

namespace {
void outer_reads_of(const Graph& g, std::unordered_set<std::string>& out) {
  for (const Value& v : g.values)
    if (v.outer_scope) out.insert(v.name);
  for (const Node& n : g.nodes) n.outer_reads(out);
}
}  // namespace

void Node::outer_reads(std::unordered_set<std::string>& out) const {
  for (const Attribute& a : attributes) {
    if (a.g) outer_reads_of(*a.g, out);
    for (const auto& sg : a.graphs) outer_reads_of(*sg, out);
  }
}

std::string Placement::describe() const {
  switch (kind) {
    case PlacementKind::kBroadcast: return "B";
    case PlacementKind::kSplit: return "S(" + std::to_string(split_dim) + ")";
    case PlacementKind::kPartial: {
      static const char* const names[] = {"sum", "max", "min", "prod", "avg"};
      const auto r = static_cast<size_t>(reduce);
      return std::string("P(") + (r < 5 ? names[r] : "?") + ")";
    }
  }
  return "?";
}

int Graph::find_value(const std::string& n) const {
  if (index_.size() != values.size()) const_cast<Graph*>(this)->reindex();
  auto it = index_.find(n);
  return it == index_.end() ? -1 : it->second;
}

int Graph::add_value(Value v) {
  if (index_.size() != values.size()) reindex();
  int id = static_cast<int>(values.size());
  index_[v.name] = id;
  values.push_back(std::move(v));
  return id;
}

void Graph::reindex() {
  index_.clear();
  for (size_t i = 0; i < values.size(); ++i) index_.emplace(values[i].name, static_cast<int>(i));
}

namespace {

using Scope = std::vector<const std::unordered_set<std::string>*>;

Status validate_graph(const Graph& g, const Scope& outer) {
  const int nv = static_cast<int>(g.values.size());
  std::unordered_set<std::string> names;
  for (const Value& v : g.values) {
    if (!names.insert(v.name).second)
      return invalid_file("graph '" + g.name + "': value name '" + v.name + "' is used twice");
    if (v.initializer && v.initializer->dtype() != v.dtype)
      return invalid_file("graph '" + g.name + "': initializer '" + v.name + "' dtype mismatch");
  }
  auto visible_outside = [&](const std::string& name) {
    for (const auto* s : outer)
      if (s->count(name)) return true;
    return false;
  };
  std::vector<char> defined(nv, 0);
  for (int i : g.inputs) {
    if (i < 0 || i >= nv) return invalid_file("graph '" + g.name + "': input index out of range");
    if (defined[i]) return invalid_file("graph '" + g.name + "': input '" + g.values[i].name + "' is listed twice");
    if (outer.empty() && dtype_size(g.values[i].dtype) == 0)
      return invalid_file("graph '" + g.name + "': input '" + g.values[i].name + "' has no supported dtype (" +
                          dtype_name(g.values[i].dtype) + ")");
    defined[i] = 1;
  }
  for (int i = 0; i < nv; ++i) {
    const Value& v = g.values[i];
    if (v.initializer) defined[i] = 1;
    if (v.outer_scope) {
      if (!visible_outside(v.name))
        return invalid_file("graph '" + g.name + "': outer-scope value '" + v.name +
                            "' is not defined in an enclosing graph");
      defined[i] = 1;
    }
  }
  std::unordered_set<std::string> defined_names;
  for (int i = 0; i < nv; ++i)
    if (defined[i]) defined_names.insert(g.values[i].name);
  for (const Node& n : g.nodes) {
    if (n.op_type.empty()) return invalid_file("graph '" + g.name + "': a node has no op_type");
    for (int i : n.inputs) {
      if (i == -1) continue;
      if (i < -1 || i >= nv) return invalid_file(n.describe() + ": input index " + std::to_string(i) + " out of range");
      if (!defined[i])
        return invalid_file(n.describe() + ": input '" + g.values[i].name + "' is not defined before use");
    }
    // Subgraphs see everything defined so far here and outside.
    Scope inner = outer;
    inner.push_back(&defined_names);
    for (const Attribute& a : n.attributes) {
      if (a.type == AttrType::kGraph) {
        if (!a.g) return invalid_file(n.describe() + ": graph attribute '" + a.name + "' is empty");
        TSR_RETURN_IF_ERROR(validate_graph(*a.g, inner).with_context(n.describe() + " attribute " + a.name));
      }
      for (const auto& sg : a.graphs) {
        if (!sg) return invalid_file(n.describe() + ": empty subgraph in '" + a.name + "'");
        TSR_RETURN_IF_ERROR(validate_graph(*sg, inner).with_context(n.describe() + " attribute " + a.name));
      }
    }
    for (int o : n.outputs) {
      if (o == -1) continue;
      if (o < 0 || o >= nv) return invalid_file(n.describe() + ": output index out of range");
      if (defined[o])
        return invalid_file(n.describe() + ": output '" + g.values[o].name + "' is defined twice");
      defined[o] = 1;
      defined_names.insert(g.values[o].name);
    }
  }
  for (int o : g.outputs) {
    if (o < 0 || o >= nv) return invalid_file("graph '" + g.name + "': output index out of range");
    if (!defined[o]) return invalid_file("graph '" + g.name + "': output '" + g.values[o].name + "' is never computed");
  }
  return Status::ok();
}

}  // namespace

Status Graph::validate() const { return validate_graph(*this, {}); }

int64_t Model::opset(const std::string& domain) const {
  for (const auto& [d, v] : meta.opset_imports)
    if (d == domain || (domain.empty() && d == "ai.onnx")) return v;
  return 0;
}

}  // namespace tessera
