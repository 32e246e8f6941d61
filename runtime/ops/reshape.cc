// Reshape (ONNX opset 5, 13, 14, 19, 21): the `shape` input (int64, known at plan time)
// gives the output dims. A 0 copies the input dim at the same index unless allowzero=1
// (opset 14+), where it means a zero dim; one -1 is inferred from the element count.
// allowzero=1 with both 0 and -1 is an error, as the spec says.
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {
Status infer(InferContext& ctx) {
  if (ctx.input(1).dtype != DType::kInt64 || ctx.input(1).shape.size() != 1)
    return ctx.error(std::string("shape must be a 1-D int64 tensor, got ") + dtype_name(ctx.input(1).dtype) +
                     shape_to_string(ctx.input(1).shape));
  TSR_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ctx.const_ints(1));
  const Shape& in = ctx.input(0).shape;
  const bool allowzero = ctx.node().opset >= 14 && ctx.node().attr_i("allowzero", 0) != 0;
  TSR_ASSIGN_OR_RETURN(int64_t numel, shape_numel(in));
  Shape out(shape.size());
  int infer_at = -1;
  bool has_zero = false;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t d = shape[i];
    if (d == -1) {
      if (infer_at >= 0) return ctx.error("shape " + shape_to_string(shape) + " has more than one -1");
      infer_at = static_cast<int>(i);
      continue;
    }
    if (d < -1) return ctx.error("shape " + shape_to_string(shape) + " has invalid dim " + std::to_string(d));
    if (d == 0 && !allowzero) {
      if (i >= in.size())
        return ctx.error("shape " + shape_to_string(shape) + " copies dim " + std::to_string(i) + " (0) but input " +
                         shape_to_string(in) + " has rank " + std::to_string(in.size()));
      d = in[i];
    }
    if (d == 0) has_zero = true;
    out[i] = d;
    if (d != 0 && known > kMaxTensorBytes / d) return ctx.error("shape " + shape_to_string(shape) + " is too large");
    known *= d;
  }
  if (infer_at >= 0) {
    if (allowzero && has_zero) return ctx.error("shape " + shape_to_string(shape) + " has both 0 and -1 with allowzero=1");
    if (known == 0 || numel % known != 0)
      return ctx.error("cannot infer the -1 of shape " + shape_to_string(shape) + " for input " + shape_to_string(in));
    out[infer_at] = numel / known;
    known = numel;
  }
  if (known != numel)
    return ctx.error("shape " + shape_to_string(shape) + " has " + std::to_string(known) + " elements but input " +
                     shape_to_string(in) + " has " + std::to_string(numel));
  ctx.output(0) = {ctx.input(0).dtype, out, nullptr};
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_Reshape = {"Reshape", 2, 2, 1, 1, infer};

}  // namespace tessera
