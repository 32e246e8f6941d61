// .tsr -> ONNX export: the Graph IR written back as an ONNX ModelProto (the inverse of
// onnx_import.cc), so a model trained by tessera-finetune can be deployed with any ONNX
// runtime. Initializers are written as raw_data (little-endian); the training state a
// checkpoint carries (optimizer state, step) has no place in ONNX and is left out.
#include <onnx/onnx_pb.h>

#include "converter/converter.h"
#include "tessera/tsr_file.h"

namespace tessera {

namespace {

void tensor_to_proto(const Tensor& t, const std::string& name, onnx::TensorProto* tp) {
  tp->set_name(name);
  tp->set_data_type(static_cast<int32_t>(t.dtype()));
  for (int64_t d : t.shape()) tp->add_dims(d);
  const uint8_t* p = static_cast<const uint8_t*>(t.data());
  if (dtype_is_int4(t.dtype())) {
    std::string packed(static_cast<size_t>((t.numel() + 1) / 2), '\0');
    for (int64_t i = 0; i < t.numel(); ++i)
      packed[static_cast<size_t>(i / 2)] |= static_cast<char>((p[i] & 0x0F) << (i % 2 ? 4 : 0));
    tp->set_raw_data(packed);
  } else {
    tp->set_raw_data(std::string(reinterpret_cast<const char*>(p), t.nbytes()));
  }
}

void value_info(const Value& v, onnx::ValueInfoProto* vi) {
  vi->set_name(v.name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(static_cast<int32_t>(v.dtype));
  if (!v.has_shape) return;
  auto* sh = tt->mutable_shape();
  for (const Dim& d : v.shape) {
    auto* dim = sh->add_dim();
    if (d.is_static()) dim->set_dim_value(d.value);
    else if (!d.symbol.empty()) dim->set_dim_param(d.symbol);
  }
}

Status graph_to_proto(const Graph& g, onnx::GraphProto* gp);

Status attr_to_proto(const Attribute& a, onnx::AttributeProto* ap) {
  ap->set_name(a.name);
  ap->set_type(static_cast<onnx::AttributeProto::AttributeType>(a.type));
  switch (a.type) {
    case AttrType::kFloat: ap->set_f(a.f); break;
    case AttrType::kInt: ap->set_i(a.i); break;
    case AttrType::kString: ap->set_s(a.s); break;
    case AttrType::kTensor:
      if (a.t) tensor_to_proto(*a.t, "", ap->mutable_t());
      break;
    case AttrType::kGraph:
      if (a.g) TSR_RETURN_IF_ERROR(graph_to_proto(*a.g, ap->mutable_g()));
      break;
    case AttrType::kFloats: for (float f : a.floats) ap->add_floats(f); break;
    case AttrType::kInts: for (int64_t i : a.ints) ap->add_ints(i); break;
    case AttrType::kStrings: for (const auto& s : a.strings) ap->add_strings(s); break;
    case AttrType::kGraphs:
      for (const auto& sg : a.graphs) TSR_RETURN_IF_ERROR(graph_to_proto(*sg, ap->add_graphs()));
      break;
    default: return unimplemented("export: attribute '" + a.name + "' has a kind ONNX export does not support");
  }
  return Status::ok();
}

Status graph_to_proto(const Graph& g, onnx::GraphProto* gp) {
  gp->set_name(g.name.empty() ? "tessera" : g.name);
  for (const Node& n : g.nodes) {
    auto* np = gp->add_node();
    np->set_name(n.name);
    np->set_op_type(n.op_type);
    if (!n.domain.empty()) np->set_domain(n.domain);
    for (int i : n.inputs) np->add_input(i >= 0 ? g.values[i].name : "");
    for (int o : n.outputs) np->add_output(o >= 0 ? g.values[o].name : "");
    for (const Attribute& a : n.attributes) TSR_RETURN_IF_ERROR(attr_to_proto(a, np->add_attribute()).with_context(n.describe()));
  }
  for (int i : g.inputs) value_info(g.values[i], gp->add_input());
  for (int o : g.outputs) value_info(g.values[o], gp->add_output());
  for (const Value& v : g.values) {
    if (!v.initializer || v.outer_scope) continue;
    tensor_to_proto(*v.initializer, v.name, gp->add_initializer());
  }
  return Status::ok();
}

}  // namespace

Status export_onnx_file(const Model& model, const std::string& onnx_path) {
  TSR_RETURN_IF_ERROR(check_weights_complete(model, "export " + onnx_path));
  onnx::ModelProto mp;
  mp.set_ir_version(model.meta.ir_version > 0 ? model.meta.ir_version : 8);
  mp.set_producer_name("tessera");
  mp.set_producer_version(model.meta.producer_version);
  bool has_default = false;
  for (const auto& [domain, version] : model.meta.opset_imports) {
    auto* op = mp.add_opset_import();
    op->set_domain(domain == "ai.onnx" ? "" : domain);
    op->set_version(version);
    has_default |= domain.empty() || domain == "ai.onnx";
  }
  if (!has_default) {
    auto* op = mp.add_opset_import();
    op->set_domain("");
    op->set_version(17);
  }
  for (const Node& n : model.graph.nodes)
    if (n.domain == "tessera.train")
      return unimplemented("export: " + n.describe() + " is a tessera.train op, which ONNX does not have");
  TSR_RETURN_IF_ERROR(graph_to_proto(model.graph, mp.mutable_graph()));
  std::string bytes;
  if (!mp.SerializeToString(&bytes)) return internal_error("export: serializing the ONNX model failed (over 2 GiB?)");
  return write_file_atomic(onnx_path, bytes.data(), bytes.size());
}

}  // namespace tessera
