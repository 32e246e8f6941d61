// ConstantOfShape (ONNX opset 9, 20, 21): an output of the shape given by input 0 (int64
// 1-D, known at plan time; an empty shape gives a scalar) filled with the one-element
// tensor attribute `value` (default float 0), whose dtype is the output's.
#include "runtime/ops/dtype_rules.h"
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {
Status infer(InferContext& ctx) {
  TSR_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ctx.const_ints(0));
  if (ctx.input(0).shape.size() != 1) return ctx.error("input shape must be 1-D, got " + shape_to_string(ctx.input(0).shape));
  for (int64_t d : shape)
    if (d < 0) return ctx.error("shape " + shape_to_string(shape) + " has a negative dim");
  DType dt = DType::kFloat32;
  if (const Attribute* a = ctx.node().find_attr("value")) {
    if (a->type != AttrType::kTensor || !a->t) return ctx.error("attribute value must be a tensor");
    if (a->t->numel() != 1) return ctx.error("attribute value must have one element, has " + std::to_string(a->t->numel()));
    dt = a->t->dtype();
    if (!dtype_is_computable(dt) && dt != DType::kFloat16 && dt != DType::kBFloat16)
      return ctx.unsupported(std::string("value of dtype ") + dtype_name(dt) + " is not supported");
  }
  ctx.output(0) = {dt, shape, nullptr};
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_ConstantOfShape = {"ConstantOfShape", 1, 1, 1, 1, infer};

}  // namespace tessera
