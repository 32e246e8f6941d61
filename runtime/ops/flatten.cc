// Flatten (ONNX opset 1, 9, 11, 13, 21): output [prod(dims[0:axis]), prod(dims[axis:])];
// axis (default 1) in [-rank, rank] (negative from opset 11).
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {
Status infer(InferContext& ctx) {
  const Shape& in = ctx.input(0).shape;
  const int64_t rank = static_cast<int64_t>(in.size());
  int64_t axis = ctx.node().attr_i("axis", 1);
  if (axis < -rank || axis > rank)
    return ctx.error("axis " + std::to_string(axis) + " is out of range [-" + std::to_string(rank) + ", " +
                     std::to_string(rank) + "]");
  if (axis < 0) axis += rank;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i) (i < axis ? outer : inner) *= in[i];
  ctx.output(0) = {ctx.input(0).dtype, {outer, inner}, nullptr};
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_Flatten = {"Flatten", 1, 1, 1, 1, infer};

}  // namespace tessera
