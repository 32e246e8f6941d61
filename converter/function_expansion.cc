// Expansion of ONNX function ops. Many ONNX ops are defined by a function body in the ONNX
// spec (CastLike, NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss, Celu, ...): a node of
// such an op that Tessera has no schema for is replaced by the body's nodes, as onnxruntime
// inlines functions. The body comes from ONNX's C++ schema registry, for the model's opset;
// context-dependent bodies are built from the declared types of the node's inputs.
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include <map>
#include <string>
#include <unordered_map>

#include "converter/converter.h"
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {

constexpr int kMaxExpansionPasses = 8;

class FunctionExpander {
 public:
  explicit FunctionExpander(const std::map<std::string, int64_t>& opsets) : opsets_(opsets) {}

  int expanded() const { return expanded_; }
  /// Opset of each inlined node's domain as the function body declares it (by node name).
  const std::map<std::string, int64_t>& opset_overrides() const { return opset_overrides_; }

  void expand_graph(onnx::GraphProto* g, int depth) {
    if (depth > 16) return;
    std::unordered_map<std::string, onnx::TypeProto> types;
    for (const auto& vi : g->input()) types[vi.name()] = vi.type();
    for (const auto& vi : g->value_info()) types[vi.name()] = vi.type();
    for (const auto& vi : g->output()) types[vi.name()] = vi.type();
    for (const auto& init : g->initializer()) {
      onnx::TypeProto t;
      t.mutable_tensor_type()->set_elem_type(init.data_type());
      for (int64_t d : init.dims()) t.mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
      types[init.name()] = t;
    }
    for (int pass = 0; pass < kMaxExpansionPasses; ++pass) {
      bool changed = false;
      google::protobuf::RepeatedPtrField<onnx::NodeProto> out;
      for (auto& node : *g->mutable_node()) {
        onnx::FunctionProto body;
        const onnx::OpSchema* schema = nullptr;
        if (!function_body(node, types, &body, &schema)) {
          *out.Add() = node;
          continue;
        }
        inline_body(node, body, *schema, &out);
        changed = true;
        ++expanded_;
      }
      g->mutable_node()->Swap(&out);
      if (!changed) break;
    }
    for (auto& node : *g->mutable_node())
      for (auto& a : *node.mutable_attribute()) {
        if (a.has_g()) expand_graph(a.mutable_g(), depth + 1);
        for (auto& sg : *a.mutable_graphs()) expand_graph(&sg, depth + 1);
      }
  }

 private:
  bool function_body(const onnx::NodeProto& node, const std::unordered_map<std::string, onnx::TypeProto>& types,
                     onnx::FunctionProto* body, const onnx::OpSchema** schema_out) {
    std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
    if (find_op_schema(domain, node.op_type())) return false;  // Tessera runs it directly
    auto it = opsets_.find(domain);
    if (it == opsets_.end()) return false;
    const onnx::OpSchema* schema =
        onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(it->second), domain);
    if (!schema) return false;
    *schema_out = schema;
    try {
      if (schema->HasContextDependentFunction()) {
        std::vector<onnx::TypeProto> in_types;
        for (const auto& in : node.input()) {
          auto t = types.find(in);
          in_types.push_back(t == types.end() ? onnx::TypeProto() : t->second);
        }
        onnx::FunctionBodyBuildContextImpl ctx(node, in_types);
        if (schema->BuildContextDependentFunction(ctx, *body)) return true;
      }
      if (schema->HasFunction() && schema->GetFunction()) {
        *body = *schema->GetFunction();
        return true;
      }
    } catch (const std::exception&) {
      return false;  // reported later as an unsupported op
    }
    return false;
  }

  void inline_body(const onnx::NodeProto& call, const onnx::FunctionProto& body, const onnx::OpSchema& schema,
                   google::protobuf::RepeatedPtrField<onnx::NodeProto>* out) {
    std::map<std::string, int64_t> body_opsets;
    for (const auto& o : body.opset_import()) body_opsets[o.domain() == "ai.onnx" ? "" : o.domain()] = o.version();
    const std::string prefix = (call.name().empty() ? call.op_type() : call.name()) + "/fn" + std::to_string(expanded_) + "/";
    std::unordered_map<std::string, std::string> rename;
    for (int i = 0; i < body.input_size(); ++i) rename[body.input(i)] = i < call.input_size() ? call.input(i) : "";
    for (int i = 0; i < body.output_size(); ++i) rename[body.output(i)] = i < call.output_size() ? call.output(i) : "";
    auto name_of = [&](const std::string& n) -> std::string {
      if (n.empty()) return n;
      auto r = rename.find(n);
      return r != rename.end() ? r->second : prefix + n;
    };
    std::unordered_map<std::string, const onnx::AttributeProto*> call_attrs;
    for (const auto& a : call.attribute()) call_attrs[a.name()] = &a;
    int k = 0;
    for (const auto& bn : body.node()) {
      onnx::NodeProto* n = out->Add();
      *n = bn;
      n->set_name(prefix + (bn.name().empty() ? bn.op_type() + std::to_string(k) : bn.name()));
      ++k;
      auto bo = body_opsets.find(bn.domain() == "ai.onnx" ? "" : bn.domain());
      if (bo != body_opsets.end()) opset_overrides_[n->name()] = bo->second;
      for (auto& in : *n->mutable_input()) in = name_of(in);
      for (auto& o : *n->mutable_output()) o = name_of(o);
      google::protobuf::RepeatedPtrField<onnx::AttributeProto> attrs;
      for (const auto& a : bn.attribute()) {
        if (a.ref_attr_name().empty()) {
          *attrs.Add() = a;
          continue;
        }
        auto c = call_attrs.find(a.ref_attr_name());
        const onnx::AttributeProto* src = c != call_attrs.end() ? c->second : nullptr;
        if (!src) {  // not given by the caller: the function op's default, if it has one
          auto d = schema.attributes().find(a.ref_attr_name());
          if (d != schema.attributes().end() && d->second.default_value.type() != onnx::AttributeProto::UNDEFINED)
            src = &d->second.default_value;
        }
        if (!src) continue;
        onnx::AttributeProto* na = attrs.Add();
        *na = *src;
        na->set_name(a.name());
      }
      n->mutable_attribute()->Swap(&attrs);
    }
  }

  const std::map<std::string, int64_t>& opsets_;
  std::map<std::string, int64_t> opset_overrides_;
  int expanded_ = 0;
};

}  // namespace

int expand_onnx_functions(onnx::ModelProto& model, const std::map<std::string, int64_t>& opsets,
                          std::map<std::string, int64_t>* node_opsets) {
  FunctionExpander ex(opsets);
  ex.expand_graph(model.mutable_graph(), 0);
  *node_opsets = ex.opset_overrides();
  return ex.expanded();
}

}  // namespace tessera
