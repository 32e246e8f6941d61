// CumSum (ONNX opset 11, 14): running sums of x along `axis` (input 1: an int32 or int64
// scalar or 1-element tensor, read when the kernel runs; negative counts from the back).
// exclusive=1 leaves out the current element (the first sum is 0); reverse=1 sums from the
// end. x is int32, int64, uint32, uint64, float or double (float16/bfloat16 not supported);
// output dtype and shape are x's.
#include "runtime/ops/dtype_rules.h"
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {
Status infer(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(check_input_dtype(ctx, 0, dtype_is_numeric, "a numeric dtype"));
  const ValueInfo& x = ctx.input(0);
  if (x.shape.empty()) return ctx.error("x must have rank >= 1");
  const ValueInfo& a = ctx.input(1);
  if (a.dtype != DType::kInt32 && a.dtype != DType::kInt64)
    return ctx.error(std::string("axis has dtype ") + dtype_name(a.dtype) + "; expected int32 or int64");
  if (a.shape.size() > 1 || (a.shape.size() == 1 && a.shape[0] != 1))
    return ctx.error("axis must be a scalar, got shape " + shape_to_string(a.shape));
  if (a.constant) {
    TSR_ASSIGN_OR_RETURN(std::vector<int64_t> v, ctx.const_ints(1));
    TSR_RETURN_IF_ERROR(normalize_axis(v.at(0), static_cast<int64_t>(x.shape.size()), ctx.node()).status());
  }
  for (const char* name : {"exclusive", "reverse"}) {
    const int64_t v = ctx.node().attr_i(name, 0);
    if (v != 0 && v != 1) return ctx.error(std::string("attribute ") + name + " is " + std::to_string(v) + "; expected 0 or 1");
  }
  ctx.output(0) = {x.dtype, x.shape, nullptr};
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_CumSum = {"CumSum", 2, 2, 1, 1, infer};

}  // namespace tessera
