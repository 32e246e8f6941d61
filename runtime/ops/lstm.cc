// LSTM (ONNX opset 7, 14; followed for opsets 7..21): a one-layer LSTM, forward, reverse
// or bidirectional. Inputs (layout 0 / layout 1 of opset 14):
//   X [seq, batch, input] / [batch, seq, input]; W [dirs, 4*hidden, input];
//   R [dirs, 4*hidden, hidden]; B [dirs, 8*hidden] (Wb then Rb; optional);
//   sequence_lens [batch] int32 (optional); initial_h, initial_c [dirs, batch, hidden] /
//   [batch, dirs, hidden] (optional); P [dirs, 3*hidden] (peepholes i, o, f; optional).
// Outputs (each optional): Y [seq, dirs, batch, hidden] / [batch, seq, dirs, hidden],
//   Y_h and Y_c [dirs, batch, hidden] / [batch, dirs, hidden].
// The gate order in W, R and B is i, o, f, c (ONNX spec). Attributes: direction,
// hidden_size (inferred from R when absent), activations (3 per direction, default
// Sigmoid, Tanh, Tanh), activation_alpha, activation_beta, clip, input_forget, layout.
// float only.
#include "runtime/ops/op_schema.h"
#include "runtime/ops/recurrent_shapes.h"

namespace tessera {

namespace {

// The checks shared with GRU and RNN (runtime/ops/recurrent_shapes.h: X, W, R, B,
// sequence_lens, initial_h, the outputs), then LSTM's own: input_forget, initial_c, P.
Status infer(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(infer_recurrent(ctx, /*gates=*/4, /*acts_per_dir=*/3));
  const Node& n = ctx.node();
  const int64_t input_forget = n.attr_i("input_forget", 0);
  if (input_forget != 0 && input_forget != 1) return ctx.error("input_forget must be 0 or 1");
  const Shape& x = ctx.input(0).shape;
  const int64_t hidden = ctx.input(2).shape[2];
  const int64_t dirs = n.attr_s("direction", "forward") == "bidirectional" ? 2 : 1;
  const bool layout = n.opset >= 14 && n.attr_i("layout", 0) == 1;
  const int64_t batch = layout ? x[0] : x[1];
  const Shape state = layout ? Shape{batch, dirs, hidden} : Shape{dirs, batch, hidden};
  auto check = [&](size_t i, const char* name, const Shape& want) -> Status {
    if (!ctx.has_input(i)) return Status::ok();
    const ValueInfo& v = ctx.input(i);
    if (v.dtype != DType::kFloat32) return ctx.unsupported(std::string(name) + " must be float, got " + dtype_name(v.dtype));
    if (v.shape != want)
      return ctx.error(std::string(name) + " " + shape_to_string(v.shape) + " must have shape " + shape_to_string(want));
    return Status::ok();
  };
  TSR_RETURN_IF_ERROR(check(6, "initial_c", state));
  return check(7, "P", {dirs, 3 * hidden});
}

}  // namespace

const OpSchema kSchema_LSTM = {"LSTM", 3, 8, 0, 3, infer};

}  // namespace tessera
