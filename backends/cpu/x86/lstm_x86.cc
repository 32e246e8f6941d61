// LSTM (ONNX LSTM-7/14), float32, with the gate products on the packed SGEMM, as the
// reference (ref/lstm.cc) defines it:
//   pre_g = X_t W_g^T + H_{t-1} R_g^T + Wb_g + Rb_g, g in (i, o, f, c);  gates and states
//   as in ref/lstm.cc (activations, clip, peepholes, input_forget).
// Per direction, X W^T + (Wb + Rb) for all steps and batch rows at once is one GEMM
// ((seq * batch) x 4H by input x 4H); each step then adds H_{t-1} R^T (batch x 4H by H x 4H).
// W and R are packed once at plan time when they are constants. With the default
// activations and no peepholes, the gates of a batch row are computed 4H at a time with the
// vectorized Sigmoid and Tanh of the elementwise kernels (elementwise_simd.h), else one by
// one as the reference does. Sums are in float (the reference sums in double), so results
// differ by float rounding. sequence_lens and
// layout = 1 run the reference.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "backends/cpu/ref/recurrent_util.h"
#include "backends/cpu/ref/rnn_activation.h"
#include "backends/cpu/thread_pool.h"
#include "backends/cpu/x86/elementwise_x86.h"
#include "backends/cpu/x86/sgemm.h"
#include "backends/cpu/x86/x86_kernels.h"

namespace tessera::x86 {

namespace {

inline size_t align64(size_t bytes) { return (bytes + 63) / 64 * 64; }

struct PackedB {
  std::unique_ptr<float, void (*)(void*)> data{nullptr, &std::free};
};

class LstmKernel final : public Kernel {
 public:
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1;
  bool reverse_only = false, input_forget = false;
  float clip = 0;
  std::vector<ref::RnnActivation> acts;
  int threads = 1;
  cpu::SgemmIsa isa = cpu::SgemmIsa::kAuto;
  std::vector<PackedB> packed_w, packed_r;  // per direction, or empty
  size_t xg_bytes = 0, hg_bytes = 0, state_bytes = 0, bias_bytes = 0, gemm_bytes = 0;
  // Every direction's activations are the defaults (Sigmoid, Tanh, Tanh) and the CPU has
  // the vectorized elementwise math (`core`): the gates run a row at a time through it.
  bool simd_gates = false;
  cpu::ElementwiseCore core{};

  // c (m x 4H) = a (m x k) * b^T + bias, b (4H x k) direction d's W or R, pre-packed in
  // `packed` when it was a constant.
  void gemm_bt(int64_t m, int64_t k, const float* a, const float* b, const std::vector<PackedB>& packed, int64_t d,
               const float* bias, float* c, void* gemm_scratch, ThreadPool* pool) const {
    cpu::SgemmArgs g;
    g.m = m;
    g.n = 4 * hidden;
    g.k = k;
    g.a = a;
    g.lda = k;
    g.b = b;
    g.ldb = k;
    g.trans_b = true;
    g.packed_b = packed.empty() ? nullptr : packed[static_cast<size_t>(d)].data.get();
    g.c = c;
    g.ldc = 4 * hidden;
    g.bias = bias;
    g.isa = isa;
    cpu::sgemm(g, gemm_scratch, pool, threads);
  }

  size_t scratch_bytes() const override { return xg_bytes + hg_bytes + 2 * state_bytes + bias_bytes + gemm_bytes; }

  Status run(const KernelContext& k) const override {
    const ref::RecurrentIO io = ref::RecurrentIO::bind(k);
    const float *x = io.x, *w = io.w, *r = io.r, *bias = io.bias, *h0 = io.h0, *c0 = io.c0, *peep = io.peep;
    float *y = io.y, *y_h = io.y_h, *y_c = io.y_c;
    char* s = static_cast<char*>(k.scratch);
    float* xg = reinterpret_cast<float*>(s);                       // [seq * batch, 4H]
    float* hg = reinterpret_cast<float*>(s + xg_bytes);            // [batch, 4H]
    float* h = reinterpret_cast<float*>(s + xg_bytes + hg_bytes);  // [batch, H]
    float* c = h + state_bytes / sizeof(float);                    // [batch, H]
    float* bsum = reinterpret_cast<float*>(s + xg_bytes + hg_bytes + 2 * state_bytes);  // [4H]
    void* gemm_scratch = s + xg_bytes + hg_bytes + 2 * state_bytes + bias_bytes;
    ThreadPool* pool = threads > 1 ? k.thread_pool : nullptr;
    const int64_t g4 = 4 * hidden;
    const bool vector_gates = simd_gates && !peep;
    auto clipped = [&](float v) { return std::min(std::max(v, -clip), clip); };
    for (int64_t d = 0; d < dirs; ++d) {
      const bool backward = reverse_only || d == 1;
      const float* pd = peep ? peep + d * 3 * hidden : nullptr;
      const ref::RnnActivation& f = acts[static_cast<size_t>(3 * d)];
      const ref::RnnActivation& g = acts[static_cast<size_t>(3 * d + 1)];
      const ref::RnnActivation& hf = acts[static_cast<size_t>(3 * d + 2)];
      if (bias)
        for (int64_t j = 0; j < g4; ++j) bsum[j] = bias[d * 8 * hidden + j] + bias[d * 8 * hidden + g4 + j];
      // xg = X W_d^T + (Wb + Rb), all steps at once.
      gemm_bt(seq * batch, input, x, w + d * g4 * input, packed_w, d, bias ? bsum : nullptr, xg, gemm_scratch, pool);
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t j = 0; j < hidden; ++j) {
          h[b * hidden + j] = h0 ? h0[(d * batch + b) * hidden + j] : 0.f;
          c[b * hidden + j] = c0 ? c0[(d * batch + b) * hidden + j] : 0.f;
        }
      for (int64_t step = 0; step < seq; ++step) {
        const int64_t t = backward ? seq - 1 - step : step;
        gemm_bt(batch, hidden, h, r + d * g4 * hidden, packed_r, d, nullptr, hg, gemm_scratch, pool);  // H_{t-1} R_d^T
        if (vector_gates) {
          // The default activations without peepholes, a row of 4H gates at a time: the
          // pre-activations (clipped) in place in hg, Sigmoid over i, o, f (the first 3H,
          // ONNX's gate order i, o, f, c) and Tanh over c by the vectorized elementwise
          // math, then C and H; tanh(C) goes through the row's i gates, no longer needed.
          for (int64_t b = 0; b < batch; ++b) {
            const float* px = xg + (t * batch + b) * g4;
            float* pre = hg + b * g4;
            float* hb = h + b * hidden;
            float* cb = c + b * hidden;
            for (int64_t j = 0; j < g4; ++j) pre[j] += px[j];
            if (clip < std::numeric_limits<float>::infinity())
              for (int64_t j = 0; j < g4; ++j) pre[j] = clipped(pre[j]);
            core.unary(cpu::UnaryOp::kSigmoid, cpu::UnaryParams{}, pre, pre, 3 * hidden);
            core.unary(cpu::UnaryOp::kTanh, cpu::UnaryParams{}, pre + 3 * hidden, pre + 3 * hidden, hidden);
            const float *ig = pre, *og = pre + hidden, *fg = pre + 2 * hidden, *cc = pre + 3 * hidden;
            float* tc = pre;  // tanh(C), over the i gates once they are used
            for (int64_t j = 0; j < hidden; ++j) {
              const float f_j = input_forget ? 1.f - ig[j] : fg[j];
              cb[j] = f_j * cb[j] + ig[j] * cc[j];
              tc[j] = cb[j];
            }
            core.unary(cpu::UnaryOp::kTanh, cpu::UnaryParams{}, tc, tc, hidden);
            for (int64_t j = 0; j < hidden; ++j) hb[j] = og[j] * tc[j];
            if (y) std::memcpy(y + ((t * dirs + d) * batch + b) * hidden, hb, static_cast<size_t>(hidden) * sizeof(float));
          }
          continue;
        }
        for (int64_t b = 0; b < batch; ++b) {
          const float* px = xg + (t * batch + b) * g4;
          const float* ph = hg + b * g4;
          float* hb = h + b * hidden;
          float* cb = c + b * hidden;
          for (int64_t j = 0; j < hidden; ++j) {
            auto pre = [&](int64_t gate) { return px[gate * hidden + j] + ph[gate * hidden + j]; };
            const float c_prev = cb[j];
            const float ig = f(clipped(pre(0) + (pd ? pd[j] * c_prev : 0.f)));
            const float fg = input_forget ? 1.f - ig : f(clipped(pre(2) + (pd ? pd[2 * hidden + j] * c_prev : 0.f)));
            const float cc = g(clipped(pre(3)));
            cb[j] = fg * c_prev + ig * cc;
            const float og = f(clipped(pre(1) + (pd ? pd[hidden + j] * cb[j] : 0.f)));
            hb[j] = og * hf(cb[j]);  // hg already holds every row's H_{t-1} R^T
          }
          if (y) std::memcpy(y + ((t * dirs + d) * batch + b) * hidden, hb, static_cast<size_t>(hidden) * sizeof(float));
        }
      }
      if (y_h) std::memcpy(y_h + d * batch * hidden, h, static_cast<size_t>(batch * hidden) * sizeof(float));
      if (y_c) std::memcpy(y_c + d * batch * hidden, c, static_cast<size_t>(batch * hidden) * sizeof(float));
    }
    return Status::ok();
  }
};

}  // namespace

Result<std::unique_ptr<Kernel>> make_LSTM(const CompileContext& ctx) {
  const auto decline = [] { return Result<std::unique_ptr<Kernel>>(std::unique_ptr<Kernel>()); };
  const Node& node = ctx.node;
  for (size_t i : {size_t{0}, size_t{1}, size_t{2}})
    if (!ctx.has_input(i) || ctx.input(i).dtype != DType::kFloat32) return decline();
  if ((node.opset >= 14 && node.attr_i("layout", 0) != 0) || ctx.has_input(4)) return decline();
  for (size_t i : {size_t{3}, size_t{5}, size_t{6}, size_t{7}})
    if (ctx.has_input(i) && ctx.input(i).dtype != DType::kFloat32) return decline();
  const Shape& xs = ctx.input(0).shape;
  if (xs.size() != 3 || ctx.input(2).shape.size() != 3) return decline();
  auto kern = std::make_unique<LstmKernel>();
  const std::string direction = node.attr_s("direction", "forward");
  kern->dirs = direction == "bidirectional" ? 2 : 1;
  kern->reverse_only = direction == "reverse";
  kern->seq = xs[0];
  kern->batch = xs[1];
  kern->input = xs[2];
  kern->hidden = ctx.input(2).shape[2];
  if (kern->seq < 1 || kern->batch < 1 || kern->input < 1 || kern->hidden < 1) return decline();
  std::vector<std::string> defaults;
  for (int64_t d = 0; d < kern->dirs; ++d) defaults.insert(defaults.end(), {"Sigmoid", "Tanh", "Tanh"});
  auto acts = ref::parse_rnn_activations(node, defaults);
  if (!acts.is_ok()) return decline();  // the reference reports it
  kern->acts = std::move(acts.value());
  kern->clip = ref::recurrent_clip(node);
  bool default_acts = true;
  for (size_t i = 0; i < kern->acts.size(); ++i)
    default_acts = default_acts && kern->acts[i].kind == (i % 3 == 0 ? ref::RnnActivation::kSigmoid : ref::RnnActivation::kTanh);
  if (default_acts && cpu::elementwise_isa_available(cpu::ElementwiseIsa::kAuto)) {
    kern->simd_gates = true;
    kern->core = cpu::elementwise_core(cpu::ElementwiseIsa::kAuto);
  }
  kern->input_forget = node.attr_i("input_forget", 0) == 1;
  kern->threads = std::max(1, ctx.threads);
  kern->isa = cpu::sgemm_best_isa();
  const int64_t g4 = 4 * kern->hidden, rows = kern->seq * kern->batch;
  kern->xg_bytes = align64(static_cast<size_t>(rows * g4) * sizeof(float));
  kern->hg_bytes = align64(static_cast<size_t>(kern->batch * g4) * sizeof(float));
  kern->state_bytes = align64(static_cast<size_t>(kern->batch * kern->hidden) * sizeof(float));
  kern->bias_bytes = align64(static_cast<size_t>(g4) * sizeof(float));
  kern->gemm_bytes = align64(std::max(cpu::sgemm_scratch_bytes(rows, g4, kern->input, kern->threads, kern->isa),
                                      cpu::sgemm_scratch_bytes(kern->batch, g4, kern->hidden, kern->threads, kern->isa)));
  // Pre-pack W_d^T and R_d^T (constants) as sgemm's B operands.
  auto pack = [&](size_t in, int64_t kdim, std::vector<PackedB>& dst) -> Status {
    const auto& t = ctx.input(in).constant;
    if (!t) return Status::ok();
    for (int64_t d = 0; d < kern->dirs; ++d) {
      const size_t floats = cpu::sgemm_packed_b_floats(g4, kdim, kern->isa);
      void* mem = std::aligned_alloc(64, align64(std::max<size_t>(floats, 16) * sizeof(float)));
      if (!mem) return out_of_memory(node.describe() + ": cannot allocate the packed weights");
      PackedB p;
      p.data.reset(static_cast<float*>(mem));
      cpu::sgemm_pack_b(t->data_as<float>() + d * g4 * kdim, kdim, true, kdim, g4, kern->isa, p.data.get());
      dst.push_back(std::move(p));
    }
    return Status::ok();
  };
  TSR_RETURN_IF_ERROR(pack(1, kern->input, kern->packed_w));
  TSR_RETURN_IF_ERROR(pack(2, kern->hidden, kern->packed_r));
  return std::unique_ptr<Kernel>(std::move(kern));
}

}  // namespace tessera::x86
