// Expand (ONNX opset 8, 13): output shape = numpy broadcast of the input shape and the
// int64 `shape` input (known at plan time); dims of 1 in `shape` keep the input's dim.
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {
Status infer(InferContext& ctx) {
  TSR_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ctx.const_ints(1));
  for (int64_t d : shape)
    if (d < 0) return ctx.error("shape " + shape_to_string(shape) + " has a negative dim");
  auto out = broadcast_shapes(ctx.input(0).shape, shape);
  if (!out.is_ok()) return ctx.error(out.status().message());
  ctx.output(0) = {ctx.input(0).dtype, out.value(), nullptr};
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_Expand = {"Expand", 2, 2, 1, 1, infer};

}  // namespace tessera
