// ScatterElements (ONNX opset 11, 13, 16, 18) and Scatter (opset 9, 11; ScatterElements
// without reduction): output = data, then for each element of indices (coords c),
// output[c with c[axis] = indices[c]] = updates[c], or combined with the value already there
// by `reduction`: "none" (default), "add", "mul" (opset 16+), "max", "min" (opset 18+).
// data rank r >= 1; indices and updates have one shape, of rank r, no larger than data on
// the axes other than `axis`. Indices int32 or int64, negative ones count from the back;
// out-of-range ones are a run-time error. With reduction "none" and repeated indices the
// last update wins (the spec leaves the order undefined).
#include "runtime/ops/dtype_rules.h"
#include "runtime/ops/op_schema.h"
#include "runtime/ops/scatter_reduction_attr.h"

namespace tessera {

namespace {
Status infer(InferContext& ctx) {
  const Shape& data = ctx.input(0).shape;
  const Shape& idx = ctx.input(1).shape;
  const int64_t rank = static_cast<int64_t>(data.size());
  if (rank == 0) return ctx.error("data must have rank >= 1");
  if (dtype_size(ctx.input(0).dtype) == 0) return ctx.unsupported(std::string("dtype ") + dtype_name(ctx.input(0).dtype) + " is not supported");
  const DType it = ctx.input(1).dtype;
  if (it != DType::kInt32 && it != DType::kInt64)
    return ctx.error(std::string("indices have dtype ") + dtype_name(it) + "; expected int32 or int64");
  if (ctx.input(2).dtype != ctx.input(0).dtype) return ctx.error("updates dtype differs from data dtype");
  if (ctx.input(2).shape != idx) return ctx.error("updates shape " + shape_to_string(ctx.input(2).shape) + " differs from indices shape " + shape_to_string(idx));
  if (idx.size() != data.size())
    return ctx.error("indices rank " + std::to_string(idx.size()) + " differs from data rank " + std::to_string(rank));
  TSR_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.node().attr_i("axis", 0), rank, ctx.node()));
  for (int64_t a = 0; a < rank; ++a)
    if (a != axis && idx[a] > data[a])
      return ctx.error("indices shape " + shape_to_string(idx) + " exceeds data shape " + shape_to_string(data) + " on axis " + std::to_string(a));
  if (ctx.node().op_type == "Scatter" && ctx.node().attr_s("reduction", "none") != "none")
    return ctx.error("Scatter has no reduction attribute");
  TSR_RETURN_IF_ERROR(check_scatter_reduction(ctx));
  ctx.output(0) = {ctx.input(0).dtype, data, nullptr};
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_ScatterElements = {"ScatterElements", 3, 3, 1, 1, infer};
const OpSchema kSchema_Scatter = {"Scatter", 3, 3, 1, 1, infer};

}  // namespace tessera
