// BatchNormalization (ONNX opset 7, 9, 14, 15; inference mode only):
//   Y = (X - input_mean) / sqrt(input_var + epsilon) * scale + B
// X [N, C, D1, ...] (rank >= 2); scale, B, input_mean, input_var [C], or, with the opset-7
// attribute spatial = 0, X.shape[1:]. The training outputs (running mean/var, saved
// mean/var) and training_mode = 1 are not supported (unimplemented). momentum is ignored.
// float only.
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {

Status infer(InferContext& ctx) {
  const Node& n = ctx.node();
  const ValueInfo& x = ctx.input(0);
  if (n.attr_i("training_mode", 0) != 0) return ctx.unsupported("training_mode = 1 is not supported (inference only)");
  for (size_t i = 1; i < n.outputs.size(); ++i)
    if (n.outputs[i] >= 0) return ctx.unsupported("the training outputs (mean, var, saved_mean, saved_var) are not supported");
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
  ctx.output(0).dtype = x.dtype;
  ctx.output(0).shape = x.shape;
  return Status::ok();
}

}  // namespace

const OpSchema kSchema_BatchNormalization = {"BatchNormalization", 5, 5, 1, 5, infer};

}  // namespace tessera
