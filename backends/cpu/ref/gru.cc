// GRU reference kernel (ONNX GRU-7/14). For each direction d and batch element b, over the
// valid steps t (0..len-1 forward, len-1..0 reverse; len = sequence_lens[b] or seq), with
// the gates in the order z, r, h in W, R and B = [Wb, Rb]:
//   z = f(clip(X_t Wz^T + H_{t-1} Rz^T + Wbz + Rbz))
//   r = f(clip(X_t Wr^T + H_{t-1} Rr^T + Wbr + Rbr))
//   linear_before_reset = 0: h~ = g(clip(X_t Wh^T + (r . H_{t-1}) Rh^T + Rbh + Wbh))
//   linear_before_reset = 1: h~ = g(clip(X_t Wh^T + r . (H_{t-1} Rh^T + Rbh) + Wbh))
//   H_t = (1 - z) . h~ + z . H_{t-1}
// Y[t] = H_t for valid steps, 0 past len; Y_h is the state after the last valid step.
// Dot products are in double. Scratch: h, r . h and the 3 gate rows (5*hidden floats).
#include <algorithm>
#include <cstring>
#include <limits>

#include "backends/cpu/ref/recurrent_util.h"
#include "backends/cpu/ref/ref_kernels.h"
#include "backends/cpu/ref/rnn_activation.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_GRU(const CompileContext& ctx) {
  const Node& node = ctx.node;
  const RecurrentGeometry g = RecurrentGeometry::of(ctx);
  std::vector<std::string> defaults;
  for (int64_t d = 0; d < g.dirs; ++d) defaults.insert(defaults.end(), {"Sigmoid", "Tanh"});
  TSR_ASSIGN_OR_RETURN(std::vector<RnnActivation> acts, parse_rnn_activations(node, defaults));
  const float clip = recurrent_clip(node);
  const bool lbr = node.attr_i("linear_before_reset", 0) == 1;
  const int64_t H = g.hidden, I = g.input;
  return make_fn_kernel(
      [=](const KernelContext& k) -> Status {
        const RecurrentIO io = RecurrentIO::bind(k);
        const float *x = io.x, *w = io.w, *r = io.r, *bias = io.bias, *h0 = io.h0;
        const int32_t* lens = io.lens;
        float *y = io.y, *y_h = io.y_h;
        TSR_RETURN_IF_ERROR(g.check_lens(lens, "GRU"));
        float* h = static_cast<float*>(k.scratch);
        float* rh = h + H;        // r . H_{t-1}
        float* pre = rh + H;      // [3 * H]: z, r, h rows
        if (y) std::fill(y, y + g.seq * g.dirs * g.batch * H, 0.f);
        auto clipped = [&](float v) { return std::min(std::max(v, -clip), clip); };
        for (int64_t d = 0; d < g.dirs; ++d) {
          const bool backward = g.reverse_only || d == 1;
          const float* wd = w + d * 3 * H * I;
          const float* rd = r + d * 3 * H * H;
          const float* wb = bias ? bias + d * 6 * H : nullptr;
          const float* rb = bias ? wb + 3 * H : nullptr;
          const RnnActivation& f = acts[static_cast<size_t>(2 * d)];
          const RnnActivation& gact = acts[static_cast<size_t>(2 * d + 1)];
          for (int64_t b = 0; b < g.batch; ++b) {
            const int64_t len = lens ? lens[b] : g.seq;
            for (int64_t j = 0; j < H; ++j) h[j] = h0 ? h0[g.state_at(d, b) + j] : 0.f;
            for (int64_t step = 0; step < len; ++step) {
              const int64_t t = backward ? len - 1 - step : step;
              const float* xt = x + g.x_at(t, b);
              auto dot = [&](const float* row, const float* v, int64_t n) {
                double acc = 0;
                for (int64_t i = 0; i < n; ++i) acc += static_cast<double>(row[i]) * v[i];
                return acc;
              };
              // z and r gates.
              for (int64_t row = 0; row < 2 * H; ++row) {
                double acc = dot(wd + row * I, xt, I) + dot(rd + row * H, h, H);
                if (wb) acc += static_cast<double>(wb[row]) + rb[row];
                pre[row] = f(clipped(static_cast<float>(acc)));
              }
              const float* z = pre;
              const float* rg = pre + H;
              for (int64_t j = 0; j < H; ++j) rh[j] = rg[j] * h[j];
              for (int64_t j = 0; j < H; ++j) {
                const int64_t row = 2 * H + j;
                double acc = dot(wd + row * I, xt, I) + (wb ? wb[row] : 0.0);
                if (lbr) acc += static_cast<double>(rg[j]) * (dot(rd + row * H, h, H) + (rb ? rb[row] : 0.0));
                else acc += dot(rd + row * H, rh, H) + (rb ? rb[row] : 0.0);
                pre[row] = gact(clipped(static_cast<float>(acc)));
              }
              // H_t is written only after every row used H_{t-1}.
              for (int64_t j = 0; j < H; ++j) h[j] = (1.f - z[j]) * pre[2 * H + j] + z[j] * h[j];
              if (y) std::memcpy(y + g.y_at(t, d, b), h, static_cast<size_t>(H) * sizeof(float));
            }
            if (y_h) std::memcpy(y_h + g.state_at(d, b), h, static_cast<size_t>(H) * sizeof(float));
          }
        }
        return Status::ok();
      },
      static_cast<size_t>(5 * H) * sizeof(float));
}

}  // namespace tessera::ref
