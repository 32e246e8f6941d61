// InstanceNormalization (ONNX opset 6; followed for opsets 7..21):
//   Y[n, c, p] = scale[c] * (X[n, c, p] - mean[n, c]) / sqrt(var[n, c] + epsilon) + B[c]
// with mean and (population) variance over the spatial dims of X [N, C, D1, ...]
// (rank >= 3); scale and B [C]. float only.
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {

Status infer(InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  if (x.dtype != DType::kFloat32) return ctx.unsupported(std::string("dtype ") + dtype_name(x.dtype) + " is not supported (float)");
  if (x.shape.size() < 3) return ctx.error("input X must have rank >= 3 ([N, C, D1, ...]), got " + shape_to_string(x.shape));
  for (size_t i = 1; i < 3; ++i) {
    const ValueInfo& p = ctx.input(i);
    const char* name = i == 1 ? "scale" : "B";
    if (p.dtype != DType::kFloat32) return ctx.unsupported(std::string(name) + " must be float, got " + dtype_name(p.dtype));
    if (p.shape != Shape{x.shape[1]})
      return ctx.error(std::string(name) + " " + shape_to_string(p.shape) + " must have shape [" + std::to_string(x.shape[1]) + "]");
  }
  ctx.output(0).dtype = x.dtype;
  ctx.output(0).shape = x.shape;
  return Status::ok();
}

}  // namespace

const OpSchema kSchema_InstanceNormalization = {"InstanceNormalization", 3, 3, 1, 1, infer};

}  // namespace tessera
