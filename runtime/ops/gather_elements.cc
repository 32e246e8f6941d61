// GatherElements (ONNX opset 11, 13): output[i][j][k] = data[index][j][k] (axis 0; likewise
// for other axes) with index = indices[i][j][k]. data and indices have the same rank r >= 1;
// indices may be smaller than data on every axis but `axis` may be any size; the output has
// indices' shape and data's dtype. Indices are int32 or int64, negative ones count from the
// back; out-of-range indices are a run-time error from the kernel.
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {
Status infer(InferContext& ctx) {
  const Shape& data = ctx.input(0).shape;
  const Shape& idx = ctx.input(1).shape;
  const int64_t rank = static_cast<int64_t>(data.size());
  if (rank == 0) return ctx.error("data must have rank >= 1");
  const DType it = ctx.input(1).dtype;
  if (it != DType::kInt32 && it != DType::kInt64)
    return ctx.error(std::string("indices have dtype ") + dtype_name(it) + "; expected int32 or int64");
  if (idx.size() != data.size())
    return ctx.error("indices rank " + std::to_string(idx.size()) + " differs from data rank " + std::to_string(rank));
  TSR_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.node().attr_i("axis", 0), rank, ctx.node()));
  for (int64_t a = 0; a < rank; ++a)
    if (a != axis && idx[a] > data[a])
      return ctx.error("indices shape " + shape_to_string(idx) + " exceeds data shape " + shape_to_string(data) +
                       " on axis " + std::to_string(a));
  ctx.output(0) = {ctx.input(0).dtype, idx, nullptr};
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_GatherElements = {"GatherElements", 2, 2, 1, 1, infer};

}  // namespace tessera
