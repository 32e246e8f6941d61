// OptionalHasElement (ONNX opset 15, 18), for the tensor forms only: the input is absent
// (no input, or the empty name; opset 18) -> false, or a plain tensor (opset 18 accepts a
// tensor as well as an optional) -> true. Output: a bool scalar, known at plan time, so
// inference sets it as a constant. Optional- and sequence-typed values are not held by
// Tessera (the converter rejects them), so they never reach this schema.
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {
Status infer(InferContext& ctx) {
  TSR_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(DType::kBool, {}));
  t.data_as<bool>()[0] = ctx.has_input(0);
  ctx.output(0) = {DType::kBool, {}, std::make_shared<const Tensor>(std::move(t))};
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_OptionalHasElement = {"OptionalHasElement", 0, 1, 1, 1, infer};

}  // namespace tessera
