// Hardmax (ONNX opset 1, 11, 13): 1 at the first maximum along the normalized dims, 0
// elsewhere. Before opset 13 the input is coerced to 2-D at `axis` (default 1), from 13 on
// one axis (default -1); see softmax_layout.h. float or double; output is the input's
// dtype and shape.
#include "runtime/ops/dtype_rules.h"
#include "runtime/ops/op_schema.h"
#include "runtime/ops/softmax_layout.h"

namespace tessera {

namespace {
Status infer(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(check_input_dtype(ctx, 0, dtype_is_float, "float or double"));
  TSR_RETURN_IF_ERROR(softmax_layout(ctx.node(), ctx.input(0).shape).status());
  ctx.output(0) = {ctx.input(0).dtype, ctx.input(0).shape, nullptr};
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_Hardmax = {"Hardmax", 1, 1, 1, 1, infer};

}  // namespace tessera
