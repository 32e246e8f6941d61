// DeformConv reference kernel (backends/cpu/ref/deform_conv.cc) against Conv (zero offsets),
// hand-computed bilinear samples, offset groups, mask and bias, 1-D and 3-D, and bad inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "op_test_util.h"
#include "tessera/half.h"

namespace tessera {
namespace {

using testing::attr_i;
using testing::attr_ints;
using testing::attr_s;
using testing::make_tensor;
using testing::run1;
using testing::run_op;
using testing::to_vector;

std::vector<float> random_values(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& f : v) f = u(rng);
  return v;
}

// With all offsets 0 and no mask, DeformConv samples the integer grid and is Conv.
TEST(RefDeformConv, ZeroOffsetsAreConv) {
  struct Case {
    Shape x, w;
    std::vector<Attribute> attrs;
  };
  const std::vector<Case> cases = {
      {{1, 1, 3, 3}, {1, 1, 2, 2}, {}},
      {{2, 4, 5, 7}, {6, 2, 3, 2},
       {attr_i("group", 2), attr_ints("pads", {1, 0, 2, 1}), attr_ints("strides", {2, 1}), attr_ints("dilations", {1, 2})}},
      {{1, 3, 6}, {2, 3, 3}, {attr_ints("pads", {2, 1}), attr_ints("strides", {2})}},
      {{1, 2, 3, 4, 3}, {2, 2, 2, 2, 2}, {attr_ints("pads", {1, 0, 1, 0, 1, 0})}},
  };
  uint32_t seed = 1;
  for (const Case& c : cases) {
    int64_t xn = 1, wn = 1;
    for (int64_t d : c.x) xn *= d;
    for (int64_t d : c.w) wn *= d;
    Tensor x = make_tensor<float>(c.x, random_values(static_cast<size_t>(xn), seed++));
    Tensor w = make_tensor<float>(c.w, random_values(static_cast<size_t>(wn), seed++));
    Tensor b = make_tensor<float>({c.w[0]}, random_values(static_cast<size_t>(c.w[0]), seed++));
    Tensor want = run1({"Conv", c.attrs, 17}, {&x, &w, &b});
    const Shape ys = want.shape();
    int64_t taps = 1;
    for (size_t i = 2; i < c.w.size(); ++i) taps *= c.w[i];
    Shape os = {ys[0], taps * static_cast<int64_t>(c.x.size() - 2)};
    os.insert(os.end(), ys.begin() + 2, ys.end());
    int64_t on = 1;
    for (int64_t d : os) on *= d;
    Tensor off = make_tensor<float>(os, std::vector<float>(static_cast<size_t>(on), 0.0f));
    Tensor got = run1({"DeformConv", c.attrs, 19}, {&x, &w, &off, &b});
    ASSERT_EQ(got.shape(), ys) << shape_to_string(c.x);
    testing::expect_near(to_vector<float>(got), to_vector<float>(want), 1e-5f, 1e-5f);
  }
}

// X[y][x] = 4y + x on a 3x4 plane, 1x1 kernel of weight 1: Y samples X at o + offset.
// Bilinear interpolation of a linear function is exact inside; corners outside read 0.
TEST(RefDeformConv, BilinearSamplesAndZeroOutside) {
  std::vector<float> xv(12);
  for (int i = 0; i < 12; ++i) xv[i] = static_cast<float>((i / 4) * 4 + i % 4);
  Tensor x = make_tensor<float>({1, 1, 3, 4}, xv);
  Tensor w = make_tensor<float>({1, 1, 1, 1}, {1.0f});
  // dy = 0.5 and dx = 0.25 everywhere: inside, Y = 4 (y + 0.5) + (x + 0.25).
  std::vector<float> ov(2 * 12);
  for (int i = 0; i < 12; ++i) {
    ov[i] = 0.5f;
    ov[12 + i] = 0.25f;
  }
  Tensor off = make_tensor<float>({1, 2, 3, 4}, ov);
  std::vector<float> y = to_vector<float>(run1({"DeformConv", {}, 19}, {&x, &w, &off}));
  // Row 0, col 0: 4 * 0.5 + 0.25 = 2.25. Last column (x = 3.25): corners x = 3 (weight
  // 0.75) and x = 4 (outside, 0). Last row (y = 2.5): rows 2 (weight 0.5) and 3 (outside).
  EXPECT_NEAR(y[0], 2.25f, 1e-6f);
  EXPECT_NEAR(y[1 * 4 + 1], 4 * 1.5f + 1.25f, 1e-6f);
  EXPECT_NEAR(y[0 * 4 + 3], 0.75f * (0.5f * 3 + 0.5f * 7), 1e-6f);
  EXPECT_NEAR(y[2 * 4 + 0], 0.5f * (0.75f * 8 + 0.25f * 9), 1e-6f);
  // Offsets that move every sample to y <= -1 or beyond the plane give 0.
  std::vector<float> far(24, 0.0f);
  for (int i = 0; i < 12; ++i) far[i] = (i % 2) ? -3.0f : 5.0f;
  Tensor off_far = make_tensor<float>({1, 2, 3, 4}, far);
  for (float v : to_vector<float>(run1({"DeformConv", {}, 19}, {&x, &w, &off_far}))) EXPECT_EQ(v, 0.0f);
}

// Two offset groups over 2 input channels (one each): channel 0 moves right by 1, channel 1
// moves down by 1; mask scales taps and B adds per output channel.
TEST(RefDeformConv, OffsetGroupsMaskAndBias) {
  Tensor x = make_tensor<double>({1, 2, 2, 2}, {1, 2, 3, 4, 10, 20, 30, 40});
  Tensor w = make_tensor<double>({2, 2, 1, 1}, {1, 1, 1, -1});
  // offset [1, offset_group 2 * 1 tap * 2 coords, 2, 2]: group 0 (dy, dx) = (0, 1), group 1 (1, 0).
  Tensor off = make_tensor<double>({1, 4, 2, 2}, {0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0});
  // mask [1, 2, 2, 2]: group 0 halves its taps, group 1 keeps them.
  Tensor mask = make_tensor<double>({1, 2, 2, 2}, {0.5, 0.5, 0.5, 0.5, 1, 1, 1, 1});
  Tensor b = make_tensor<double>({2}, {100, 200});
  Tensor y = run1({"DeformConv", {attr_i("offset_group", 2)}, 19}, {&x, &w, &off, &b, &mask});
  // Channel 0 sampled at x + 1: [[2, 0], [4, 0]], halved: [[1, 0], [2, 0]].
  // Channel 1 sampled at y + 1: [[30, 40], [0, 0]].
  EXPECT_EQ(to_vector<double>(y), (std::vector<double>{131, 140, 102, 100, 200 + 1 - 30, 200 - 40, 202, 200}));
  // The same without mask and bias.
  Tensor y2 = run1({"DeformConv", {attr_i("offset_group", 2)}, 19}, {&x, &w, &off});
  EXPECT_EQ(to_vector<double>(y2), (std::vector<double>{32, 40, 4, 0, 2 - 30, -40, 4, 0}));
}

// 1-D: kernel 2 with dilation 2 over [1, 2, 4, 8, 16]; offset 0.5 on tap 0 and -0.25 on tap 1.
TEST(RefDeformConv, OneDimensionalDilated) {
  Tensor x = make_tensor<float>({1, 1, 5}, {1, 2, 4, 8, 16});
  Tensor w = make_tensor<float>({1, 1, 2}, {1, 10});
  // Outputs: (5 - 3) + 1 = 3 positions; offset [1, 2 taps * 1 coord, 3].
  Tensor off = make_tensor<float>({1, 2, 3}, {0.5f, 0.5f, 0.5f, -0.25f, -0.25f, -0.25f});
  std::vector<float> y = to_vector<float>(run1({"DeformConv", {attr_ints("dilations", {2})}, 19}, {&x, &w, &off}));
  // o: tap 0 at o + 0.5, tap 1 at o + 2 - 0.25.
  auto lerp = [](float a, float b, float t) { return a + (b - a) * t; };
  const float xs[5] = {1, 2, 4, 8, 16};
  ASSERT_EQ(y.size(), 3u);
  for (int o = 0; o < 3; ++o) {
    const float want = lerp(xs[o], xs[o + 1], 0.5f) + 10 * lerp(xs[o + 1], xs[o + 2], 0.75f);
    EXPECT_NEAR(y[o], want, 1e-5f) << o;
  }
}

TEST(RefDeformConv, Float16ComputesInDoubleAndRoundsOnce) {
  auto h = [](std::vector<float> v) {
    std::vector<uint16_t> out;
    for (float f : v) out.push_back(float_to_half(f));
    return out;
  };
  auto make_half = [&](const Shape& s, std::vector<float> v) {
    Tensor t = std::move(Tensor::allocate(DType::kFloat16, s)).value();
    std::vector<uint16_t> bits = h(std::move(v));
    std::memcpy(t.data(), bits.data(), bits.size() * 2);
    return t;
  };
  Tensor x = make_half({1, 1, 1, 2}, {1.0f, 3.0f});
  Tensor w = make_half({1, 1, 1, 1}, {2.0f});
  Tensor off = make_half({1, 2, 1, 2}, {0, 0, 0.5f, 0.5f});
  Tensor y = run1({"DeformConv", {}, 19}, {&x, &w, &off});
  ASSERT_EQ(y.dtype(), DType::kFloat16);
  // (1 + 3) / 2 * 2 = 4; the second sample at x = 1.5 keeps half of X[1]: 1.5 * 2 = 3.
  EXPECT_EQ(half_to_float(y.data_as<uint16_t>()[0]), 4.0f);
  EXPECT_EQ(half_to_float(y.data_as<uint16_t>()[1]), 3.0f);
}

TEST(RefDeformConv, BadInputsAreErrorsNamingTheNode) {
  Tensor x = make_tensor<float>({1, 2, 3, 3}, std::vector<float>(18, 1.0f));
  Tensor w = make_tensor<float>({2, 2, 2, 2}, std::vector<float>(16, 1.0f));
  Tensor off = make_tensor<float>({1, 8, 2, 2}, std::vector<float>(32, 0.0f));
  auto expect_error = [](const Result<std::vector<Tensor>>& r, const char* what, const char* needle) {
    ASSERT_FALSE(r.is_ok()) << what;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().to_string();
    EXPECT_NE(r.status().to_string().find(needle), std::string::npos) << r.status().to_string();
  };
  ASSERT_TRUE(run_op({"DeformConv", {}, 19}, {&x, &w, &off}).is_ok());
  Tensor off_bad = make_tensor<float>({1, 8, 2, 3}, std::vector<float>(48, 0.0f));
  expect_error(run_op({"DeformConv", {}, 19}, {&x, &w, &off_bad}), "offset spatial shape", "test_DeformConv");
  expect_error(run_op({"DeformConv", {attr_i("offset_group", 2)}, 19}, {&x, &w, &off}), "offset channels", "offset");
  expect_error(run_op({"DeformConv", {attr_i("offset_group", 3)}, 19}, {&x, &w, &off}), "offset_group", "offset_group");
  expect_error(run_op({"DeformConv", {attr_i("offset_group", 0)}, 19}, {&x, &w, &off}), "offset_group 0", "offset_group");
  expect_error(run_op({"DeformConv", {attr_i("group", 2)}, 19}, {&x, &w, &off}), "group", "group");
  expect_error(run_op({"DeformConv", {attr_s("auto_pad", "SAME_UPPER")}, 19}, {&x, &w, &off}), "auto_pad", "auto_pad");
  expect_error(run_op({"DeformConv", {attr_ints("strides", {0, 1})}, 19}, {&x, &w, &off}), "strides", "strides");
  Tensor mask_bad = make_tensor<float>({1, 8, 2, 2}, std::vector<float>(32, 1.0f));
  expect_error(run_op({"DeformConv", {}, 19}, {&x, &w, &off, nullptr, &mask_bad}), "mask shape", "mask");
  Tensor b_bad = make_tensor<float>({3}, {0, 0, 0});
  expect_error(run_op({"DeformConv", {}, 19}, {&x, &w, &off, &b_bad}), "B shape", "B");
  Tensor off_d = make_tensor<double>({1, 8, 2, 2}, std::vector<double>(32, 0.0));
  expect_error(run_op({"DeformConv", {}, 19}, {&x, &w, &off_d}), "offset dtype", "dtype");
  Tensor x2 = make_tensor<float>({2, 3}, std::vector<float>(6, 1.0f));
  expect_error(run_op({"DeformConv", {}, 19}, {&x2, &w, &off}), "X rank", "rank");
  Tensor xi = make_tensor<int32_t>({1, 2, 3, 3}, std::vector<int32_t>(18, 1));
  auto ri = run_op({"DeformConv", {}, 19}, {&xi, &w, &off});
  ASSERT_FALSE(ri.is_ok());
  EXPECT_EQ(ri.status().code(), StatusCode::kUnimplemented);
  // A NaN offset is a run-time error, not a silent NaN or an out-of-range index.
  std::vector<float> nan_off(32, 0.0f);
  nan_off[5] = std::numeric_limits<float>::quiet_NaN();
  Tensor off_nan = make_tensor<float>({1, 8, 2, 2}, nan_off);
  expect_error(run_op({"DeformConv", {}, 19}, {&x, &w, &off_nan}), "NaN offset", "non-finite");
  // Huge finite offsets read 0 instead of overflowing an index.
  Tensor off_huge = make_tensor<float>({1, 8, 2, 2}, std::vector<float>(32, 3e38f));
  for (float v : to_vector<float>(run1({"DeformConv", {}, 19}, {&x, &w, &off_huge}))) EXPECT_EQ(v, 0.0f);
}

}  // namespace
}  // namespace tessera
