// LSTM reference kernel (ONNX LSTM-7/14). For each direction d and batch element b, over
// the valid steps t (0..len-1 forward, len-1..0 reverse; len = sequence_lens[b] or seq):
//   pre_g = X_t W_g^T + H_{t-1} R_g^T + Wb_g + Rb_g            for g in i, o, f, c
//   i = f(clip(pre_i + P_i . C_{t-1}))
//   f_t = input_forget ? 1 - i : f(clip(pre_f + P_f . C_{t-1}))
//   c~ = g(clip(pre_c));   C_t = f_t . C_{t-1} + i . c~
//   o = f(clip(pre_o + P_o . C_t));   H_t = o . h(C_t)
// (clip(x) = min(max(x, -clip), clip) when clip is set). Y[t] = H_t for valid steps, 0 past
// len; Y_h / Y_c hold the state after the last valid step. Dot products are in double.
// Scratch: h, c (hidden each) and the 4 gate pre-activations (4*hidden), floats.
#include <algorithm>
#include <cstring>
#include <limits>

#include "backends/cpu/ref/recurrent_util.h"
#include "backends/cpu/ref/ref_kernels.h"
#include "backends/cpu/ref/rnn_activation.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_LSTM(const CompileContext& ctx) {
  const Node& node = ctx.node;
  const Shape& xs = ctx.input(0).shape;
  const bool layout1 = node.opset >= 14 && node.attr_i("layout", 0) == 1;
  const std::string direction = node.attr_s("direction", "forward");
  const int64_t dirs = direction == "bidirectional" ? 2 : 1;
  const bool reverse_only = direction == "reverse";
  const int64_t seq = layout1 ? xs[1] : xs[0], batch = layout1 ? xs[0] : xs[1], input = xs[2];
  const int64_t hidden = ctx.input(2).shape[2];
  std::vector<std::string> defaults;
  for (int64_t d = 0; d < dirs; ++d) defaults.insert(defaults.end(), {"Sigmoid", "Tanh", "Tanh"});
  TSR_ASSIGN_OR_RETURN(std::vector<RnnActivation> acts, parse_rnn_activations(node, defaults));
  const float clip = recurrent_clip(node);
  const bool input_forget = node.attr_i("input_forget", 0) == 1;
  const size_t scratch = static_cast<size_t>(6 * hidden) * sizeof(float);
  return make_fn_kernel(
      [=](const KernelContext& k) -> Status {
        const RecurrentIO io = RecurrentIO::bind(k);
        const float *x = io.x, *w = io.w, *r = io.r, *bias = io.bias, *h0 = io.h0, *c0 = io.c0, *peep = io.peep;
        const int32_t* lens = io.lens;
        float *y = io.y, *y_h = io.y_h, *y_c = io.y_c;
        float* h = static_cast<float*>(k.scratch);
        float* c = h + hidden;
        float* pre = c + hidden;  // [4 * hidden]: i, o, f, c
        if (lens)
          for (int64_t b = 0; b < batch; ++b)
            if (lens[b] < 0 || lens[b] > seq)
              return invalid_argument("LSTM: sequence_lens[" + std::to_string(b) + "] = " + std::to_string(lens[b]) +
                                      " is outside [0, " + std::to_string(seq) + "]");
        if (y) std::fill(y, y + seq * dirs * batch * hidden, 0.f);
        auto x_at = [&](int64_t t, int64_t b) { return x + (layout1 ? b * seq + t : t * batch + b) * input; };
        auto y_at = [&](int64_t t, int64_t d, int64_t b) {
          return y + (layout1 ? (b * seq + t) * dirs + d : (t * dirs + d) * batch + b) * hidden;
        };
        auto state_at = [&](int64_t d, int64_t b) { return (layout1 ? b * dirs + d : d * batch + b) * hidden; };
        auto clipped = [&](float v) { return std::min(std::max(v, -clip), clip); };
        for (int64_t d = 0; d < dirs; ++d) {
          const bool backward = reverse_only || d == 1;
          const float* wd = w + d * 4 * hidden * input;
          const float* rd = r + d * 4 * hidden * hidden;
          const float* wb = bias ? bias + d * 8 * hidden : nullptr;
          const float* pd = peep ? peep + d * 3 * hidden : nullptr;
          const RnnActivation& f = acts[static_cast<size_t>(3 * d)];
          const RnnActivation& g = acts[static_cast<size_t>(3 * d + 1)];
          const RnnActivation& hf = acts[static_cast<size_t>(3 * d + 2)];
          for (int64_t b = 0; b < batch; ++b) {
            const int64_t len = lens ? lens[b] : seq;
            for (int64_t j = 0; j < hidden; ++j) {
              h[j] = h0 ? h0[state_at(d, b) + j] : 0.f;
              c[j] = c0 ? c0[state_at(d, b) + j] : 0.f;
            }
            for (int64_t step = 0; step < len; ++step) {
              const int64_t t = backward ? len - 1 - step : step;
              const float* xt = x_at(t, b);
              for (int64_t row = 0; row < 4 * hidden; ++row) {
                double acc = wb ? static_cast<double>(wb[row]) + wb[4 * hidden + row] : 0.0;
                for (int64_t i = 0; i < input; ++i) acc += static_cast<double>(xt[i]) * wd[row * input + i];
                for (int64_t i = 0; i < hidden; ++i) acc += static_cast<double>(h[i]) * rd[row * hidden + i];
                pre[row] = static_cast<float>(acc);
              }
              for (int64_t j = 0; j < hidden; ++j) {
                const float c_prev = c[j];
                const float ig = f(clipped(pre[j] + (pd ? pd[j] * c_prev : 0.f)));
                const float fg = input_forget ? 1.f - ig : f(clipped(pre[2 * hidden + j] + (pd ? pd[2 * hidden + j] * c_prev : 0.f)));
                const float cc = g(clipped(pre[3 * hidden + j]));
                c[j] = fg * c_prev + ig * cc;
                const float og = f(clipped(pre[hidden + j] + (pd ? pd[hidden + j] * c[j] : 0.f)));
                // H_t is written to h only after every row used H_{t-1} (the loop above).
                h[j] = og * hf(c[j]);
              }
              if (y) std::memcpy(y_at(t, d, b), h, static_cast<size_t>(hidden) * sizeof(float));
            }
            if (y_h) std::memcpy(y_h + state_at(d, b), h, static_cast<size_t>(hidden) * sizeof(float));
            if (y_c) std::memcpy(y_c + state_at(d, b), c, static_cast<size_t>(hidden) * sizeof(float));
          }
        }
        return Status::ok();
      },
      scratch);
}

}  // namespace tessera::ref
