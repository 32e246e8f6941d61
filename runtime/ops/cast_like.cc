// CastLike (ONNX opset 15, 19, 21): casts input 0 to the dtype of input 1 (`target_type`,
// whose values are not read), with Cast's conversion rules (runtime/ops/cast.cc): float ->
// integer truncates, NaN -> 0, out-of-range saturates, any -> bool is x != 0; float16,
// bfloat16, float8 (with `saturate`, opset 19) and int4 as in Cast. String is not supported.
#include "runtime/ops/dtype_rules.h"
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {
Status infer(InferContext& ctx) {
  const char* want = "a numeric dtype, float16, bfloat16, float8, int4 or bool";
  TSR_RETURN_IF_ERROR(check_input_dtype(ctx, 0, dtype_is_castable, want));
  TSR_RETURN_IF_ERROR(check_input_dtype(ctx, 1, dtype_is_castable, want));
  ctx.output(0) = {ctx.input(1).dtype, ctx.input(0).shape, nullptr};
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_CastLike = {"CastLike", 2, 2, 1, 1, infer};

}  // namespace tessera
