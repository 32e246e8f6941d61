#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "op_test_util.h"
#include "tessera/half.h"

namespace tessera {
namespace {

// Bit patterns from IEEE 754 binary16 (numpy.float16(v).view(np.uint16) gives the same).
TEST(Half, FloatToHalfRoundsToNearestEven) {
  EXPECT_EQ(float_to_half(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half(-2.0f), 0xc000);
  EXPECT_EQ(float_to_half(65504.0f), 0x7bff);       // largest half
  EXPECT_EQ(float_to_half(65520.0f), 0x7c00);       // rounds up to inf
  EXPECT_EQ(float_to_half(65519.0f), 0x7bff);
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -25)), 0x0000);  // tie to even: 0
  EXPECT_EQ(float_to_half(std::ldexp(3.0f, -25)), 0x0002);  // 1.5 ulp: tie to even 2
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11)), 0x3c00);  // halfway: to even
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(3.0f, -11)), 0x3c02);
  EXPECT_EQ(float_to_half(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(float_to_half(std::nanf("")) & 0x7c00, 0x7c00);
  EXPECT_NE(float_to_half(std::nanf("")) & 0x03ff, 0);
}

TEST(Half, RoundTripsEveryHalf) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if ((h & 0x7c00) == 0x7c00 && (h & 0x03ff)) continue;  // NaNs
    EXPECT_EQ(float_to_half(half_to_float(static_cast<uint16_t>(h))), h) << std::hex << h;
  }
}

TEST(Half, BFloat16RoundsToNearestEven) {
  EXPECT_EQ(float_to_bfloat16(1.0f), 0x3f80);
  EXPECT_EQ(bfloat16_to_float(0x3f80), 1.0f);
  EXPECT_EQ(float_to_bfloat16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);  // tie to even
  EXPECT_EQ(float_to_bfloat16(1.0f + std::ldexp(3.0f, -8)), 0x3f82);
}

TEST(RefCast, FloatToFloat16AndBack) {
  Tensor x = testing::make_tensor<float>({3}, {1.0f, -2.5f, 65504.0f});
  auto h = testing::run_op({"Cast", {testing::attr_i("to", 10)}, 13}, {&x});
  ASSERT_TRUE(h.is_ok()) << h.status().to_string();
  EXPECT_EQ(h.value()[0].dtype(), DType::kFloat16);
  const uint16_t* bits = h.value()[0].data_as<uint16_t>();
  EXPECT_EQ(bits[0], 0x3c00);
  EXPECT_EQ(bits[1], 0xc100);
  EXPECT_EQ(bits[2], 0x7bff);
  auto back = testing::run_op({"Cast", {testing::attr_i("to", 1)}, 13}, {&h.value()[0]});
  ASSERT_TRUE(back.is_ok());
  EXPECT_EQ(testing::to_vector<float>(back.value()[0]), (std::vector<float>{1.0f, -2.5f, 65504.0f}));
}

}  // namespace
}  // namespace tessera
