// Reference kernel LSTM. Expected values were computed with onnxruntime 1.20 on
// single-node models fed the same inputs: seq() tensors, some halved ("half(seq(...))" =
// seq(...) * 0.5). onnxruntime does not implement layout = 1, so that case ran layout 0 on
// transposed inputs and transposed the outputs back (numpy).
#include <cmath>

#include "ref_a_util.h"

namespace tessera {
namespace {

using testing::attr_f;
using testing::attr_i;
using testing::attr_s;
using testing::expect_error;
using testing::expect_near;
using testing::make_tensor;
using testing::run_ok;
using testing::seq;
using testing::to_vector;

Tensor half(Tensor t) {
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] *= 0.5f;
  return t;
}

Attribute attr_strings(const std::string& n, std::vector<std::string> v) {
  Attribute a;
  a.name = n;
  a.type = AttrType::kStrings;
  a.strings = std::move(v);
  return a;
}

TEST(RefLSTM, ForwardBatch1WithBiasAndInitialState) {
  const int64_t S = 5, N = 1, I = 3, H = 4;
  Tensor x = seq({S, N, I}), w = half(seq({1, 4 * H, I}, 5, 13)), r = half(seq({1, 4 * H, H}, 3, 7));
  Tensor b = half(seq({1, 8 * H}, 2, 9)), h0 = seq({1, N, H}, 3, 5), c0 = seq({1, N, H}, 2, 7);
  auto out = run_ok({"LSTM", {attr_i("hidden_size", H)}, 7, 3}, {&x, &w, &r, &b, nullptr, &h0, &c0});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].shape(), (Shape{S, 1, N, H}));
  EXPECT_EQ(out[1].shape(), (Shape{1, N, H}));
  // ort(LSTM, opset 7, hidden_size=4), outputs Y, Y_h, Y_c
  expect_near(to_vector<float>(out[0]),
              {-0.2768208f, 0.07399779f, 0.103238f, 0.2859358f, -0.2712802f, -0.0005744123f, -0.1280378f, 0.09020589f,
               -0.1475604f, -0.07376862f, -0.3377007f, 0.0955934f, -0.0730342f, -0.09839275f, -0.4312787f, 0.09729835f,
               0.187975f, 0.2666929f, -0.2156855f, 0.03466509f},
              1e-5f, 1e-6f);
  expect_near(to_vector<float>(out[1]), {0.187975f, 0.2666929f, -0.2156855f, 0.03466509f}, 1e-5f, 1e-6f);
  expect_near(to_vector<float>(out[2]), {0.2894693f, 0.440087f, -0.2729492f, 0.06701425f}, 1e-5f, 1e-6f);
}

TEST(RefLSTM, BidirectionalPeepholesSequenceLens) {
  const int64_t S = 3, N = 2, I = 2, H = 3;
  Tensor x = seq({S, N, I}), w = half(seq({2, 4 * H, I}, 5, 13)), r = half(seq({2, 4 * H, H}, 3, 7));
  Tensor b = half(seq({2, 8 * H}, 2, 9)), p = half(seq({2, 3 * H}, 4, 11));
  Tensor lens = make_tensor<int32_t>({N}, {3, 2});
  auto out = run_ok({"LSTM", {attr_i("hidden_size", H), attr_s("direction", "bidirectional")}, 7, 3},
                    {&x, &w, &r, &b, &lens, nullptr, nullptr, &p});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].shape(), (Shape{S, 2, N, H}));
  // ort(LSTM, opset 7, hidden_size=3, direction=bidirectional), sequence_lens [3, 2]
  expect_near(to_vector<float>(out[0]),
              {-0.3636161f, -0.1348948f, -0.007832691f, -0.2462016f, -0.1520316f, 0.08011521f, 0.004803169f,
               -0.3750345f, 0.0948137f, -0.09428225f, -0.1829106f, 0.04249866f, -0.1021035f, 0.2095096f, -0.112983f,
               0.003354493f, 0.1240282f, -0.0266972f, -0.06064953f, -0.1250689f, 0.144413f, -0.1019061f, 0.08334272f,
               0.09553745f, -0.3706851f, -0.005996854f, -0.01683357f, 0.f, 0.f, 0.f, -0.008279676f, -0.2955496f,
               -0.09526118f, 0.f, 0.f, 0.f},
              1e-5f, 1e-6f);
  expect_near(to_vector<float>(out[1]), {-0.3706851f, -0.005996854f, -0.01683357f, 0.003354493f, 0.1240282f, -0.0266972f,
                                         0.004803169f, -0.3750345f, 0.0948137f, -0.09428225f, -0.1829106f, 0.04249866f},
              1e-5f, 1e-6f);
  expect_near(to_vector<float>(out[2]), {-0.5873469f, -0.007560849f, -0.05594442f, 0.007378653f, 0.2516992f, -0.04232994f,
                                         0.01007111f, -0.6858562f, 0.1627944f, -0.1443621f, -0.2814745f, 0.09129035f},
              1e-5f, 1e-6f);
}

TEST(RefLSTM, ReverseClipInputForgetNoBias) {
  const int64_t S = 4, N = 1, I = 3, H = 2;
  Tensor x = seq({S, N, I}), w = seq({1, 4 * H, I}, 5, 13), r = seq({1, 4 * H, H}, 3, 7);
  auto out = run_ok({"LSTM", {attr_i("hidden_size", H), attr_s("direction", "reverse"), attr_f("clip", 0.75f),
                              attr_i("input_forget", 1)}, 7, 3},
                    {&x, &w, &r});
  ASSERT_EQ(out.size(), 3u);
  // ort(LSTM, opset 7, hidden_size=2, direction=reverse, clip=0.75, input_forget=1)
  expect_near(to_vector<float>(out[0]),
              {-0.2041027f, 0.192526f, 0.2410122f, -0.2787736f, 0.170579f, -0.2237275f, 0.06575235f, -0.1309191f}, 1e-5f, 1e-6f);
  expect_near(to_vector<float>(out[1]), {-0.2041027f, 0.192526f}, 1e-5f, 1e-6f);
  expect_near(to_vector<float>(out[2]), {-0.3100845f, 0.2914501f}, 1e-5f, 1e-6f);
}

TEST(RefLSTM, Layout1BatchMajor) {
  const int64_t S = 3, N = 2, I = 2, H = 2;
  Tensor x = seq({N, S, I}), w = half(seq({1, 4 * H, I}, 5, 13)), r = half(seq({1, 4 * H, H}, 3, 7));
  Tensor b = half(seq({1, 8 * H}, 2, 9)), h0 = seq({N, 1, H}, 3, 5), c0 = seq({N, 1, H}, 2, 7);
  auto out = run_ok({"LSTM", {attr_i("hidden_size", H), attr_i("layout", 1)}, 14, 3}, {&x, &w, &r, &b, nullptr, &h0, &c0});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].shape(), (Shape{N, S, 1, H}));
  EXPECT_EQ(out[1].shape(), (Shape{N, 1, H}));
  // ort(LSTM, opset 14, layout 0) on transposed inputs, outputs transposed back
  expect_near(to_vector<float>(out[0]),
              {-0.3690884f, -0.005901688f, -0.5554932f, 0.06611007f, -0.1813604f, -0.005525843f, 0.04433468f, 0.2134081f,
               -0.2277608f, 0.1592858f, -0.0178945f, -0.01837111f},
              1e-5f, 1e-6f);
  expect_near(to_vector<float>(out[1]), {-0.1813604f, -0.005525843f, -0.0178945f, -0.01837111f}, 1e-5f, 1e-6f);
  expect_near(to_vector<float>(out[2]), {-0.7651275f, -0.01219507f, -0.08478376f, -0.04185401f}, 1e-5f, 1e-6f);
}

TEST(RefLSTM, CustomActivations) {
  const int64_t S = 2, N = 1, I = 2, H = 2;
  Tensor x = seq({S, N, I}), w = seq({1, 4 * H, I}, 5, 13), r = seq({1, 4 * H, H}, 3, 7);
  auto out = run_ok({"LSTM", {attr_i("hidden_size", H), attr_strings("activations", {"HardSigmoid", "Tanh", "Softsign"}),
                              testing::attr_floats("activation_alpha", {0.3f}), testing::attr_floats("activation_beta", {0.6f})},
                     7, 3},
                    {&x, &w, &r});
  ASSERT_EQ(out.size(), 3u);
  // ort(LSTM, opset 7, activations=[HardSigmoid, Tanh, Softsign], activation_alpha=[0.3], activation_beta=[0.6])
  expect_near(to_vector<float>(out[0]), {-0.3422514f, 0.04312035f, -0.5963098f, 0.007509761f}, 1e-5f, 1e-6f);
  expect_near(to_vector<float>(out[2]), {-1.477147f, 0.008222042f}, 1e-5f, 1e-6f);
}

TEST(RefLSTM, SizeOneHandComputed) {
  // One step, one unit, all weights 1, no bias, zero state: pre = x for every gate, so
  // c = sigmoid(x) * tanh(x), h = sigmoid(x) * tanh(c) (hand-computed with x = 0.5).
  Tensor x = make_tensor<float>({1, 1, 1}, {0.5f});
  Tensor w = make_tensor<float>({1, 4, 1}, {1.f, 1.f, 1.f, 1.f}), r = make_tensor<float>({1, 4, 1}, {1.f, 1.f, 1.f, 1.f});
  testing::OpSpec spec{"LSTM", {attr_i("hidden_size", 1)}, 7, 3};
  auto out = run_ok(spec, {&x, &w, &r});
  ASSERT_EQ(out.size(), 3u);
  const float s = 1.f / (1.f + std::exp(-0.5f)), c = s * std::tanh(0.5f), h = s * std::tanh(c);
  expect_near(to_vector<float>(out[1]), {h});
  expect_near(to_vector<float>(out[2]), {c});
}

TEST(RefLSTM, OmittedYKeepsYhAndYc) {
  // The silero-style use: only Y_h and Y_c are consumed; Y is omitted (output index -1).
  const int64_t S = 5, N = 1, I = 3, H = 4;
  Tensor x = seq({S, N, I}), w = half(seq({1, 4 * H, I}, 5, 13)), r = half(seq({1, 4 * H, H}, 3, 7));
  Tensor b = half(seq({1, 8 * H}, 2, 9)), h0 = seq({1, N, H}, 3, 5), c0 = seq({1, N, H}, 2, 7);
  auto out = testing::run_op_with_omitted_outputs({"LSTM", {attr_i("hidden_size", H)}, 7},
                                                  {&x, &w, &r, &b, nullptr, &h0, &c0}, {false, true, true});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  // Same as ForwardBatch1WithBiasAndInitialState's Y_h and Y_c (onnxruntime values).
  expect_near(to_vector<float>(out.value()[1]), {0.187975f, 0.2666929f, -0.2156855f, 0.03466509f}, 1e-5f, 1e-6f);
  expect_near(to_vector<float>(out.value()[2]), {0.2894693f, 0.440087f, -0.2729492f, 0.06701425f}, 1e-5f, 1e-6f);
  auto only_y = testing::run_op_with_omitted_outputs({"LSTM", {attr_i("hidden_size", H)}, 7},
                                                     {&x, &w, &r, &b, nullptr, &h0, &c0}, {true, false, false});
  ASSERT_TRUE(only_y.is_ok()) << only_y.status().to_string();
  EXPECT_NEAR(to_vector<float>(only_y.value()[0]).back(), 0.03466509f, 1e-6f);
}

TEST(RefLSTM, Errors) {
  Tensor x = seq({2, 1, 3}), w = seq({1, 8, 3}), r = seq({1, 8, 2});
  expect_error({"LSTM", {attr_i("hidden_size", 3)}, 7}, {&x, &w, &r}, StatusCode::kInvalidArgument, "hidden_size");
  Tensor w_bad = seq({1, 8, 4});
  expect_error({"LSTM", {}, 7}, {&x, &w_bad, &r}, StatusCode::kInvalidArgument, "W");
  expect_error({"LSTM", {attr_s("direction", "sideways")}, 7}, {&x, &w, &r}, StatusCode::kInvalidArgument, "direction");
  expect_error({"LSTM", {attr_s("direction", "bidirectional")}, 7}, {&x, &w, &r}, StatusCode::kInvalidArgument, "W");
  expect_error({"LSTM", {attr_strings("activations", {"Sigmoid", "Tanh", "Gelu"})}, 7}, {&x, &w, &r},
               StatusCode::kUnimplemented, "Gelu");
  expect_error({"LSTM", {attr_strings("activations", {"Sigmoid"})}, 7}, {&x, &w, &r}, StatusCode::kInvalidArgument,
               "activations");
  Tensor lens = make_tensor<int32_t>({1}, {5});
  expect_error({"LSTM", {}, 7}, {&x, &w, &r, nullptr, &lens}, StatusCode::kInvalidArgument, "sequence_lens");
  Tensor h0 = seq({1, 2, 2});
  expect_error({"LSTM", {}, 7}, {&x, &w, &r, nullptr, nullptr, &h0}, StatusCode::kInvalidArgument, "initial_h");
}

}  // namespace
}  // namespace tessera
