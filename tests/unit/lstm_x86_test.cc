// The x86 LSTM (backends/cpu/x86/lstm_x86.cc) against the reference LSTM (ref/lstm.cc) on
// random inputs: forward, reverse and bidirectional; batch 1 and 3; one and several steps;
// with and without B, initial_h, initial_c, peepholes, clip, input_forget and other
// activations (the default ones without peepholes take the vectorized gate path); every output; constant (pre-packed) and run-time weights; 1 and 2 threads.
// The reference sums the gate products in double, the kernel in float: tolerance 1e-5
// absolute on outputs of magnitude <= 1 (|h| < 1, |c| grows by at most one per step).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "backends/cpu/thread_pool.h"
#include "backends/cpu/x86/x86_kernels.h"
#include "op_test_util.h"

namespace tessera {
namespace {

using testing::attr_f;
using testing::attr_i;
using testing::attr_s;
using testing::make_tensor;
using testing::OpSpec;
using testing::run_op;
using testing::run_op_with;

Tensor rnd(const Shape& s, std::mt19937& rng, float scale = 0.5f) {
  std::uniform_real_distribution<float> d(-scale, scale);
  int64_t n = 1;
  for (int64_t v : s) n *= v;
  std::vector<float> v(static_cast<size_t>(n));
  for (float& f : v) f = d(rng);
  return make_tensor<float>(s, v);
}

TEST(LstmX86, MatchesReference) {
  ThreadPool pool(2);
  std::mt19937 rng(21);
  struct Case {
    const char* dir;
    int64_t seq, batch, input, hidden;
    bool b, h0, c0, peep, clip, forget, acts;
  } cases[] = {
      {"forward", 1, 1, 16, 32, true, true, true, false, false, false, false},   // Silero VAD-like
      {"forward", 5, 3, 7, 9, true, false, false, false, false, false, false},
      {"reverse", 4, 2, 5, 6, false, true, true, true, false, false, false},
      {"bidirectional", 3, 3, 4, 5, true, true, true, true, true, false, false},
      {"bidirectional", 6, 1, 9, 17, true, false, true, false, false, true, true},
      {"forward", 2, 2, 3, 40, true, true, false, false, true, false, true},
      // The vectorized gates (default activations, no peepholes): Silero VAD's batch of 31
      // chunks, and with clip and input_forget, both directions, odd hidden sizes.
      {"forward", 1, 31, 128, 128, true, true, true, false, false, false, false},
      {"bidirectional", 3, 2, 6, 20, true, true, true, false, true, true, false},
      {"reverse", 4, 3, 5, 33, false, false, true, false, true, false, false},
  };
  for (const Case& c : cases)
    for (int threads : {1, 2})
      for (bool const_w : {false, true}) {
        const int64_t dirs = std::string(c.dir) == "bidirectional" ? 2 : 1;
        Tensor x = rnd({c.seq, c.batch, c.input}, rng), w = rnd({dirs, 4 * c.hidden, c.input}, rng),
               r = rnd({dirs, 4 * c.hidden, c.hidden}, rng), b = rnd({dirs, 8 * c.hidden}, rng),
               h0 = rnd({dirs, c.batch, c.hidden}, rng), c0 = rnd({dirs, c.batch, c.hidden}, rng),
               p = rnd({dirs, 3 * c.hidden}, rng);
        std::vector<const Tensor*> ins = {&x, &w, &r, c.b ? &b : nullptr, nullptr, c.h0 ? &h0 : nullptr,
                                          c.c0 ? &c0 : nullptr, c.peep ? &p : nullptr};
        while (!ins.empty() && !ins.back()) ins.pop_back();
        std::vector<Attribute> attrs = {attr_s("direction", c.dir), attr_i("hidden_size", c.hidden)};
        if (c.clip) attrs.push_back(attr_f("clip", 0.3f));
        if (c.forget) attrs.push_back(attr_i("input_forget", 1));
        if (c.acts) {
          Attribute a;
          a.name = "activations";
          a.type = AttrType::kStrings;
          for (int64_t d = 0; d < dirs; ++d)
            for (const char* s : {"HardSigmoid", "Tanh", "Relu"}) a.strings.push_back(s);
          attrs.push_back(a);
        }
        OpSpec spec{"LSTM", attrs, 14, 3};
        std::vector<int> consts;
        if (const_w) consts = {1, 2, 3};
        const std::string what = std::string(c.dir) + " seq " + std::to_string(c.seq) + " batch " + std::to_string(c.batch) +
                                 " hidden " + std::to_string(c.hidden) + " threads " + std::to_string(threads) +
                                 (const_w ? " const W" : "");
        auto want = run_op(spec, ins, consts);
        ASSERT_TRUE(want.is_ok()) << what << ": " << want.status().to_string();
        auto got = run_op_with(&x86::make_LSTM, spec, ins, consts, threads > 1 ? &pool : nullptr, threads);
        ASSERT_TRUE(got.is_ok()) << what << ": " << got.status().to_string();
        ASSERT_EQ(got.value().size(), 3u);
        for (size_t o = 0; o < 3; ++o) {
          const Tensor& a = got.value()[o];
          const Tensor& e = want.value()[o];
          ASSERT_EQ(a.shape(), e.shape()) << what;
          int bad = 0;
          for (int64_t i = 0; i < a.numel(); ++i)
            if (!(std::fabs(a.data_as<float>()[i] - e.data_as<float>()[i]) <= 1e-5f) && ++bad <= 3)
              ADD_FAILURE() << what << " output " << o << " element " << i << ": " << a.data_as<float>()[i] << " vs "
                            << e.data_as<float>()[i];
        }
      }
}

TEST(LstmX86, SequenceLensRunTheReference) {
  std::mt19937 rng(22);
  Tensor x = rnd({3, 2, 4}, rng), w = rnd({1, 20, 4}, rng), r = rnd({1, 20, 5}, rng);
  Tensor lens = make_tensor<int32_t>({2}, {3, 1});
  auto got = run_op_with(&x86::make_LSTM, OpSpec{"LSTM", {attr_i("hidden_size", 5)}, 14, 3}, {&x, &w, &r, nullptr, &lens});
  EXPECT_FALSE(got.is_ok());
  EXPECT_EQ(got.status().code(), StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace tessera
