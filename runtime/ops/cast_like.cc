// CastLike (ONNX opset 15, 19, 21): casts input 0 to the dtype of input 1 (`target_type`,
// whose values are not read), with Cast's conversion rules (runtime/ops/cast.cc): float ->
// integer truncates, NaN -> 0, out-of-range saturates, any -> bool is x != 0. `saturate`
// (opset 19) only concerns float8 types and is ignored. float16 and bfloat16 are accepted
// here and converted by the Cast kernel (which reports them as unimplemented if it cannot);
// string and float8 are not supported yet.
#include "runtime/ops/dtype_rules.h"
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {
Status infer(InferContext& ctx) {
  auto castable = [](DType t) { return dtype_is_computable(t) || t == DType::kFloat16 || t == DType::kBFloat16; };
  TSR_RETURN_IF_ERROR(check_input_dtype(ctx, 0, castable, "a numeric dtype, float16, bfloat16 or bool"));
  TSR_RETURN_IF_ERROR(check_input_dtype(ctx, 1, castable, "a numeric dtype, float16, bfloat16 or bool"));
  ctx.output(0) = {ctx.input(1).dtype, ctx.input(0).shape, nullptr};
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_CastLike = {"CastLike", 2, 2, 1, 1, infer};

}  // namespace tessera
