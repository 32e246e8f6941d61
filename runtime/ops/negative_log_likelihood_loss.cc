// NegativeLogLikelihoodLoss (ONNX opset 12, 13, 22): input [N, C, d1, ..., dk] (log
// probabilities), target [N, d1, ..., dk] (int32/int64 class indices), optional weight [C].
// loss[n, d] = -input[n, target[n, d], d] * weight[target[n, d]] (0 where target equals
// ignore_index). reduction "none" gives target's shape; "sum" and "mean" (sum divided by the
// summed weights of the counted elements) give a scalar.
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {
Status infer(InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  const ValueInfo& t = ctx.input(1);
  if (x.dtype != DType::kFloat32 && x.dtype != DType::kFloat64)
    return ctx.unsupported(std::string("input dtype ") + dtype_name(x.dtype) + " is not supported (float, double)");
  if (t.dtype != DType::kInt32 && t.dtype != DType::kInt64) return ctx.error("target must be int32 or int64");
  if (x.shape.size() < 2) return ctx.error("input must have rank >= 2 [N, C, ...], got " + shape_to_string(x.shape));
  if (t.shape.size() != x.shape.size() - 1 || t.shape[0] != x.shape[0])
    return ctx.error("target shape " + shape_to_string(t.shape) + " does not match input " + shape_to_string(x.shape));
  for (size_t i = 1; i < t.shape.size(); ++i)
    if (t.shape[i] != x.shape[i + 1])
      return ctx.error("target shape " + shape_to_string(t.shape) + " does not match input " + shape_to_string(x.shape));
  if (ctx.has_input(2)) {
    const ValueInfo& w = ctx.input(2);
    if (w.dtype != x.dtype || w.shape != Shape{x.shape[1]})
      return ctx.error("weight must be " + std::string(dtype_name(x.dtype)) + "[" + std::to_string(x.shape[1]) + "]");
  }
  std::string red = ctx.node().attr_s("reduction", "mean");
  if (red != "none" && red != "sum" && red != "mean") return ctx.error("reduction '" + red + "' is not none, sum or mean");
  ctx.output(0).dtype = x.dtype;
  ctx.output(0).shape = red == "none" ? t.shape : Shape{};
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_NegativeLogLikelihoodLoss = {"NegativeLogLikelihoodLoss", 2, 3, 1, 1, infer};

}  // namespace tessera
