// Clip (ONNX opset 6, 11, 12, 13): y = min(max(x, min), max).
//   opset < 11: `min`/`max` float attributes (defaults: lowest/highest float); float types.
//   opset >= 11: optional scalar inputs 1 (min) and 2 (max) of x's dtype; opset 12+ also
//   integer types. When min > max every element becomes max (as the spec says).
#include <cmath>

#include "runtime/ops/dtype_rules.h"
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {
Status infer(InferContext& ctx) {
  const int opset = ctx.node().opset;
  if (opset < 11) {
    if (ctx.num_inputs() > 1 && (ctx.has_input(1) || ctx.has_input(2)))
      return ctx.error("opset " + std::to_string(opset) + " Clip takes min/max as attributes, not inputs");
    TSR_RETURN_IF_ERROR(check_input_dtype(ctx, 0, dtype_is_float, "float or double"));
    float lo = ctx.node().attr_f("min", -INFINITY), hi = ctx.node().attr_f("max", INFINITY);
    if (std::isnan(lo) || std::isnan(hi)) return ctx.error("min/max attribute is NaN");
  } else {
    TSR_RETURN_IF_ERROR(check_input_dtype(ctx, 0, dtype_is_numeric, "a numeric dtype"));
    for (size_t i = 1; i < 3; ++i) {
      if (!ctx.has_input(i)) continue;
      if (ctx.input(i).dtype != ctx.input(0).dtype)
        return ctx.error(std::string(i == 1 ? "min" : "max") + " has dtype " + dtype_name(ctx.input(i).dtype) +
                         " but input has " + dtype_name(ctx.input(0).dtype));
      auto n = shape_numel(ctx.input(i).shape);
      if (!n.is_ok() || n.value() != 1)
        return ctx.error(std::string(i == 1 ? "min" : "max") + " must be a scalar; its shape is " +
                         shape_to_string(ctx.input(i).shape));
    }
  }
  ctx.output(0) = {ctx.input(0).dtype, ctx.input(0).shape, nullptr};
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_Clip = {"Clip", 1, 3, 1, 1, infer};

}  // namespace tessera
