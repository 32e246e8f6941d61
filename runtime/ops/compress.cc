// Compress (ONNX opset 9, 11): keeps the slices of `input` along `axis` (or of the flattened
// input when axis is absent) whose entry in the 1-D bool `condition` is true; a condition
// shorter than the axis drops the rest. The output length depends on condition's values,
// so condition must be known when planning (the session plans small inputs by value).
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {
Status infer(InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  const ValueInfo& c = ctx.input(1);
  if (c.dtype != DType::kBool || c.shape.size() != 1) return ctx.error("condition must be a 1-D bool tensor");
  if (!c.constant)
    return ctx.unsupported("input 1 (condition) must be computable before the run (it decides the output length)");
  const Attribute* axis_attr = ctx.node().find_attr("axis");
  int64_t len = 0;
  Shape out;
  if (axis_attr) {
    TSR_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(axis_attr->i, static_cast<int64_t>(x.shape.size()), ctx.node()));
    len = x.shape[axis];
    out = x.shape;
  } else {
    TSR_ASSIGN_OR_RETURN(len, shape_numel(x.shape));
  }
  if (c.shape[0] > len)
    return ctx.error("condition has " + std::to_string(c.shape[0]) + " entries for an axis of " + std::to_string(len));
  int64_t kept = 0;
  for (int64_t i = 0; i < c.shape[0]; ++i) kept += c.constant->data_as<bool>()[i] ? 1 : 0;
  if (axis_attr) {
    int64_t axis = axis_attr->i < 0 ? axis_attr->i + static_cast<int64_t>(x.shape.size()) : axis_attr->i;
    out[axis] = kept;
  } else {
    out = {kept};
  }
  ctx.output(0).dtype = x.dtype;
  ctx.output(0).shape = out;
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_Compress = {"Compress", 2, 2, 1, 1, infer};

}  // namespace tessera
