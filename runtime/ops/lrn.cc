// LRN (ONNX opset 1, 13), local response normalization across channels (Krizhevsky et al.
// 2012): X is [N, C, D1, ..., Dk] (rank >= 3), float or double.
//   square_sum[n, c, d] = sum of X[n, i, d]^2 for i in
//     [max(0, c - floor((size - 1) / 2)), min(C - 1, c + ceil((size - 1) / 2))]
//   Y = X / (bias + alpha / size * square_sum)^beta
// size (required, >= 1), alpha (1e-4), beta (0.75), bias (1.0).
#include "runtime/ops/dtype_rules.h"
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {
Status infer(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(check_input_dtype(ctx, 0, dtype_is_float, "float or double"));
  if (ctx.input(0).shape.size() < 3) return ctx.error("X must have rank >= 3 (N, C, spatial...), got " + shape_to_string(ctx.input(0).shape));
  const Attribute* s = ctx.node().find_attr("size");
  if (!s || s->type != AttrType::kInt) return ctx.error("attribute 'size' (int) is required");
  if (s->i < 1) return ctx.error("size " + std::to_string(s->i) + " must be >= 1");
  ctx.output(0) = {ctx.input(0).dtype, ctx.input(0).shape, nullptr};
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_LRN = {"LRN", 1, 1, 1, 1, infer};

}  // namespace tessera
