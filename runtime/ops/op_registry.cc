// The schema table, derived from op_list.def, and helpers shared by schemas.
#include <cstring>
#include <unordered_map>

#include "runtime/ops/op_schema.h"

namespace tessera {

const std::vector<const OpSchema*>& all_op_schemas() {
  static const std::vector<const OpSchema*> kAll = {
#define TSR_OP(name) &kSchema_##name,
#define TSR_CONTROL_OP(name) &kSchema_##name,
#include "runtime/ops/op_list.def"
#undef TSR_OP
#undef TSR_CONTROL_OP
  };
  return kAll;
}

const OpSchema* find_op_schema(const std::string& domain, const std::string& op_type) {
  if (!domain.empty() && domain != "ai.onnx") return nullptr;
  static const std::unordered_map<std::string, const OpSchema*> kByName = [] {
    std::unordered_map<std::string, const OpSchema*> m;
    for (const OpSchema* s : all_op_schemas()) m.emplace(s->op_type, s);
    return m;
  }();
  auto it = kByName.find(op_type);
  return it == kByName.end() ? nullptr : it->second;
}

namespace {

/// Types of attribute names that mean the same thing in every ONNX op that has them
/// (ONNX operator spec). A node whose attribute has another type is rejected instead of
/// the getter silently falling back to the default.
AttrType standard_attr_type(const std::string& name) {
  static const std::unordered_map<std::string, AttrType> kTypes = {
      {"axis", AttrType::kInt},         {"axes", AttrType::kInts},          {"keepdims", AttrType::kInt},
      {"kernel_shape", AttrType::kInts}, {"strides", AttrType::kInts},      {"pads", AttrType::kInts},
      {"dilations", AttrType::kInts},   {"group", AttrType::kInt},          {"auto_pad", AttrType::kString},
      {"epsilon", AttrType::kFloat},    {"momentum", AttrType::kFloat},     {"perm", AttrType::kInts},
      {"to", AttrType::kInt},           {"transA", AttrType::kInt},         {"transB", AttrType::kInt},
      {"ceil_mode", AttrType::kInt},    {"count_include_pad", AttrType::kInt}, {"storage_order", AttrType::kInt},
      {"output_padding", AttrType::kInts}, {"output_shape", AttrType::kInts}, {"split", AttrType::kInts},
      {"num_outputs", AttrType::kInt},  {"allowzero", AttrType::kInt},      {"hidden_size", AttrType::kInt},
      {"direction", AttrType::kString}, {"activations", AttrType::kStrings}, {"clip", AttrType::kFloat},
      {"input_forget", AttrType::kInt}, {"layout", AttrType::kInt},         {"mode", AttrType::kString},
      {"coordinate_transformation_mode", AttrType::kString}, {"nearest_mode", AttrType::kString},
      {"cubic_coeff_a", AttrType::kFloat}, {"exclude_outside", AttrType::kInt},
      {"extrapolation_value", AttrType::kFloat}, {"noop_with_empty_axes", AttrType::kInt},
      {"select_last_index", AttrType::kInt}, {"training_mode", AttrType::kInt}, {"stash_type", AttrType::kInt},
      {"then_branch", AttrType::kGraph}, {"else_branch", AttrType::kGraph}, {"body", AttrType::kGraph},
  };
  auto it = kTypes.find(name);
  return it == kTypes.end() ? AttrType::kUndefined : it->second;
}

const char* attr_type_name(AttrType t) {
  static const char* kNames[] = {"UNDEFINED", "FLOAT", "INT", "STRING", "TENSOR", "GRAPH",
                                 "FLOATS", "INTS", "STRINGS", "TENSORS", "GRAPHS"};
  int i = static_cast<int>(t);
  return i >= 0 && i <= 10 ? kNames[i] : "UNKNOWN";
}

}  // namespace

Status infer_node(const OpSchema& schema, InferContext& ctx) {
  const Node& n = ctx.node();
  for (const Attribute& a : n.attributes) {
    AttrType want = standard_attr_type(a.name);
    if (want != AttrType::kUndefined && a.type != want)
      return ctx.error("attribute '" + a.name + "' is " + attr_type_name(a.type) + "; the ONNX spec makes it " +
                       attr_type_name(want));
  }
  // Trailing omitted optional inputs do not count.
  int given = static_cast<int>(n.inputs.size());
  while (given > 0 && n.inputs[given - 1] == -1) --given;
  if (given < schema.min_inputs || (schema.max_inputs >= 0 && given > schema.max_inputs))
    return ctx.error("has " + std::to_string(given) + " inputs; " + schema.op_type + " takes " +
                     std::to_string(schema.min_inputs) + ".." +
                     (schema.max_inputs < 0 ? std::string("n") : std::to_string(schema.max_inputs)));
  for (int i = 0; i < schema.min_inputs; ++i)
    if (!ctx.has_input(i)) return ctx.error("required input " + std::to_string(i) + " is missing");
  int outs = static_cast<int>(n.outputs.size());
  if (outs < schema.min_outputs || (schema.max_outputs >= 0 && outs > schema.max_outputs))
    return ctx.error("has " + std::to_string(outs) + " outputs; " + schema.op_type + " gives " +
                     std::to_string(schema.min_outputs) + ".." + std::to_string(schema.max_outputs));
  for (size_t i = 0; i < ctx.num_inputs(); ++i)
    if (ctx.has_input(i) && ctx.input(i).dtype == DType::kUndefined)
      return ctx.error("input " + std::to_string(i) + " has no known dtype");
  TSR_RETURN_IF_ERROR(schema.infer(ctx));
  for (size_t i = 0; i < ctx.num_outputs(); ++i) {
    const ValueInfo& o = ctx.output(i);
    if (n.outputs[i] == -1) continue;
    if (o.dtype == DType::kUndefined) return internal_error(n.describe() + ": inference left output " + std::to_string(i) + " without dtype");
    TSR_RETURN_IF_ERROR(shape_numel(o.shape).status().with_context(n.describe() + " output " + std::to_string(i)));
  }
  return Status::ok();
}

Status InferContext::error(const std::string& msg) const { return invalid_argument(node_.describe() + ": " + msg); }
Status InferContext::unsupported(const std::string& msg) const { return unimplemented(node_.describe() + ": " + msg); }

namespace {
template <typename Out>
Result<std::vector<Out>> const_values(const InferContext& ctx, size_t i, const char* what) {
  if (!ctx.has_input(i)) return ctx.error("input " + std::to_string(i) + " is missing");
  const ValueInfo& v = ctx.input(i);
  if (!v.constant)
    return ctx.unsupported("input " + std::to_string(i) + " (" + what +
                           ") must be computable before the run; data-dependent shapes are not supported yet");
  const Tensor& t = *v.constant;
  std::vector<Out> out(static_cast<size_t>(t.numel()));
  for (int64_t k = 0; k < t.numel(); ++k) {
    switch (t.dtype()) {
      case DType::kInt64: out[k] = static_cast<Out>(t.data_as<int64_t>()[k]); break;
      case DType::kInt32: out[k] = static_cast<Out>(t.data_as<int32_t>()[k]); break;
      case DType::kFloat32: out[k] = static_cast<Out>(t.data_as<float>()[k]); break;
      case DType::kFloat64: out[k] = static_cast<Out>(t.data_as<double>()[k]); break;
      default: return ctx.error(std::string("input ") + std::to_string(i) + " has unsupported dtype " + dtype_name(t.dtype()));
    }
  }
  return out;
}
}  // namespace

Result<std::vector<int64_t>> InferContext::const_ints(size_t i) const { return const_values<int64_t>(*this, i, "integers"); }
Result<std::vector<float>> InferContext::const_floats(size_t i) const { return const_values<float>(*this, i, "floats"); }

Result<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da == db || db == 1) out[i] = da;
    else if (da == 1) out[i] = db;
    else return invalid_argument("shapes " + shape_to_string(a) + " and " + shape_to_string(b) + " do not broadcast");
  }
  return out;
}

Result<int64_t> normalize_axis(int64_t axis, int64_t rank, const Node& node) {
  if (axis < -rank || axis >= rank)
    return invalid_argument(node.describe() + ": axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

}  // namespace tessera
