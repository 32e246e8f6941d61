// Shape inference shared by the GRU and RNN schemas (ONNX GRU-7/14, RNN-7/14; LSTM has its
// own because of its extra inputs). Inputs (layout 0 / layout 1 of opset 14):
//   X [seq, batch, input] / [batch, seq, input]; W [dirs, G*hidden, input];
//   R [dirs, G*hidden, hidden]; B [dirs, 2*G*hidden] (optional); sequence_lens [batch]
//   int32 (optional); initial_h [dirs, batch, hidden] / [batch, dirs, hidden] (optional).
// Outputs (each optional): Y [seq, dirs, batch, hidden] / [batch, seq, dirs, hidden] and
//   Y_h [dirs, batch, hidden] / [batch, dirs, hidden].
// G is the number of gates (GRU 3, RNN 1). float only.
#pragma once

#include <string>

#include "runtime/ops/op_schema.h"

namespace tessera {

/// Checks the inputs and attributes (direction, hidden_size, layout, clip, the number of
/// activations: `acts_per_dir` per direction) and sets the outputs' dtypes and shapes.
/// Errors name the node and the offending input or attribute.
inline Status infer_recurrent(InferContext& ctx, int64_t gates, size_t acts_per_dir) {
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
  if (hidden < 1 || hidden > (int64_t{1} << 30)) return ctx.error("bad hidden size: R " + shape_to_string(r.shape));
  if (n.find_attr("clip") && !(n.attr_f("clip", 1.f) > 0.f)) return ctx.error("clip must be positive");
  if (const Attribute* a = n.find_attr("activations"); a && a->strings.size() != acts_per_dir * static_cast<size_t>(dirs))
    return ctx.error("activations has " + std::to_string(a->strings.size()) + " entries; expected " +
                     std::to_string(acts_per_dir * static_cast<size_t>(dirs)));
  auto check = [&](size_t i, const char* name, const Shape& want) -> Status {
    if (!ctx.has_input(i)) return Status::ok();
    const ValueInfo& v = ctx.input(i);
    if (v.dtype != DType::kFloat32) return ctx.unsupported(std::string(name) + " must be float, got " + dtype_name(v.dtype));
    if (v.shape != want)
      return ctx.error(std::string(name) + " " + shape_to_string(v.shape) + " must have shape " + shape_to_string(want));
    return Status::ok();
  };
  TSR_RETURN_IF_ERROR(check(1, "W", {dirs, gates * hidden, input}));
  TSR_RETURN_IF_ERROR(check(2, "R", {dirs, gates * hidden, hidden}));
  TSR_RETURN_IF_ERROR(check(3, "B", {dirs, 2 * gates * hidden}));
  const Shape state = layout ? Shape{batch, dirs, hidden} : Shape{dirs, batch, hidden};
  TSR_RETURN_IF_ERROR(check(5, "initial_h", state));
  if (ctx.has_input(4)) {
    const ValueInfo& sl = ctx.input(4);
    if (sl.dtype != DType::kInt32) return ctx.error(std::string("sequence_lens must be int32, got ") + dtype_name(sl.dtype));
    if (sl.shape != Shape{batch})
      return ctx.error("sequence_lens " + shape_to_string(sl.shape) + " must have shape [" + std::to_string(batch) + "]");
  }
  const Shape y = layout ? Shape{batch, seq, dirs, hidden} : Shape{seq, dirs, batch, hidden};
  for (size_t i = 0; i < ctx.num_outputs(); ++i) {
    ctx.output(i).dtype = DType::kFloat32;
    ctx.output(i).shape = i == 0 ? y : state;
  }
  return Status::ok();
}

}  // namespace tessera
