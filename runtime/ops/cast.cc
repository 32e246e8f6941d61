// Cast (ONNX opset 6, 9, 13, 19, 21): converts between the numeric dtypes, bool, float16,
// bfloat16, the float8 types and int4/uint4. Float -> integer truncates toward zero; NaN
// becomes 0 and out-of-range values saturate (the spec leaves both undefined). Any -> bool
// is x != 0. float16, bfloat16 and float8 convert through float with round-to-nearest-even;
// `saturate` (opset 19, default 1) decides whether out-of-range values become float8's
// largest value or inf/NaN (tessera/float8.h). To int4/uint4: clip to [-8, 7] / [0, 15],
// then round half to even (Cast-21). String is not supported.
#include "runtime/ops/dtype_rules.h"
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {
Status infer(InferContext& ctx) {
  const Attribute* to = ctx.node().find_attr("to");
  if (!to || to->type != AttrType::kInt) return ctx.error("attribute 'to' (int) is required");
  // ONNX TensorProto.DataType codes run 1..23 (string, complex, float8, int4 included).
  if (to->i < 1 || to->i > 23) return ctx.error("attribute 'to' is " + std::to_string(to->i) + ", not an ONNX dtype");
  if (!dtype_is_valid(static_cast<int32_t>(to->i)))
    return ctx.unsupported("Cast to ONNX dtype " + std::to_string(to->i) + " is not supported yet");
  const DType target = static_cast<DType>(to->i);
  if (!dtype_is_castable(target))
    return ctx.unsupported(std::string("Cast to ") + dtype_name(target) + " is not supported yet");
  TSR_RETURN_IF_ERROR(check_input_dtype(ctx, 0, dtype_is_castable, "a numeric dtype, float16, bfloat16, float8, int4 or bool"));
  ctx.output(0) = {target, ctx.input(0).shape, nullptr};
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_Cast = {"Cast", 1, 1, 1, 1, infer};

}  // namespace tessera
