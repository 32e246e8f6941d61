// Concat (ONNX opset 4, 11, 13): joins 1..n inputs of one dtype and rank along `axis`
// (required; negative from opset 11); all other dims must match. Empty inputs are allowed.
#include "runtime/ops/dtype_rules.h"
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {
Status infer(InferContext& ctx) {
  const Attribute* axis_attr = ctx.node().find_attr("axis");
  if (!axis_attr || axis_attr->type != AttrType::kInt) return ctx.error("attribute axis (int) is required");
  for (size_t i = 0; i < ctx.num_inputs(); ++i)
    if (!ctx.has_input(i)) return ctx.error("input " + std::to_string(i) + " is missing");
  TSR_RETURN_IF_ERROR(check_same_dtype(ctx));
  Shape out = ctx.input(0).shape;
  const int64_t rank = static_cast<int64_t>(out.size());
  if (rank == 0) return ctx.error("cannot concatenate scalars");
  TSR_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(axis_attr->i, rank, ctx.node()));
  for (size_t i = 1; i < ctx.num_inputs(); ++i) {
    const Shape& s = ctx.input(i).shape;
    bool ok = static_cast<int64_t>(s.size()) == rank;
    for (int64_t d = 0; ok && d < rank; ++d) ok = d == axis || s[d] == out[d];
    if (!ok)
      return ctx.error("input " + std::to_string(i) + " shape " + shape_to_string(s) + " does not match input 0 shape " +
                       shape_to_string(ctx.input(0).shape) + " outside axis " + std::to_string(axis));
    if (out[axis] > kMaxTensorBytes - s[axis]) return ctx.error("concatenated dim is too large");
    out[axis] += s[axis];
  }
  ctx.output(0) = {ctx.input(0).dtype, out, nullptr};
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_Concat = {"Concat", 1, -1, 1, 1, infer};

}  // namespace tessera
