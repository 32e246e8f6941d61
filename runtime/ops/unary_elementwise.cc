// Unary elementwise math and activations: output dtype and shape are the input's.
//   Float or double only:
//     LeakyRelu (6, 16; alpha=0.01), Elu (6; alpha=1), Selu (6; alpha, gamma),
//     Sigmoid (6, 13), HardSigmoid (6; alpha=0.2, beta=0.5), HardSwish (14), Tanh (6, 13),
//     Softplus (1), Softsign (1), Gelu (20; approximate "none" | "tanh"), Erf (9, 13),
//     Exp (6, 13), Log (6, 13), Sqrt (6, 13), Reciprocal (6, 13), Floor (6, 13),
//     Ceil (6, 13), Round (11; halves to even), Sin (7), Cos (7), Tan, Asin, Acos, Atan (7),
//     Sinh, Cosh, Asinh, Acosh, Atanh (9), ThresholdedRelu (10; alpha=1), Celu (12; alpha=1),
//     Mish (18).
//   Shrink (9; lambd=0.5, bias=0): numeric.  BitwiseNot (18): integer.
//   IsNaN (9, 13, 20), IsInf (10, 20; detect_negative=1, detect_positive=1): float, double,
//     float16 or bfloat16 in, bool out.
//   Numeric (float or integer): Relu (6, 13, 14), Abs (6, 13), Neg (6, 13), Sign (9, 13).
//   Bool: Not (1).
#include "runtime/ops/dtype_rules.h"
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {

Status same_as_input(InferContext& ctx) {
  ctx.output(0) = {ctx.input(0).dtype, ctx.input(0).shape, nullptr};
  return Status::ok();
}

Status infer_float(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(check_input_dtype(ctx, 0, dtype_is_float, "float or double"));
  return same_as_input(ctx);
}

Status infer_numeric(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(check_input_dtype(ctx, 0, dtype_is_numeric, "a numeric dtype"));
  return same_as_input(ctx);
}

Status infer_not(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(check_input_dtype(ctx, 0, [](DType d) { return d == DType::kBool; }, "bool"));
  return same_as_input(ctx);
}

Status infer_gelu(InferContext& ctx) {
  std::string approximate = ctx.node().attr_s("approximate", "none");
  if (approximate != "none" && approximate != "tanh")
    return ctx.error("attribute approximate is '" + approximate + "'; expected 'none' or 'tanh'");
  return infer_float(ctx);
}

Status infer_bitwise_not(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(check_input_dtype(ctx, 0, dtype_is_int, "an integer dtype"));
  return same_as_input(ctx);
}

Status infer_is_class(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(check_input_dtype(
      ctx, 0, [](DType d) { return dtype_is_float(d) || d == DType::kFloat16 || d == DType::kBFloat16; },
      "float, double, float16 or bfloat16"));
  ctx.output(0) = {DType::kBool, ctx.input(0).shape, nullptr};
  return Status::ok();
}

Status infer_celu(InferContext& ctx) {
  if (ctx.node().attr_f("alpha", 1.0f) == 0.0f) return ctx.error("attribute alpha must not be 0");
  return infer_float(ctx);
}

}  // namespace

const OpSchema kSchema_Relu = {"Relu", 1, 1, 1, 1, infer_numeric};
const OpSchema kSchema_LeakyRelu = {"LeakyRelu", 1, 1, 1, 1, infer_float};
const OpSchema kSchema_Elu = {"Elu", 1, 1, 1, 1, infer_float};
const OpSchema kSchema_Selu = {"Selu", 1, 1, 1, 1, infer_float};
const OpSchema kSchema_Sigmoid = {"Sigmoid", 1, 1, 1, 1, infer_float};
const OpSchema kSchema_HardSigmoid = {"HardSigmoid", 1, 1, 1, 1, infer_float};
const OpSchema kSchema_HardSwish = {"HardSwish", 1, 1, 1, 1, infer_float};
const OpSchema kSchema_Tanh = {"Tanh", 1, 1, 1, 1, infer_float};
const OpSchema kSchema_Softplus = {"Softplus", 1, 1, 1, 1, infer_float};
const OpSchema kSchema_Softsign = {"Softsign", 1, 1, 1, 1, infer_float};
const OpSchema kSchema_Gelu = {"Gelu", 1, 1, 1, 1, infer_gelu};
const OpSchema kSchema_Erf = {"Erf", 1, 1, 1, 1, infer_float};
const OpSchema kSchema_Exp = {"Exp", 1, 1, 1, 1, infer_float};
const OpSchema kSchema_Log = {"Log", 1, 1, 1, 1, infer_float};
const OpSchema kSchema_Sqrt = {"Sqrt", 1, 1, 1, 1, infer_float};
const OpSchema kSchema_Reciprocal = {"Reciprocal", 1, 1, 1, 1, infer_float};
const OpSchema kSchema_Abs = {"Abs", 1, 1, 1, 1, infer_numeric};
const OpSchema kSchema_Neg = {"Neg", 1, 1, 1, 1, infer_numeric};
const OpSchema kSchema_Floor = {"Floor", 1, 1, 1, 1, infer_float};
const OpSchema kSchema_Ceil = {"Ceil", 1, 1, 1, 1, infer_float};
const OpSchema kSchema_Round = {"Round", 1, 1, 1, 1, infer_float};
const OpSchema kSchema_Sign = {"Sign", 1, 1, 1, 1, infer_numeric};
const OpSchema kSchema_Sin = {"Sin", 1, 1, 1, 1, infer_float};
const OpSchema kSchema_Cos = {"Cos", 1, 1, 1, 1, infer_float};
const OpSchema kSchema_Not = {"Not", 1, 1, 1, 1, infer_not};
const OpSchema kSchema_Tan = {"Tan", 1, 1, 1, 1, infer_float};
const OpSchema kSchema_Asin = {"Asin", 1, 1, 1, 1, infer_float};
const OpSchema kSchema_Acos = {"Acos", 1, 1, 1, 1, infer_float};
const OpSchema kSchema_Atan = {"Atan", 1, 1, 1, 1, infer_float};
const OpSchema kSchema_Sinh = {"Sinh", 1, 1, 1, 1, infer_float};
const OpSchema kSchema_Cosh = {"Cosh", 1, 1, 1, 1, infer_float};
const OpSchema kSchema_Asinh = {"Asinh", 1, 1, 1, 1, infer_float};
const OpSchema kSchema_Acosh = {"Acosh", 1, 1, 1, 1, infer_float};
const OpSchema kSchema_Atanh = {"Atanh", 1, 1, 1, 1, infer_float};
const OpSchema kSchema_ThresholdedRelu = {"ThresholdedRelu", 1, 1, 1, 1, infer_float};
const OpSchema kSchema_Celu = {"Celu", 1, 1, 1, 1, infer_celu};
const OpSchema kSchema_Mish = {"Mish", 1, 1, 1, 1, infer_float};
const OpSchema kSchema_Shrink = {"Shrink", 1, 1, 1, 1, infer_numeric};
const OpSchema kSchema_BitwiseNot = {"BitwiseNot", 1, 1, 1, 1, infer_bitwise_not};
const OpSchema kSchema_IsNaN = {"IsNaN", 1, 1, 1, 1, infer_is_class};
const OpSchema kSchema_IsInf = {"IsInf", 1, 1, 1, 1, infer_is_class};

}  // namespace tessera
