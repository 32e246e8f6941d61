// Squeeze (ONNX opset 1, 11, 13, 21) and Unsqueeze (1, 11, 13, 21).
//   Squeeze: removes the listed axes (each must have size 1), or every size-1 dim when no
//   axes are given. Axes: attribute before opset 13, optional int64 input 1 from 13.
//   Unsqueeze: inserts size-1 dims at the listed axes of the output (range
//   [-(rank+n), rank+n-1]). Axes: attribute (required) before 13, input 1 (required) from 13.
// Repeated axes are errors.
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {

/// The node's axes from the attribute (opset < 13) or input 1 (opset >= 13); `present` is
/// false when neither is given.
Result<std::vector<int64_t>> read_axes(const InferContext& ctx, bool* present) {
  if (ctx.node().opset < 13) {
    const Attribute* a = ctx.node().find_attr("axes");
    *present = a && a->type == AttrType::kInts;
    return *present ? a->ints : std::vector<int64_t>{};
  }
  *present = ctx.has_input(1);
  if (!*present) return std::vector<int64_t>{};
  return ctx.const_ints(1);
}

Status infer_squeeze(InferContext& ctx) {
  const Shape& in = ctx.input(0).shape;
  const int64_t rank = static_cast<int64_t>(in.size());
  bool present = false;
  TSR_ASSIGN_OR_RETURN(std::vector<int64_t> axes, read_axes(ctx, &present));
  std::vector<bool> drop(rank, false);
  if (axes.empty()) {
    for (int64_t i = 0; i < rank; ++i) drop[i] = in[i] == 1;
  } else {
    for (int64_t a : axes) {
      TSR_ASSIGN_OR_RETURN(int64_t n, normalize_axis(a, rank, ctx.node()));
      if (drop[n]) return ctx.error("axis " + std::to_string(a) + " is repeated");
      if (in[n] != 1)
        return ctx.error("cannot squeeze axis " + std::to_string(a) + " of shape " + shape_to_string(in) +
                         ": its size is not 1");
      drop[n] = true;
    }
  }
  Shape out;
  for (int64_t i = 0; i < rank; ++i)
    if (!drop[i]) out.push_back(in[i]);
  ctx.output(0) = {ctx.input(0).dtype, out, nullptr};
  return Status::ok();
}

Status infer_unsqueeze(InferContext& ctx) {
  const Shape& in = ctx.input(0).shape;
  bool present = false;
  TSR_ASSIGN_OR_RETURN(std::vector<int64_t> axes, read_axes(ctx, &present));
  if (!present) return ctx.error(ctx.node().opset < 13 ? "attribute axes is required" : "input axes is required");
  const int64_t out_rank = static_cast<int64_t>(in.size() + axes.size());
  std::vector<bool> inserted(out_rank, false);
  for (int64_t a : axes) {
    TSR_ASSIGN_OR_RETURN(int64_t n, normalize_axis(a, out_rank, ctx.node()));
    if (inserted[n]) return ctx.error("axis " + std::to_string(a) + " is repeated");
    inserted[n] = true;
  }
  Shape out(out_rank);
  size_t j = 0;
  for (int64_t i = 0; i < out_rank; ++i) out[i] = inserted[i] ? 1 : in[j++];
  ctx.output(0) = {ctx.input(0).dtype, out, nullptr};
  return Status::ok();
}

}  // namespace

const OpSchema kSchema_Squeeze = {"Squeeze", 1, 2, 1, 1, infer_squeeze};
const OpSchema kSchema_Unsqueeze = {"Unsqueeze", 1, 2, 1, 1, infer_unsqueeze};

}  // namespace tessera
