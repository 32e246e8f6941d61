// Cast (ONNX opset 6, 9, 13, 19, 21): converts between the numeric dtypes and bool.
// Float -> integer truncates toward zero; NaN becomes 0 and out-of-range values saturate
// (the spec leaves both undefined). Any -> bool is x != 0. `saturate` (opset 19) only
// concerns float8 types and is ignored. float16 and bfloat16 convert through float with
// round-to-nearest-even. String and float8/int4 are not supported yet.
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
  auto castable = [](DType t) { return dtype_is_computable(t) || t == DType::kFloat16 || t == DType::kBFloat16; };
  if (!castable(target))
    return ctx.unsupported(std::string("Cast to ") + dtype_name(target) + " is not supported yet");
  TSR_RETURN_IF_ERROR(check_input_dtype(ctx, 0, castable, "a numeric dtype, float16, bfloat16 or bool"));
  ctx.output(0) = {target, ctx.input(0).shape, nullptr};
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_Cast = {"Cast", 1, 1, 1, 1, infer};

}  // namespace tessera
