// EyeLike (ONNX opset 9, 22): a 2-D tensor of the input's shape with ones on the diagonal
// shifted by k (default 0; k > 0 above the main diagonal) and zeros elsewhere. dtype
// (optional attribute, an ONNX dtype code) defaults to the input's dtype; numeric or bool.
#include "runtime/ops/dtype_rules.h"
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {
Status infer(InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  if (x.shape.size() != 2) return ctx.error("input must be 2-D, got " + shape_to_string(x.shape));
  DType dt = x.dtype;
  if (const Attribute* a = ctx.node().find_attr("dtype")) {
    if (a->type != AttrType::kInt) return ctx.error("attribute dtype must be an int");
    if (a->i < 1 || a->i > 23) return ctx.error("attribute dtype is " + std::to_string(a->i) + ", not an ONNX dtype");
    if (!dtype_is_valid(static_cast<int32_t>(a->i)))
      return ctx.unsupported("ONNX dtype " + std::to_string(a->i) + " is not supported");
    dt = static_cast<DType>(a->i);
  }
  if (!dtype_is_computable(dt)) {
    std::string msg = std::string("output dtype ") + dtype_name(dt) + " is not supported";
    return dt == DType::kFloat16 || dt == DType::kBFloat16 || dt == DType::kString ? ctx.unsupported(msg) : ctx.error(msg);
  }
  ctx.output(0) = {dt, x.shape, nullptr};
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_EyeLike = {"EyeLike", 1, 1, 1, 1, infer};

}  // namespace tessera
