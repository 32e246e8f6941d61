// Upsample (ONNX opset 7, 9; deprecated in 10 in favour of Resize): Y = X scaled up by
// per-dim scales >= 1 (opset 7: the `scales` attribute; opset 9: the plan-time constant
// scales input), out = floor(in * scale). mode nearest or linear, with Resize-10
// semantics (asymmetric coordinates). float only.
#include "runtime/ops/op_schema.h"
#include "runtime/ops/resize_attrs.h"

namespace tessera {

namespace {

Status infer(InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  if (x.dtype != DType::kFloat32) return ctx.unsupported(std::string("dtype ") + dtype_name(x.dtype) + " is not supported (float)");
  TSR_ASSIGN_OR_RETURN(ResizeParams p, upsample_params(ctx.node(), x.shape, ctx.has_input(1) ? &ctx.input(1) : nullptr));
  ctx.output(0).dtype = x.dtype;
  ctx.output(0).shape = p.out;
  return Status::ok();
}

}  // namespace

const OpSchema kSchema_Upsample = {"Upsample", 1, 2, 1, 1, infer};

}  // namespace tessera
