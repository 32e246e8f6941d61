// BatchNormalization (ONNX opset 7, 9, 14, 15):
//   inference:  Y = (X - input_mean) / sqrt(input_var + epsilon) * scale + B
//   training_mode = 1 (opset 14+), per channel c over the N and spatial axes:
//     mean_c = mean(X[:, c]),  var_c = mean((X[:, c] - mean_c)^2)  (population variance)
//     Y = (X - mean_c) / sqrt(var_c + epsilon) * scale + B
//     running_mean = input_mean * momentum + mean_c * (1 - momentum)   (output 1, optional)
//     running_var  = input_var * momentum + var_c * (1 - momentum)     (output 2, optional)
//   momentum defaults to 0.9.
// X [N, C, D1, ...] (rank >= 2); scale, B, input_mean, input_var [C], or, with the opset-7
// attribute spatial = 0, X.shape[1:]. The opset-7/9 training outputs (mean, var, saved_mean,
// saved_var) are not supported (unimplemented). float only.
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {

Status infer(InferContext& ctx) {
  const Node& n = ctx.node();
  const ValueInfo& x = ctx.input(0);
  const int64_t training_mode = n.attr_i("training_mode", 0);
  if (training_mode != 0 && training_mode != 1) return ctx.error("training_mode must be 0 or 1, got " + std::to_string(training_mode));
  const bool training = n.opset >= 14 && training_mode == 1;
  if (n.opset >= 14 && n.outputs.size() > 3)
    return ctx.error("has " + std::to_string(n.outputs.size()) + " outputs; opset 14+ has at most 3 (Y, running_mean, running_var)");
  for (size_t i = 1; i < n.outputs.size(); ++i)
    if (n.outputs[i] >= 0 && !training)
      return ctx.unsupported(n.opset >= 14 ? "running_mean and running_var are outputs only with training_mode = 1"
                                           : "the opset-7/9 training outputs (mean, var, saved_mean, saved_var) are not supported");
  if (x.dtype != DType::kFloat32) return ctx.unsupported(std::string("dtype ") + dtype_name(x.dtype) + " is not supported (float)");
  if (x.shape.size() < 2) return ctx.error("input X must have rank >= 2 ([N, C, ...]), got " + shape_to_string(x.shape));
  const int64_t spatial = n.opset < 9 ? n.attr_i("spatial", 1) : 1;
  const Shape want = spatial ? Shape{x.shape[1]} : Shape(x.shape.begin() + 1, x.shape.end());
  static const char* kNames[] = {"X", "scale", "B", "input_mean", "input_var"};
  for (size_t i = 1; i < 5; ++i) {
    const ValueInfo& p = ctx.input(i);
    if (p.dtype != DType::kFloat32) return ctx.unsupported(std::string(kNames[i]) + " must be float, got " + dtype_name(p.dtype));
    if (p.shape != want)
      return ctx.error(std::string(kNames[i]) + " " + shape_to_string(p.shape) + " must have shape " + shape_to_string(want));
  }
  if (training && !spatial) return ctx.error("training_mode needs spatial = 1");
  ctx.output(0).dtype = x.dtype;
  ctx.output(0).shape = x.shape;
  for (size_t i = 1; i < ctx.num_outputs(); ++i) ctx.output(i) = {x.dtype, want, nullptr};
  return Status::ok();
}

}  // namespace

const OpSchema kSchema_BatchNormalization = {"BatchNormalization", 5, 5, 1, 5, infer};

}  // namespace tessera
