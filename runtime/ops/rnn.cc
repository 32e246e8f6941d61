// RNN (ONNX opset 7, 14; followed for opsets 7..21): a one-layer simple RNN, forward,
// reverse or bidirectional; inputs and outputs as in recurrent_shapes.h with 1 gate.
// Attributes: direction, hidden_size, activations (1 per direction, default Tanh),
// activation_alpha, activation_beta, clip, layout (opset 14). float only.
#include "runtime/ops/op_schema.h"
#include "runtime/ops/recurrent_shapes.h"

namespace tessera {

namespace {

Status infer(InferContext& ctx) { return infer_recurrent(ctx, 1, 1); }

}  // namespace

const OpSchema kSchema_RNN = {"RNN", 3, 6, 0, 2, infer};

}  // namespace tessera
