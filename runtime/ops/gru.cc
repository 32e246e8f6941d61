// GRU (ONNX opset 7, 14; followed for opsets 7..21): a one-layer GRU, forward, reverse or
// bidirectional; inputs and outputs as in recurrent_shapes.h with 3 gates in the order
// z, r, h. Attributes: direction, hidden_size, activations (2 per direction, default
// Sigmoid, Tanh), activation_alpha, activation_beta, clip, linear_before_reset, layout
// (opset 14). float only.
#include "runtime/ops/op_schema.h"
#include "runtime/ops/recurrent_shapes.h"

namespace tessera {

namespace {

Status infer(InferContext& ctx) {
  const int64_t lbr = ctx.node().attr_i("linear_before_reset", 0);
  if (lbr != 0 && lbr != 1) return ctx.error("linear_before_reset must be 0 or 1, got " + std::to_string(lbr));
  return infer_recurrent(ctx, 3, 2);
}

}  // namespace

const OpSchema kSchema_GRU = {"GRU", 3, 6, 0, 2, infer};

}  // namespace tessera
