// Gather (ONNX opset 1, 11, 13): output = data.shape[:axis] + indices.shape +
// data.shape[axis+1:]; indices are int32 or int64, negative ones count from the back
// (opset 11+). axis (default 0) in [-rank, rank-1]. Out-of-range indices are a run-time
// error from the kernel.
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {
Status infer(InferContext& ctx) {
  const Shape& data = ctx.input(0).shape;
  const int64_t rank = static_cast<int64_t>(data.size());
  if (rank == 0) return ctx.error("data must have rank >= 1");
  DType it = ctx.input(1).dtype;
  if (it != DType::kInt32 && it != DType::kInt64)
    return ctx.error(std::string("indices have dtype ") + dtype_name(it) + "; expected int32 or int64");
  TSR_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.node().attr_i("axis", 0), rank, ctx.node()));
  const Shape& idx = ctx.input(1).shape;
  Shape out(data.begin(), data.begin() + axis);
  out.insert(out.end(), idx.begin(), idx.end());
  out.insert(out.end(), data.begin() + axis + 1, data.end());
  ctx.output(0) = {ctx.input(0).dtype, out, nullptr};
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_Gather = {"Gather", 2, 2, 1, 1, infer};

}  // namespace tessera
