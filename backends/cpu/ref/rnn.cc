// RNN reference kernel (ONNX RNN-7/14). For each direction d and batch element b, over the
// valid steps t (0..len-1 forward, len-1..0 reverse; len = sequence_lens[b] or seq):
//   H_t = f(clip(X_t Wi^T + H_{t-1} Ri^T + Wbi + Rbi))
// Y[t] = H_t for valid steps, 0 past len; Y_h is the state after the last valid step.
// Dot products are in double. Scratch: h and the new state (2*hidden floats).
#include <algorithm>
#include <cstring>
#include <limits>

#include "backends/cpu/ref/recurrent_util.h"
#include "backends/cpu/ref/ref_kernels.h"
#include "backends/cpu/ref/rnn_activation.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_RNN(const CompileContext& ctx) {
  const Node& node = ctx.node;
  const RecurrentGeometry g = RecurrentGeometry::of(ctx);
  TSR_ASSIGN_OR_RETURN(std::vector<RnnActivation> acts,
                       parse_rnn_activations(node, std::vector<std::string>(static_cast<size_t>(g.dirs), "Tanh")));
  const float clip = recurrent_clip(node);
  const int64_t H = g.hidden, I = g.input;
  return make_fn_kernel(
      [=](const KernelContext& k) -> Status {
        const RecurrentIO io = RecurrentIO::bind(k);
        const float *x = io.x, *w = io.w, *r = io.r, *bias = io.bias, *h0 = io.h0;
        const int32_t* lens = io.lens;
        float *y = io.y, *y_h = io.y_h;
        TSR_RETURN_IF_ERROR(g.check_lens(lens, "RNN"));
        float* h = static_cast<float*>(k.scratch);
        float* next = h + H;
        if (y) std::fill(y, y + g.seq * g.dirs * g.batch * H, 0.f);
        for (int64_t d = 0; d < g.dirs; ++d) {
          const bool backward = g.reverse_only || d == 1;
          const float* wd = w + d * H * I;
          const float* rd = r + d * H * H;
          const float* wb = bias ? bias + d * 2 * H : nullptr;
          const RnnActivation& f = acts[static_cast<size_t>(d)];
          for (int64_t b = 0; b < g.batch; ++b) {
            const int64_t len = lens ? lens[b] : g.seq;
            for (int64_t j = 0; j < H; ++j) h[j] = h0 ? h0[g.state_at(d, b) + j] : 0.f;
            for (int64_t step = 0; step < len; ++step) {
              const int64_t t = backward ? len - 1 - step : step;
              const float* xt = x + g.x_at(t, b);
              for (int64_t j = 0; j < H; ++j) {
                double acc = wb ? static_cast<double>(wb[j]) + wb[H + j] : 0.0;
                for (int64_t i = 0; i < I; ++i) acc += static_cast<double>(wd[j * I + i]) * xt[i];
                for (int64_t i = 0; i < H; ++i) acc += static_cast<double>(rd[j * H + i]) * h[i];
                next[j] = f(std::min(std::max(static_cast<float>(acc), -clip), clip));
              }
              std::memcpy(h, next, static_cast<size_t>(H) * sizeof(float));
              if (y) std::memcpy(y + g.y_at(t, d, b), h, static_cast<size_t>(H) * sizeof(float));
            }
            if (y_h) std::memcpy(y_h + g.state_at(d, b), h, static_cast<size_t>(H) * sizeof(float));
          }
        }
        return Status::ok();
      },
      static_cast<size_t>(2 * H) * sizeof(float));
}

}  // namespace tessera::ref
