// Identity (ONNX opset 1..21): output = input (tensors only; sequences and optionals are
// not supported).
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {
Status infer(InferContext& ctx) {
  ctx.output(0).dtype = ctx.input(0).dtype;
  ctx.output(0).shape = ctx.input(0).shape;
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_Identity = {"Identity", 1, 1, 1, 1, infer};

}  // namespace tessera
