// Broadcasting elementwise ops, numpy-style multidirectional broadcast ("Broadcasting in
// ONNX"; opset 7+, the pre-7 `broadcast` attribute is not supported):
// "numeric" below includes float16 and bfloat16, which the kernels compute in float and round
// back to the input dtype after every binary step (as numpy does on float16 arrays).
//   Add, Sub, Mul, Div        opset 7, 13, 14: T numeric; integer Div truncates toward zero.
//   Pow                       opset 7, 12, 13, 15: base T numeric (ints from 12), exponent
//                             numeric of any dtype; output dtype is the base's (float16 and
//                             bfloat16 not supported yet).
//   Equal, Less, Greater      opset 7, 11, 13, 19: T numeric (Equal also bool); output bool.
//   LessOrEqual, GreaterOrEqual opset 12, 16: as Less/Greater.
//   And, Or, Xor              opset 7: bool in, bool out.
//   PRelu                     opset 7, 9, 16: slope broadcasts unidirectionally to X.
//   Where                     opset 9, 16: condition bool, X and Y any same dtype; 3-way.
//   Max, Min                  opset 8, 12, 13: variadic (1..n), T numeric.
//   Sum                       opset 8, 13: variadic, T numeric.
//   Mean                      opset 8, 13: variadic, T float, double, float16 or bfloat16.
//   Mod                       opset 10, 13: T numeric, float16 or bfloat16; fmod=0 (default)
//                             takes the divisor's sign (Python %), integers only; fmod=1 the
//                             dividend's (C fmod).
//   BitwiseAnd, BitwiseOr, BitwiseXor  opset 18: T integer.
//   BitShift                  opset 11: T unsigned integer; direction "LEFT" | "RIGHT".
#include "runtime/ops/dtype_rules.h"
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {

/// The broadcast shape of every present input; errors name the inputs.
Result<Shape> broadcast_all(const InferContext& ctx) {
  Shape out = ctx.input(0).shape;
  for (size_t i = 1; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) return ctx.error("input " + std::to_string(i) + " is missing");
    auto r = broadcast_shapes(out, ctx.input(i).shape);
    if (!r.is_ok()) return ctx.error("input " + std::to_string(i) + ": " + r.status().message());
    out = r.value();
  }
  return out;
}

Status infer_arith(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(check_input_dtype(ctx, 0, dtype_is_numeric_or_half, "a numeric dtype"));
  TSR_RETURN_IF_ERROR(check_same_dtype(ctx));
  TSR_ASSIGN_OR_RETURN(Shape s, broadcast_all(ctx));
  ctx.output(0) = {ctx.input(0).dtype, s, nullptr};
  return Status::ok();
}

Status infer_mean(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(check_input_dtype(
      ctx, 0, [](DType d) { return dtype_is_float(d) || dtype_is_half(d); }, "float, double, float16 or bfloat16"));
  return infer_arith(ctx);
}

Status infer_pow(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(check_input_dtype(ctx, 0, dtype_is_numeric, "a numeric dtype"));
  TSR_RETURN_IF_ERROR(check_input_dtype(ctx, 1, dtype_is_numeric, "a numeric dtype"));
  TSR_ASSIGN_OR_RETURN(Shape s, broadcast_all(ctx));
  ctx.output(0) = {ctx.input(0).dtype, s, nullptr};
  return Status::ok();
}

Status infer_compare(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(check_input_dtype(ctx, 0, dtype_is_numeric_or_half, "a numeric dtype"));
  TSR_RETURN_IF_ERROR(check_same_dtype(ctx));
  TSR_ASSIGN_OR_RETURN(Shape s, broadcast_all(ctx));
  ctx.output(0) = {DType::kBool, s, nullptr};
  return Status::ok();
}

Status infer_equal(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(check_input_dtype(
      ctx, 0, [](DType d) { return dtype_is_computable(d) || dtype_is_half(d); }, "a numeric dtype or bool"));
  TSR_RETURN_IF_ERROR(check_same_dtype(ctx));
  TSR_ASSIGN_OR_RETURN(Shape s, broadcast_all(ctx));
  ctx.output(0) = {DType::kBool, s, nullptr};
  return Status::ok();
}

Status infer_logic(InferContext& ctx) {
  for (size_t i = 0; i < ctx.num_inputs(); ++i)
    TSR_RETURN_IF_ERROR(check_input_dtype(ctx, i, [](DType d) { return d == DType::kBool; }, "bool"));
  TSR_ASSIGN_OR_RETURN(Shape s, broadcast_all(ctx));
  ctx.output(0) = {DType::kBool, s, nullptr};
  return Status::ok();
}

Status infer_prelu(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(check_input_dtype(ctx, 0, dtype_is_numeric_or_half, "a numeric dtype"));
  TSR_RETURN_IF_ERROR(check_same_dtype(ctx));
  const Shape& x = ctx.input(0).shape;
  auto r = broadcast_shapes(x, ctx.input(1).shape);
  if (!r.is_ok() || r.value() != x)
    return ctx.error("slope shape " + shape_to_string(ctx.input(1).shape) + " does not broadcast to X shape " +
                     shape_to_string(x));
  ctx.output(0) = {ctx.input(0).dtype, x, nullptr};
  return Status::ok();
}

Status infer_where(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(check_input_dtype(ctx, 0, [](DType d) { return d == DType::kBool; }, "bool"));
  TSR_RETURN_IF_ERROR(check_input_dtype(ctx, 1, dtype_is_computable, "a numeric dtype or bool"));
  TSR_RETURN_IF_ERROR(check_same_dtype(ctx, 1));
  TSR_ASSIGN_OR_RETURN(Shape s, broadcast_all(ctx));
  ctx.output(0) = {ctx.input(1).dtype, s, nullptr};
  return Status::ok();
}

Status infer_mod(InferContext& ctx) {
  const int64_t fmod = ctx.node().attr_i("fmod", 0);
  if (fmod != 0 && fmod != 1) return ctx.error("attribute fmod is " + std::to_string(fmod) + "; expected 0 or 1");
  const DType d = ctx.input(0).dtype;
  const bool half = d == DType::kFloat16 || d == DType::kBFloat16;
  if (fmod == 0 && (dtype_is_float(d) || half)) return ctx.error("fmod must be 1 for floating-point inputs (ONNX Mod)");
  if (half) {  // float16 / bfloat16: computed through float (fmod is exact)
    TSR_RETURN_IF_ERROR(check_same_dtype(ctx));
    TSR_ASSIGN_OR_RETURN(Shape s, broadcast_all(ctx));
    ctx.output(0) = {d, s, nullptr};
    return Status::ok();
  }
  return infer_arith(ctx);
}

Status infer_bitwise(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(check_input_dtype(ctx, 0, dtype_is_int, "an integer dtype"));
  return infer_arith(ctx);
}

Status infer_bitshift(InferContext& ctx) {
  const std::string dir = ctx.node().attr_s("direction", "");
  if (dir != "LEFT" && dir != "RIGHT") return ctx.error("attribute direction is '" + dir + "'; expected 'LEFT' or 'RIGHT'");
  TSR_RETURN_IF_ERROR(check_input_dtype(
      ctx, 0,
      [](DType d) { return d == DType::kUInt8 || d == DType::kUInt16 || d == DType::kUInt32 || d == DType::kUInt64; },
      "an unsigned integer dtype"));
  return infer_arith(ctx);
}

}  // namespace

const OpSchema kSchema_Add = {"Add", 2, 2, 1, 1, infer_arith};
const OpSchema kSchema_Sub = {"Sub", 2, 2, 1, 1, infer_arith};
const OpSchema kSchema_Mul = {"Mul", 2, 2, 1, 1, infer_arith};
const OpSchema kSchema_Div = {"Div", 2, 2, 1, 1, infer_arith};
const OpSchema kSchema_Pow = {"Pow", 2, 2, 1, 1, infer_pow};
const OpSchema kSchema_Equal = {"Equal", 2, 2, 1, 1, infer_equal};
const OpSchema kSchema_Less = {"Less", 2, 2, 1, 1, infer_compare};
const OpSchema kSchema_Greater = {"Greater", 2, 2, 1, 1, infer_compare};
const OpSchema kSchema_LessOrEqual = {"LessOrEqual", 2, 2, 1, 1, infer_compare};
const OpSchema kSchema_GreaterOrEqual = {"GreaterOrEqual", 2, 2, 1, 1, infer_compare};
const OpSchema kSchema_And = {"And", 2, 2, 1, 1, infer_logic};
const OpSchema kSchema_Or = {"Or", 2, 2, 1, 1, infer_logic};
const OpSchema kSchema_Xor = {"Xor", 2, 2, 1, 1, infer_logic};
const OpSchema kSchema_PRelu = {"PRelu", 2, 2, 1, 1, infer_prelu};
const OpSchema kSchema_Where = {"Where", 3, 3, 1, 1, infer_where};
const OpSchema kSchema_Max = {"Max", 1, -1, 1, 1, infer_arith};
const OpSchema kSchema_Min = {"Min", 1, -1, 1, 1, infer_arith};
const OpSchema kSchema_Sum = {"Sum", 1, -1, 1, 1, infer_arith};
const OpSchema kSchema_Mean = {"Mean", 1, -1, 1, 1, infer_mean};
const OpSchema kSchema_Mod = {"Mod", 2, 2, 1, 1, infer_mod};
const OpSchema kSchema_BitwiseAnd = {"BitwiseAnd", 2, 2, 1, 1, infer_bitwise};
const OpSchema kSchema_BitwiseOr = {"BitwiseOr", 2, 2, 1, 1, infer_bitwise};
const OpSchema kSchema_BitwiseXor = {"BitwiseXor", 2, 2, 1, 1, infer_bitwise};
const OpSchema kSchema_BitShift = {"BitShift", 2, 2, 1, 1, infer_bitshift};

}  // namespace tessera
