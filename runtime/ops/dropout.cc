// Dropout (ONNX opset 7, 10, 12, 13), inference only: output = data, and the optional mask
// output is all true (nothing dropped).
//   opset 7: `ratio` attribute; mask has data's dtype (all ones).
//   opset 10: `ratio` attribute; mask is bool.
//   opset 12, 13: optional inputs ratio (float scalar) and training_mode (bool scalar,
//   default false); mask is bool. training_mode true with a non-zero ratio drops random
//   elements: not supported (the kernel reports it when it sees the values; `seed` is
//   ignored). training_mode true with ratio 0 is the identity, as in inference.
#include "runtime/ops/dtype_rules.h"
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {
bool is_scalar(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n == 1;
}

Status infer(InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  TSR_RETURN_IF_ERROR(check_input_dtype(ctx, 0, dtype_is_numeric, "a numeric dtype"));
  const int opset = ctx.node().opset;
  if (opset < 12) {
    if (ctx.num_inputs() > 1 && (ctx.has_input(1) || ctx.has_input(2)))
      return ctx.error("opset " + std::to_string(opset) + " Dropout takes ratio as an attribute, not an input");
    const float ratio = ctx.node().attr_f("ratio", 0.5f);
    if (!(ratio >= 0.0f && ratio <= 1.0f)) return ctx.error("attribute ratio " + std::to_string(ratio) + " is not in [0, 1]");
  } else {
    if (ctx.has_input(1)) {
      if (!dtype_is_float(ctx.input(1).dtype)) return ctx.error("ratio must be float or double");
      if (!is_scalar(ctx.input(1).shape)) return ctx.error("ratio must be a scalar, got " + shape_to_string(ctx.input(1).shape));
    }
    if (ctx.has_input(2)) {
      if (ctx.input(2).dtype != DType::kBool) return ctx.error("training_mode must be bool");
      if (!is_scalar(ctx.input(2).shape))
        return ctx.error("training_mode must be a scalar, got " + shape_to_string(ctx.input(2).shape));
    }
  }
  ctx.output(0) = {x.dtype, x.shape, nullptr};
  if (ctx.num_outputs() > 1) ctx.output(1) = {opset < 10 ? x.dtype : DType::kBool, x.shape, nullptr};
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_Dropout = {"Dropout", 1, 3, 1, 2, infer};

}  // namespace tessera
