// Reference kernels GRU and RNN. Expected values were computed with onnxruntime 1.20 on
// single-node models fed seq() tensors (ref_a_util.h), some halved ("half(seq(...))").
// onnxruntime does not implement layout = 1, so those cases ran layout 0 on the same
// (seq-major) data and the outputs were transposed (numpy); here the inputs are transposed.
#include "ref_a_util.h"

namespace tessera {
namespace {

using testing::attr_f;
using testing::attr_floats;
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

// Direction d's slice of a [2, ...] tensor, as a [1, ...] tensor.
Tensor dir(const Tensor& t, int64_t d) {
  Shape s = t.shape();
  s[0] = 1;
  const int64_t n = t.numel() / 2;
  std::vector<float> v(t.data_as<float>() + d * n, t.data_as<float>() + (d + 1) * n);
  return make_tensor<float>(s, v);
}

// [A, B, C] -> [B, A, C].
Tensor swap01(const Tensor& t) {
  const int64_t A = t.dim(0), B = t.dim(1), C = t.dim(2);
  std::vector<float> v(static_cast<size_t>(t.numel()));
  for (int64_t a = 0; a < A; ++a)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t c = 0; c < C; ++c) v[(b * A + a) * C + c] = t.data_as<float>()[(a * B + b) * C + c];
  return make_tensor<float>({B, A, C}, v);
}

Attribute attr_strings(const std::string& n, std::vector<std::string> v) {
  Attribute a;
  a.name = n;
  a.type = AttrType::kStrings;
  a.strings = std::move(v);
  return a;
}

constexpr int64_t S = 4, N = 2, I = 3, H = 3;

TEST(RefGRU, BidirectionalSequenceLensInitialState) {
  Tensor x = seq({S, N, I}), w = half(seq({2, 3 * H, I}, 5, 13)), r = half(seq({2, 3 * H, H}, 3, 7));
  Tensor b = half(seq({2, 6 * H}, 2, 9)), h0 = seq({2, N, H}, 3, 5), lens = make_tensor<int32_t>({N}, {4, 2});
  auto out = run_ok({"GRU", {attr_i("hidden_size", H), attr_s("direction", "bidirectional")}, 7, 2}, {&x, &w, &r, &b, &lens, &h0});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape(), (Shape{S, 2, N, H}));
  // ort(GRU, opset 7, hidden_size 3, bidirectional), sequence_lens [4, 2]
  expect_near(to_vector<float>(out[0]),
              {-0.7428057f, 0.4648528f, 0.1592385f, 0.3939771f, -0.6973141f, 0.01680887f, 0.1864123f, 0.3698215f, 0.3217755f,
               0.0228346f, 0.3126838f, 0.6346068f, -0.1661874f, -0.4690071f, 0.4868817f, 0.1427838f, -0.7912856f, 0.2650644f,
               -0.2419117f, 0.1133784f, 0.7309398f, 0.106911f, 0.0798718f, 0.5153027f, 0.3440535f, 0.1307238f, -0.2643827f,
               0.f, 0.f, 0.f, -0.869577f, -0.4349841f, 0.716813f, 0.f, 0.f, 0.f, 0.2917697f, 0.3409281f, -0.09373485f, 0.f,
               0.f, 0.f, -0.679446f, -0.4447665f, 0.6720256f, 0.f, 0.f, 0.f});
  expect_near(to_vector<float>(out[1]), {0.2917697f, 0.3409281f, -0.09373485f, 0.1427838f, -0.7912856f, 0.2650644f, 0.1864123f,
                                         0.3698215f, 0.3217755f, 0.0228346f, 0.3126838f, 0.6346068f});
}

TEST(RefGRU, LinearBeforeResetClip) {
  Tensor x = seq({S, N, I}), w = dir(half(seq({2, 3 * H, I}, 5, 13)), 0), r = dir(half(seq({2, 3 * H, H}, 3, 7)), 0);
  Tensor b = dir(half(seq({2, 6 * H}, 2, 9)), 0);
  auto out = run_ok({"GRU", {attr_i("hidden_size", H), attr_i("linear_before_reset", 1), attr_f("clip", 0.6f)}, 7, 2},
                    {&x, &w, &r, &b});
  ASSERT_EQ(out.size(), 2u);
  // ort(GRU, opset 7, hidden_size 3, linear_before_reset 1, clip 0.6)
  expect_near(to_vector<float>(out[0]),
              {-0.3182914f, 0.2936255f, 0.1903002f, 0.238681f, -0.3467495f, 0.235133f, -0.05747182f, -0.2427051f,
               0.3442432f, 0.1258514f, -0.469618f, 0.3421153f, 0.3177193f, 0.1500092f, -0.2247691f, 0.3830262f,
               0.08074437f, -0.2215496f, 0.3358236f, 0.3234091f, -0.2260219f, 0.2358724f, 0.2952662f, -0.09814221f});
  expect_near(to_vector<float>(out[1]), {0.3358236f, 0.3234091f, -0.2260219f, 0.2358724f, 0.2952662f, -0.09814221f});
}

TEST(RefGRU, ReverseCustomActivations) {
  Tensor x = seq({S, N, I}), w = dir(half(seq({2, 3 * H, I}, 5, 13)), 1), r = dir(half(seq({2, 3 * H, H}, 3, 7)), 1);
  auto out = run_ok({"GRU", {attr_i("hidden_size", H), attr_s("direction", "reverse"),
                             attr_strings("activations", {"HardSigmoid", "LeakyRelu"}),
                             attr_floats("activation_alpha", {0.3f, 0.1f}), attr_floats("activation_beta", {0.6f})}, 7, 2},
                    {&x, &w, &r});
  ASSERT_EQ(out.size(), 2u);
  // ort(GRU, opset 7, reverse, activations [HardSigmoid, LeakyRelu], alpha [0.3, 0.1], beta [0.6])
  expect_near(to_vector<float>(out[0]),
              {0.1901599f, 0.1729449f, 0.04522403f, 0.117419f, 0.130135f, 0.3062191f, 0.03610893f, 0.05382109f,
               0.2487583f, 0.07248079f, 0.04789883f, 0.3302661f, -0.09431606f, -0.07065597f, 0.1976193f, -0.08277945f,
               -0.07827283f, 0.2481839f, -0.05589844f, -0.06173828f, 0.1394531f, -0.04694336f, -0.07053711f, 0.1574218f});
  expect_near(to_vector<float>(out[1]), {0.1901599f, 0.1729449f, 0.04522403f, 0.117419f, 0.130135f, 0.3062191f});
}

TEST(RefGRU, Layout1BatchMajor) {
  Tensor x = swap01(seq({S, N, I})), w = dir(half(seq({2, 3 * H, I}, 5, 13)), 0), r = dir(half(seq({2, 3 * H, H}, 3, 7)), 0);
  Tensor b = dir(half(seq({2, 6 * H}, 2, 9)), 0), h0 = swap01(dir(seq({2, N, H}, 3, 5), 0));
  auto out = run_ok({"GRU", {attr_i("hidden_size", H), attr_i("layout", 1)}, 14, 2}, {&x, &w, &r, &b, nullptr, &h0});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape(), (Shape{N, S, 1, H}));
  EXPECT_EQ(out[1].shape(), (Shape{N, 1, H}));
  // ort(GRU, opset 14, layout 0) on the seq-major data, outputs transposed to layout 1
  expect_near(to_vector<float>(out[0]),
              {-0.7428057f, 0.4648528f, 0.1592385f, -0.1661874f, -0.4690071f, 0.4868817f, 0.3440535f, 0.1307238f,
               -0.2643827f, 0.2917697f, 0.3409281f, -0.09373485f, 0.3939771f, -0.6973141f, 0.01680887f, 0.1427838f,
               -0.7912856f, 0.2650644f, 0.4287298f, 0.004836291f, -0.1974634f, 0.2094429f, 0.2991417f, 0.03653307f});
  expect_near(to_vector<float>(out[1]), {0.2917697f, 0.3409281f, -0.09373485f, 0.2094429f, 0.2991417f, 0.03653307f});
}

TEST(RefRNN, BidirectionalSequenceLensInitialState) {
  Tensor x = seq({S, N, I}), w = half(seq({2, H, I}, 5, 13)), r = half(seq({2, H, H}, 3, 7));
  Tensor b = half(seq({2, 2 * H}, 2, 9)), h0 = seq({2, N, H}, 3, 5), lens = make_tensor<int32_t>({N}, {4, 2});
  auto out = run_ok({"RNN", {attr_i("hidden_size", H), attr_s("direction", "bidirectional")}, 7, 2}, {&x, &w, &r, &b, &lens, &h0});
  ASSERT_EQ(out.size(), 2u);
  // ort(RNN, opset 7, hidden_size 3, bidirectional), sequence_lens [4, 2]
  expect_near(to_vector<float>(out[0]),
              {0.4371887f, 0.6351489f, 0.2740616f, -0.9617519f, -0.6877902f, -0.0624187f, -0.1454293f, -0.6946208f,
               -0.5088812f, -0.1704066f, -0.002595842f, 0.67252f, -0.9156103f, -0.7462227f, -0.1814989f, -0.7890842f,
               -0.8109761f, 0.2568214f, -0.4026353f, 0.2113324f, 0.6237481f, -0.1853331f, 0.2449187f, 0.4621172f,
               0.3255045f, 0.6901648f, -0.8625876f, 0.f, 0.f, 0.f, -0.9202152f, 0.2088386f, 0.7775813f, 0.f, 0.f, 0.f,
               -0.1930801f, 0.775906f, -0.8930666f, 0.f, 0.f, 0.f, -0.8568176f, 0.2449187f, 0.6709671f, 0.f, 0.f, 0.f});
  expect_near(to_vector<float>(out[1]), {-0.1930801f, 0.775906f, -0.8930666f, -0.7890842f, -0.8109761f, 0.2568214f,
                                         -0.1454293f, -0.6946208f, -0.5088812f, -0.1704066f, -0.002595842f, 0.67252f});
}

TEST(RefRNN, ReluClipAndLayout1) {
  Tensor x = seq({S, N, I}), w = dir(half(seq({2, H, I}, 5, 13)), 0), r = dir(half(seq({2, H, H}, 3, 7)), 0);
  auto out = run_ok({"RNN", {attr_i("hidden_size", H), attr_strings("activations", {"Relu"}), attr_f("clip", 0.5f)}, 7, 2},
                    {&x, &w, &r});
  ASSERT_EQ(out.size(), 2u);
  // ort(RNN, opset 7, activations [Relu], clip 0.5)
  expect_near(to_vector<float>(out[0]), {0.5f, 0.3125f, 0.5f, 0.f, 0.f, 0.25f, 0.f, 0.f, 0.3203125f, 0.f, 0.f, 0.5f,
                                         0.4326172f, 0.5f, 0.f, 0.5f, 0.40625f, 0.f, 0.3377686f, 0.5f, 0.f, 0.40625f,
                                         0.3828125f, 0.f});
  Tensor xl = swap01(x), b = dir(half(seq({2, 2 * H}, 2, 9)), 0), h0 = swap01(dir(seq({2, N, H}, 3, 5), 0));
  auto o1 = run_ok({"RNN", {attr_i("hidden_size", H), attr_i("layout", 1)}, 14, 2}, {&xl, &w, &r, &b, nullptr, &h0});
  ASSERT_EQ(o1.size(), 2u);
  // ort(RNN, opset 14, layout 0) on the seq-major data, outputs transposed to layout 1
  expect_near(to_vector<float>(o1[0]),
              {0.4371887f, 0.6351489f, 0.2740616f, -0.9156103f, -0.7462227f, -0.1814989f, 0.3255045f, 0.6901648f,
               -0.8625876f, -0.1930801f, 0.775906f, -0.8930666f, -0.9617519f, -0.6877902f, -0.0624187f, -0.7890842f,
               -0.8109761f, 0.2568214f, 0.4993685f, 0.5461906f, -0.8138306f, -0.1476132f, 0.7020514f, -0.8443541f});
  expect_near(to_vector<float>(o1[1]), {-0.1930801f, 0.775906f, -0.8930666f, -0.1476132f, 0.7020514f, -0.8443541f});
}

TEST(RefGRURNN, Errors) {
  Tensor x = seq({2, 1, 3}), w = seq({1, 6, 3}), r = seq({1, 6, 2});
  expect_error({"GRU", {attr_i("hidden_size", 3)}, 7}, {&x, &w, &r}, StatusCode::kInvalidArgument, "hidden_size");
  expect_error({"GRU", {attr_i("linear_before_reset", 2)}, 7}, {&x, &w, &r}, StatusCode::kInvalidArgument, "linear_before_reset");
  expect_error({"GRU", {attr_s("direction", "bidirectional")}, 7}, {&x, &w, &r}, StatusCode::kInvalidArgument, "W");
  expect_error({"GRU", {attr_strings("activations", {"Sigmoid", "Gelu"})}, 7}, {&x, &w, &r}, StatusCode::kUnimplemented, "Gelu");
  expect_error({"GRU", {attr_strings("activations", {"Sigmoid"})}, 7}, {&x, &w, &r}, StatusCode::kInvalidArgument, "activations");
  Tensor lens = make_tensor<int32_t>({1}, {5});
  expect_error({"GRU", {}, 7}, {&x, &w, &r, nullptr, &lens}, StatusCode::kInvalidArgument, "sequence_lens");
  Tensor rw = seq({1, 2, 3}), rr = seq({1, 2, 2}), h0 = seq({1, 2, 2});
  expect_error({"RNN", {}, 7}, {&x, &rw, &rr, nullptr, nullptr, &h0}, StatusCode::kInvalidArgument, "initial_h");
  expect_error({"RNN", {attr_i("layout", 2)}, 14}, {&x, &rw, &rr}, StatusCode::kInvalidArgument, "layout");
  Tensor b_bad = seq({1, 3});
  expect_error({"RNN", {}, 7}, {&x, &rw, &rr, &b_bad}, StatusCode::kInvalidArgument, "B");
}

}  // namespace
}  // namespace tessera
