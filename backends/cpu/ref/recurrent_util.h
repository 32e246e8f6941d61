// Indexing and input/output binding shared by the GRU and RNN reference kernels (ONNX GRU-7/14, RNN-7/14): where
// step t of batch element b lives in X and Y, and direction d's state in initial_h / Y_h,
// for layout 0 (seq-major) and layout 1 (batch-major, opset 14).
#pragma once

#include <limits>
#include <string>

#include "backends/backend.h"

namespace tessera::ref {

struct RecurrentGeometry {
  bool layout1 = false, reverse_only = false;
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1;

  /// From the node and X [seq, batch, input] (layout 0) / [batch, seq, input] (layout 1)
  /// and R [dirs, G*hidden, hidden]; the schema has checked them.
  static RecurrentGeometry of(const CompileContext& ctx) {
    RecurrentGeometry g;
    const Shape& xs = ctx.input(0).shape;
    g.layout1 = ctx.node.opset >= 14 && ctx.node.attr_i("layout", 0) == 1;
    const std::string direction = ctx.node.attr_s("direction", "forward");
    g.dirs = direction == "bidirectional" ? 2 : 1;
    g.reverse_only = direction == "reverse";
    g.seq = g.layout1 ? xs[1] : xs[0];
    g.batch = g.layout1 ? xs[0] : xs[1];
    g.input = xs[2];
    g.hidden = ctx.input(2).shape[2];
    return g;
  }
  /// Offset (elements) of X_t for batch element b.
  int64_t x_at(int64_t t, int64_t b) const { return (layout1 ? b * seq + t : t * batch + b) * input; }
  /// Offset of Y[t, d, b, :] (layout 0) / Y[b, t, d, :] (layout 1).
  int64_t y_at(int64_t t, int64_t d, int64_t b) const {
    return (layout1 ? (b * seq + t) * dirs + d : (t * dirs + d) * batch + b) * hidden;
  }
  /// Offset of the state of direction d, batch element b in initial_h / Y_h.
  int64_t state_at(int64_t d, int64_t b) const { return (layout1 ? b * dirs + d : d * batch + b) * hidden; }
  /// Checks sequence_lens (may be null) against [0, seq].
  Status check_lens(const int32_t* lens, const std::string& op) const {
    if (!lens) return Status::ok();
    for (int64_t b = 0; b < batch; ++b)
      if (lens[b] < 0 || lens[b] > seq)
        return invalid_argument(op + ": sequence_lens[" + std::to_string(b) + "] = " + std::to_string(lens[b]) +
                                " is outside [0, " + std::to_string(seq) + "]");
    return Status::ok();
  }
};

/// The `clip` attribute of GRU/RNN/LSTM: the cell clip threshold, +inf when absent.
inline float recurrent_clip(const Node& node) {
  return node.find_attr("clip") ? node.attr_f("clip", 0.f) : std::numeric_limits<float>::infinity();
}

/// The tensors of a GRU, RNN or LSTM run, bound from its KernelContext: inputs X, W, R, B,
/// sequence_lens, initial_h (and LSTM's initial_c, P) and outputs Y, Y_h (and LSTM's Y_c);
/// nullptr where omitted.
struct RecurrentIO {
  const float *x = nullptr, *w = nullptr, *r = nullptr, *bias = nullptr, *h0 = nullptr, *c0 = nullptr, *peep = nullptr;
  const int32_t* lens = nullptr;
  float *y = nullptr, *y_h = nullptr, *y_c = nullptr;

  static RecurrentIO bind(const KernelContext& k) {
    auto in = [&](size_t i) { return i < k.inputs.size() && k.inputs[i] ? k.inputs[i] : nullptr; };
    auto out = [&](size_t i) { return i < k.outputs.size() && k.outputs[i] ? k.outputs[i]->data_as<float>() : nullptr; };
    RecurrentIO io;
    io.x = k.input(0).data_as<float>();
    io.w = k.input(1).data_as<float>();
    io.r = k.input(2).data_as<float>();
    if (const Tensor* t = in(3)) io.bias = t->data_as<float>();
    if (const Tensor* t = in(4)) io.lens = t->data_as<int32_t>();
    if (const Tensor* t = in(5)) io.h0 = t->data_as<float>();
    if (const Tensor* t = in(6)) io.c0 = t->data_as<float>();
    if (const Tensor* t = in(7)) io.peep = t->data_as<float>();
    io.y = out(0);
    io.y_h = out(1);
    io.y_c = out(2);
    return io;
  }
};

}  // namespace tessera::ref
