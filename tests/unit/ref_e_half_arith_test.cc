// float16 / bfloat16 in the broadcasting arithmetic and comparison ops (Add, Sub, Mul, Div,
// Max, Min, Sum, Mean, Less, Equal, PRelu). Expected values are exact half results, worked by
// hand from the binary16 format (11-bit significand: the spacing just above 1 is 2^-10,
// above 2048 it is 2).
#include <cmath>

#include "ref_a_util.h"
#include "tessera/half.h"

namespace tessera {
namespace {

using testing::run_ok;

Tensor half_tensor(const Shape& shape, const std::vector<float>& v, DType dt = DType::kFloat16) {
  Tensor t = Tensor::allocate(dt, shape).value();
  EXPECT_EQ(static_cast<size_t>(t.numel()), v.size());
  for (size_t i = 0; i < v.size(); ++i)
    t.data_as<uint16_t>()[i] = dt == DType::kFloat16 ? float_to_half(v[i]) : float_to_bfloat16(v[i]);
  return t;
}

std::vector<float> half_values(const Tensor& t) {
  std::vector<float> v;
  for (int64_t i = 0; i < t.numel(); ++i)
    v.push_back(t.dtype() == DType::kFloat16 ? half_to_float(t.data_as<uint16_t>()[i])
                                             : bfloat16_to_float(t.data_as<uint16_t>()[i]));
  return v;
}

TEST(RefHalfArith, MaxMinKeepDtypeBroadcastAndPropagateNaN) {
  Tensor a = half_tensor({3}, {1.f, -2.5f, NAN});
  Tensor b = half_tensor({1}, {0.5f});
  Tensor c = half_tensor({3}, {3.f, -4.f, 1.f});
  auto mx = run_ok({"Max", {}, 13}, {&a, &b, &c});
  ASSERT_EQ(mx.size(), 1u);
  EXPECT_EQ(mx[0].dtype(), DType::kFloat16);
  std::vector<float> v = half_values(mx[0]);
  EXPECT_EQ(v[0], 3.f);
  EXPECT_EQ(v[1], 0.5f);
  EXPECT_TRUE(std::isnan(v[2]));
  v = half_values(run_ok({"Min", {}, 13}, {&a, &b, &c})[0]);
  EXPECT_EQ(v[0], 0.5f);
  EXPECT_EQ(v[1], -4.f);
  EXPECT_TRUE(std::isnan(v[2]));
}

TEST(RefHalfArith, BinaryOpsRoundToNearestEvenHalf) {
  // 1 + 2^-11 is a tie between 1 and 1 + 2^-10: even is 1. 1 + 3 * 2^-11 ties to 1 + 2^-9.
  Tensor a = half_tensor({2}, {1.f, 1.f});
  Tensor b = half_tensor({2}, {std::ldexp(1.f, -11), 3 * std::ldexp(1.f, -11)});
  EXPECT_EQ(half_values(run_ok({"Add", {}, 14}, {&a, &b})[0]), (std::vector<float>{1.f, 1.f + std::ldexp(1.f, -9)}));
  // 1 / 3 in half is 0x3555 = 0.333251953125; 60000 * 2 overflows to inf.
  Tensor one = half_tensor({}, {1.f}), three = half_tensor({}, {3.f});
  EXPECT_EQ(half_values(run_ok({"Div", {}, 14}, {&one, &three})[0])[0], 0.333251953125f);
  Tensor big = half_tensor({}, {60000.f}), two = half_tensor({}, {2.f});
  EXPECT_TRUE(std::isinf(half_values(run_ok({"Mul", {}, 14}, {&big, &two})[0])[0]));
  EXPECT_EQ(half_values(run_ok({"Sub", {}, 14}, {&one, &three})[0])[0], -2.f);
  // bfloat16: 8-bit significand, 1 + 2^-8 ties to 1.
  Tensor ab = half_tensor({1}, {1.f}, DType::kBFloat16), bb = half_tensor({1}, {std::ldexp(1.f, -8)}, DType::kBFloat16);
  auto s = run_ok({"Add", {}, 14}, {&ab, &bb});
  EXPECT_EQ(s[0].dtype(), DType::kBFloat16);
  EXPECT_EQ(half_values(s[0])[0], 1.f);
}

TEST(RefHalfArith, SumAndMeanRoundEveryStep) {
  // 2048 + 1 = 2049 ties to 2048 (even), and again: Sum = 2048 (float accumulation gives 2050).
  Tensor a = half_tensor({1}, {2048.f}), b = half_tensor({1}, {1.f});
  EXPECT_EQ(half_values(run_ok({"Sum", {}, 13}, {&a, &b, &b})[0])[0], 2048.f);
  // Mean(2048, 1, 1) = 2048 / 3 = 682.67 -> nearest half 682.5 (spacing 0.5 in [512, 1024)).
  EXPECT_EQ(half_values(run_ok({"Mean", {}, 13}, {&a, &b, &b})[0])[0], 682.5f);
}

TEST(RefHalfArith, ComparisonsAndPRelu) {
  Tensor a = half_tensor({3}, {1.f, 2.f, -1.f}), b = half_tensor({3}, {1.f, 3.f, -2.f});
  auto lt = run_ok({"Less", {}, 13}, {&a, &b});
  EXPECT_EQ(testing::to_vector<bool>(lt[0]), (std::vector<bool>{false, true, false}));
  auto eq = run_ok({"Equal", {}, 13}, {&a, &b});
  EXPECT_EQ(testing::to_vector<bool>(eq[0]), (std::vector<bool>{true, false, false}));
  Tensor slope = half_tensor({1}, {0.25f});
  EXPECT_EQ(half_values(run_ok({"PRelu", {}, 16}, {&a, &slope})[0]), (std::vector<float>{1.f, 2.f, -0.25f}));
}

TEST(RefHalfArith, MixedDtypesAndUnsupportedOpsAreErrors) {
  Tensor h = half_tensor({1}, {1.f});
  Tensor f = testing::make_tensor<float>({1}, {1.f});
  testing::expect_error({"Add", {}, 14}, {&h, &f}, StatusCode::kInvalidArgument, "dtype");
  testing::expect_error({"Pow", {}, 15}, {&h, &h}, StatusCode::kUnimplemented, "float16");
}

}  // namespace
}  // namespace tessera
