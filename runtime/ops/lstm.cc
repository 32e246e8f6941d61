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

namespace tessera {

namespace {

Status check_float(InferContext& ctx, size_t i, const char* name, const Shape& want) {
  if (!ctx.has_input(i)) return Status::ok();
  const ValueInfo& v = ctx.input(i);
  if (v.dtype != DType::kFloat32) return ctx.unsupported(std::string(name) + " must be float, got " + dtype_name(v.dtype));
  if (v.shape != want) return ctx.error(std::string(name) + " " + shape_to_string(v.shape) + " must have shape " + shape_to_string(want));
  return Status::ok();
}

Status infer(InferContext& ctx) {
  const Node& n = ctx.node();
  const ValueInfo& x = ctx.input(0);
  const ValueInfo& w = ctx.input(1);
  const ValueInfo& r = ctx.input(2);
  if (x.dtype != DType::kFloat32) return ctx.unsupported(std::string("dtype ") + dtype_name(x.dtype) + " is not supported (float)");
  if (x.shape.size() != 3 || w.shape.size() != 3 || r.shape.size() != 3)
    return ctx.error("X " + shape_to_string(x.shape) + ", W " + shape_to_string(w.shape) + " and R " + shape_to_string(r.shape) +
                     " must all be 3-D");
  const int64_t layout = n.opset >= 14 ? n.attr_i("layout", 0) : 0;
  if (layout != 0 && layout != 1) return ctx.error("layout must be 0 or 1, got " + std::to_string(layout));
  const std::string direction = n.attr_s("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    return ctx.error("unknown direction '" + direction + "' (expected forward, reverse or bidirectional)");
  const int64_t dirs = direction == "bidirectional" ? 2 : 1;
  const int64_t seq = layout ? x.shape[1] : x.shape[0], batch = layout ? x.shape[0] : x.shape[1], input = x.shape[2];
  const int64_t hidden = r.shape[2];
  if (n.attr_i("hidden_size", hidden) != hidden)
    return ctx.error("hidden_size " + std::to_string(n.attr_i("hidden_size", hidden)) + " does not match R " +
                     shape_to_string(r.shape));
  if (hidden < 1) return ctx.error("hidden size must be >= 1, got R " + shape_to_string(r.shape));
  if (n.attr_f("clip", 1.f) <= 0.f) return ctx.error("clip must be positive");
  const int64_t input_forget = n.attr_i("input_forget", 0);
  if (input_forget != 0 && input_forget != 1) return ctx.error("input_forget must be 0 or 1");
  if (const Attribute* a = n.find_attr("activations"); a && a->strings.size() != static_cast<size_t>(3 * dirs))
    return ctx.error("activations has " + std::to_string(a->strings.size()) + " entries; expected " + std::to_string(3 * dirs));
  TSR_RETURN_IF_ERROR(check_float(ctx, 1, "W", {dirs, 4 * hidden, input}));
  TSR_RETURN_IF_ERROR(check_float(ctx, 2, "R", {dirs, 4 * hidden, hidden}));
  TSR_RETURN_IF_ERROR(check_float(ctx, 3, "B", {dirs, 8 * hidden}));
  const Shape state = layout ? Shape{batch, dirs, hidden} : Shape{dirs, batch, hidden};
  TSR_RETURN_IF_ERROR(check_float(ctx, 5, "initial_h", state));
  TSR_RETURN_IF_ERROR(check_float(ctx, 6, "initial_c", state));
  TSR_RETURN_IF_ERROR(check_float(ctx, 7, "P", {dirs, 3 * hidden}));
  if (ctx.has_input(4)) {
    const ValueInfo& sl = ctx.input(4);
    if (sl.dtype != DType::kInt32) return ctx.error(std::string("sequence_lens must be int32, got ") + dtype_name(sl.dtype));
    if (sl.shape != Shape{batch}) return ctx.error("sequence_lens " + shape_to_string(sl.shape) + " must have shape [" + std::to_string(batch) + "]");
  }
  const Shape y = layout ? Shape{batch, seq, dirs, hidden} : Shape{seq, dirs, batch, hidden};
  for (size_t i = 0; i < ctx.num_outputs(); ++i) {
    ctx.output(i).dtype = DType::kFloat32;
    ctx.output(i).shape = i == 0 ? y : state;
  }
  return Status::ok();
}

}  // namespace

const OpSchema kSchema_LSTM = {"LSTM", 3, 8, 0, 3, infer};

}  // namespace tessera
