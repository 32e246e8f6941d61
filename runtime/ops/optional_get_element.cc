// OptionalGetElement (ONNX opset 15, 18), for the tensor form only: a plain tensor input
// (opset 18) is returned unchanged. An absent input is an error (the spec leaves an empty
// optional undefined; onnxruntime fails too). Optional- and sequence-typed values are not
// held by Tessera (the converter rejects them), so they never reach this schema.
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {
Status infer(InferContext& ctx) {
  if (!ctx.has_input(0)) return ctx.error("the input is absent: an empty optional has no element to get");
  ctx.output(0) = {ctx.input(0).dtype, ctx.input(0).shape, ctx.input(0).constant};
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_OptionalGetElement = {"OptionalGetElement", 1, 1, 1, 1, infer};

}  // namespace tessera
