// ArgMax and ArgMin (ONNX opset 1, 11, 12, 13): int64 index of the largest / smallest
// element along `axis` (default 0, negative from opset 11); keepdims (default 1);
// select_last_index (opset 12, default 0) picks the last of equal extremes. The reduced
// axis must not be empty.
#include "runtime/ops/dtype_rules.h"
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {
Status infer(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(check_input_dtype(ctx, 0, dtype_is_numeric, "a numeric dtype"));
  const Shape& in = ctx.input(0).shape;
  const int64_t rank = static_cast<int64_t>(in.size());
  if (rank == 0) return ctx.error("input must have rank >= 1");
  TSR_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.node().attr_i("axis", 0), rank, ctx.node()));
  if (in[axis] == 0) return ctx.error("cannot take the arg of an empty axis " + std::to_string(axis));
  Shape out = in;
  if (ctx.node().attr_i("keepdims", 1) != 0) out[axis] = 1;
  else out.erase(out.begin() + axis);
  ctx.output(0) = {DType::kInt64, out, nullptr};
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_ArgMax = {"ArgMax", 1, 1, 1, 1, infer};
const OpSchema kSchema_ArgMin = {"ArgMin", 1, 1, 1, 1, infer};

}  // namespace tessera
