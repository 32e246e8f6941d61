// GlobalAveragePool (ONNX opset 1; followed for opsets 7..21): the mean over all spatial
// dims of X [N, C, D1, ...], giving Y [N, C, 1, ...]. float only.
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {
Status infer(InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  if (x.dtype != DType::kFloat32) return ctx.unsupported(std::string("dtype ") + dtype_name(x.dtype) + " is not supported (float)");
  if (x.shape.size() < 3) return ctx.error("input X must have rank >= 3 ([N, C, D1, ...]), got " + shape_to_string(x.shape));
  ctx.output(0).dtype = x.dtype;
  ctx.output(0).shape = Shape(x.shape.size(), 1);
  ctx.output(0).shape[0] = x.shape[0];
  ctx.output(0).shape[1] = x.shape[1];
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_GlobalAveragePool = {"GlobalAveragePool", 1, 1, 1, 1, infer};

}  // namespace tessera
