// Pad (ONNX opset 2, 11, 13, 18, 19, 21):
//   opset < 11: attributes pads (2 * rank ints: all begins, then all ends), mode, value.
//   opset >= 11: inputs pads (int64, known at plan time), constant_value (optional scalar
//   of the data dtype, read at run time; default 0) and, from opset 18, axes (optional,
//   known at plan time; pads then has 2 * len(axes) entries).
// mode: "constant" (default), "reflect" (mirror without repeating the edge), "edge",
// "wrap" (opset 19). Negative pads remove elements. reflect, edge and wrap need a
// non-empty input along every padded axis.
#include "runtime/ops/shape_params.h"

namespace tessera {

Result<PadParams> resolve_pad(const Node& node, const Shape& data, const ConstIntInputs& in) {
  const int64_t rank = static_cast<int64_t>(data.size());
  PadParams p;
  const std::string mode = node.attr_s("mode", "constant");
  if (mode == "constant") p.mode = PadParams::Mode::kConstant;
  else if (mode == "reflect") p.mode = PadParams::Mode::kReflect;
  else if (mode == "edge") p.mode = PadParams::Mode::kEdge;
  else if (mode == "wrap" && node.opset >= 19) p.mode = PadParams::Mode::kWrap;
  else return invalid_argument(node.describe() + ": mode '" + mode + "' is not one of constant, reflect, edge" +
                               (node.opset >= 19 ? ", wrap" : ""));
  std::vector<int64_t> pads, axes;
  if (node.opset < 11) {
    const Attribute* a = node.find_attr("pads");
    if (!a || a->type != AttrType::kInts) return invalid_argument(node.describe() + ": attribute pads (ints) is required");
    pads = a->ints;
    p.attr_value = node.attr_f("value", 0.f);
  } else {
    TSR_ASSIGN_OR_RETURN(pads, in.ints(1));
  }
  if (node.opset >= 18 && in.has(3)) {
    TSR_ASSIGN_OR_RETURN(axes, in.ints(3));
  } else {
    for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  }
  const size_t n = axes.size();
  if (pads.size() != 2 * n)
    return invalid_argument(node.describe() + ": pads has " + std::to_string(pads.size()) + " entries; expected " +
                            std::to_string(2 * n));
  p.begin.assign(rank, 0);
  p.out = data;
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < n; ++i) {
    TSR_ASSIGN_OR_RETURN(int64_t a, normalize_axis(axes[i], rank, node));
    if (seen[a]) return invalid_argument(node.describe() + ": axis " + std::to_string(axes[i]) + " is repeated");
    seen[a] = true;
    const int64_t b = pads[i], e = pads[i + n];
    if (b > kMaxTensorBytes || e > kMaxTensorBytes || b < -kMaxTensorBytes || e < -kMaxTensorBytes)
      return invalid_argument(node.describe() + ": pads " + shape_to_string(pads) + " are too large");
    const int64_t dim = data[a] + b + e;
    if (dim < 0)
      return invalid_argument(node.describe() + ": pads " + shape_to_string(pads) + " remove more than axis " +
                              std::to_string(a) + " of size " + std::to_string(data[a]) + " holds");
    if (p.mode != PadParams::Mode::kConstant && data[a] == 0 && dim > 0)
      return invalid_argument(node.describe() + ": mode '" + mode + "' cannot pad axis " + std::to_string(a) + " of size 0");
    p.begin[a] = b;
    p.out[a] = dim;
  }
  return p;
}

namespace {
Status infer(InferContext& ctx) {
  TSR_ASSIGN_OR_RETURN(PadParams p, resolve_pad(ctx.node(), ctx.input(0).shape, const_inputs_of(ctx)));
  if (ctx.node().opset >= 11 && ctx.has_input(2)) {
    if (ctx.input(2).dtype != ctx.input(0).dtype)
      return ctx.error(std::string("constant_value has dtype ") + dtype_name(ctx.input(2).dtype) + " but data has " +
                       dtype_name(ctx.input(0).dtype));
    auto n = shape_numel(ctx.input(2).shape);
    if (!n.is_ok() || n.value() != 1) return ctx.error("constant_value must be a scalar");
  }
  ctx.output(0) = {ctx.input(0).dtype, p.out, nullptr};
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_Pad = {"Pad", 1, 4, 1, 1, infer};

}  // namespace tessera
