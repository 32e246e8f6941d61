// float8 (tessera/float8.h) and int4 dtypes: the conversions against the bit layouts of the
// ONNX Float8 note and the Cast-19/21 spec tables, exhaustively where the space is small,
// and the ops that produce and consume them (Cast, QuantizeLinear, DequantizeLinear).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <unistd.h>

#include "op_test_util.h"
#include "tessera/float8.h"
#include "tessera/half.h"
#ifdef TESSERA_HAVE_CONVERTER
#include "converter/converter.h"
#endif

namespace tessera {
namespace {

using testing::attr_i;
using testing::make_tensor;
using testing::run1;

struct Fmt {
  const char* name;
  const Float8Format* f;
};
const Fmt kFormats[] = {{"e4m3fn", &kFloat8E4M3FN},
                        {"e4m3fnuz", &kFloat8E4M3FNUZ},
                        {"e5m2", &kFloat8E5M2},
                        {"e5m2fnuz", &kFloat8E5M2FNUZ}};

TEST(Float8, DecodesTheSpecValues) {
  // E4M3FN: bias 7, max S.1111.110 = 448, smallest subnormal 2^-9, NaN S.1111.111.
  EXPECT_EQ(float8_to_float(0x7E, kFloat8E4M3FN), 448.f);
  EXPECT_EQ(float8_to_float(0x01, kFloat8E4M3FN), std::ldexp(1.f, -9));
  EXPECT_EQ(float8_to_float(0x38, kFloat8E4M3FN), 1.f);
  EXPECT_TRUE(std::isnan(float8_to_float(0x7F, kFloat8E4M3FN)));
  EXPECT_TRUE(std::isnan(float8_to_float(0xFF, kFloat8E4M3FN)));
  EXPECT_TRUE(std::signbit(float8_to_float(0x80, kFloat8E4M3FN)));
  // E4M3FNUZ: bias 8, max 240, 0x80 is the only NaN.
  EXPECT_EQ(float8_to_float(0x7F, kFloat8E4M3FNUZ), 240.f);
  EXPECT_EQ(float8_to_float(0x01, kFloat8E4M3FNUZ), std::ldexp(1.f, -10));
  EXPECT_EQ(float8_to_float(0x40, kFloat8E4M3FNUZ), 1.f);
  EXPECT_TRUE(std::isnan(float8_to_float(0x80, kFloat8E4M3FNUZ)));
  EXPECT_EQ(float8_to_float(0xFF, kFloat8E4M3FNUZ), -240.f);
  // E5M2: bias 15, max 57344, inf S.11111.00, NaN S.11111.{01,10,11}.
  EXPECT_EQ(float8_to_float(0x7B, kFloat8E5M2), 57344.f);
  EXPECT_EQ(float8_to_float(0x01, kFloat8E5M2), std::ldexp(1.f, -16));
  EXPECT_EQ(float8_to_float(0x3C, kFloat8E5M2), 1.f);
  EXPECT_EQ(float8_to_float(0x7C, kFloat8E5M2), std::numeric_limits<float>::infinity());
  EXPECT_EQ(float8_to_float(0xFC, kFloat8E5M2), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(float8_to_float(0x7D, kFloat8E5M2)));
  // E5M2FNUZ: bias 16, max 57344, 0x80 NaN.
  EXPECT_EQ(float8_to_float(0x7F, kFloat8E5M2FNUZ), 57344.f);
  EXPECT_EQ(float8_to_float(0x01, kFloat8E5M2FNUZ), std::ldexp(1.f, -17));
  EXPECT_EQ(float8_to_float(0x40, kFloat8E5M2FNUZ), 1.f);
  EXPECT_TRUE(std::isnan(float8_to_float(0x80, kFloat8E5M2FNUZ)));
}

TEST(Float8, EveryCodeRoundTrips) {
  for (const Fmt& f : kFormats) {
    for (int c = 0; c < 256; ++c) {
      const float v = float8_to_float(static_cast<uint8_t>(c), *f.f);
      if (std::isnan(v)) continue;
      EXPECT_EQ(float_to_float8(v, *f.f, false), c) << f.name << " code " << c << " value " << v;
      if (!std::isinf(v)) {
        EXPECT_EQ(float_to_float8(v, *f.f, true), c) << f.name << " code " << c;
      }
    }
  }
}

TEST(Float8, MidpointsRoundToEvenAndStrictlyBetweenToNearest) {
  for (const Fmt& f : kFormats) {
    for (int c = 0; c < 0x7F; ++c) {  // positive codes and their successors
      const float lo = float8_to_float(static_cast<uint8_t>(c), *f.f);
      const float hi = float8_to_float(static_cast<uint8_t>(c + 1), *f.f);
      if (std::isnan(lo) || std::isnan(hi) || std::isinf(hi)) continue;
      const float mid = (lo + hi) / 2;  // exact: both are float8 values
      const int even = (c % 2 == 0) ? c : c + 1;
      EXPECT_EQ(float_to_float8(mid, *f.f), even) << f.name << " between codes " << c << " and " << c + 1;
      EXPECT_EQ(float_to_float8(std::nextafter(mid, lo), *f.f), c) << f.name << " just below the midpoint " << mid;
      EXPECT_EQ(float_to_float8(std::nextafter(mid, hi), *f.f), c + 1) << f.name << " just above the midpoint " << mid;
      EXPECT_EQ(float_to_float8(-mid, *f.f) & 0x7F, even) << f.name << " negative midpoint";
    }
  }
}

TEST(Float8, OverflowFollowsTheCastTable) {
  const float inf = std::numeric_limits<float>::infinity();
  // saturate = 1: +-inf and out-of-range values become +-max.
  EXPECT_EQ(float_to_float8(inf, kFloat8E4M3FN, true), 0x7E);
  EXPECT_EQ(float_to_float8(-1e6f, kFloat8E4M3FN, true), 0xFE);
  EXPECT_EQ(float_to_float8(inf, kFloat8E4M3FNUZ, true), 0x7F);
  EXPECT_EQ(float_to_float8(-inf, kFloat8E5M2, true), 0xFB);
  EXPECT_EQ(float_to_float8(1e6f, kFloat8E5M2FNUZ, true), 0x7F);
  // saturate = 0: NaN, except E5M2, which has inf.
  EXPECT_EQ(float_to_float8(1e6f, kFloat8E4M3FN, false), 0x7F);
  EXPECT_EQ(float_to_float8(inf, kFloat8E4M3FNUZ, false), 0x80);
  EXPECT_EQ(float_to_float8(-1e6f, kFloat8E5M2, false), 0xFC);
  EXPECT_EQ(float_to_float8(inf, kFloat8E5M2FNUZ, false), 0x80);
  // 464 lies halfway between 448 and 480 (not representable in E4M3FN): to even, 448.
  EXPECT_EQ(float_to_float8(464.f, kFloat8E4M3FN, false), 0x7E);
  EXPECT_EQ(float_to_float8(465.f, kFloat8E4M3FN, false), 0x7F);
  // NaN stays NaN; -0 has no code in the UZ formats.
  EXPECT_EQ(float_to_float8(std::nanf(""), kFloat8E4M3FNUZ), 0x80);
  EXPECT_EQ(float_to_float8(-0.f, kFloat8E4M3FNUZ), 0x00);
  EXPECT_EQ(float_to_float8(-0.f, kFloat8E5M2), 0x80);
  EXPECT_EQ(float_to_float8(-std::ldexp(1.f, -30), kFloat8E5M2FNUZ), 0x00);  // rounds to zero
}

Tensor bytes_tensor(DType dt, Shape shape, std::vector<uint8_t> v) {
  Tensor t = Tensor::allocate(dt, std::move(shape)).value();
  std::memcpy(t.data(), v.data(), v.size());
  return t;
}

std::vector<uint8_t> bytes_of(const Tensor& t) {
  const uint8_t* p = t.data_as<uint8_t>();
  return std::vector<uint8_t>(p, p + t.numel());
}

TEST(Float8, CastToAndFromFloat) {
  Tensor x = make_tensor<float>({5}, {1.f, -2.5f, 500.f, 0.0625f, std::nanf("")});
  Tensor y = run1({"Cast", {attr_i("to", 17)}, 19}, {&x});
  ASSERT_EQ(y.dtype(), DType::kFloat8E4M3FN);
  // 1 = 0.0111.000, -2.5 = 1.1000.010, 500 saturates to 448, 2^-4 = 0.0011.000, NaN.
  EXPECT_EQ(bytes_of(y), (std::vector<uint8_t>{0x38, 0xC2, 0x7E, 0x18, 0x7F}));
  Tensor y2 = run1({"Cast", {attr_i("to", 17), attr_i("saturate", 0)}, 19}, {&x});
  EXPECT_EQ(bytes_of(y2)[2], 0x7F);  // no saturation: NaN
  Tensor back = run1({"Cast", {attr_i("to", 1)}, 19}, {&y});
  const float* b = back.data_as<float>();
  EXPECT_EQ(b[0], 1.f);
  EXPECT_EQ(b[1], -2.5f);
  EXPECT_EQ(b[2], 448.f);
  EXPECT_TRUE(std::isnan(b[4]));
  // float8 -> float16 goes through float exactly.
  Tensor h = run1({"Cast", {attr_i("to", 10)}, 19}, {&y});
  EXPECT_EQ(half_to_float(h.data_as<uint16_t>()[1]), -2.5f);
}

TEST(Int4, CastClipsThenRoundsHalfToEven) {
  Tensor x = make_tensor<float>({8}, {-9.f, -8.5f, -7.5f, 0.5f, 1.5f, 6.5f, 7.6f, 20.f});
  Tensor y = run1({"Cast", {attr_i("to", 22)}, 21}, {&x});
  ASSERT_EQ(y.dtype(), DType::kInt4);
  const int8_t* p = y.data_as<int8_t>();
  EXPECT_EQ(std::vector<int8_t>(p, p + 8), (std::vector<int8_t>{-8, -8, -8, 0, 2, 6, 7, 7}));
  Tensor u = run1({"Cast", {attr_i("to", 21)}, 21}, {&x});
  const uint8_t* q = u.data_as<uint8_t>();
  EXPECT_EQ(std::vector<uint8_t>(q, q + 8), (std::vector<uint8_t>{0, 0, 0, 0, 2, 6, 8, 15}));
  Tensor back = run1({"Cast", {attr_i("to", 6)}, 21}, {&y});  // int4 -> int32 keeps the sign
  EXPECT_EQ(back.data_as<int32_t>()[0], -8);
  EXPECT_EQ(back.data_as<int32_t>()[6], 7);
}

TEST(Int4, QuantizeAndDequantizeLinear) {
  Tensor x = make_tensor<float>({6}, {-20.f, -3.f, 0.f, 1.f, 2.f, 30.f}), s = make_tensor<float>({}, {2.f});
  Tensor zp = bytes_tensor(DType::kInt4, {}, {0xFF});  // -1, sign-extended in its byte
  // y = clip(rint(x / 2) - 1, -8, 7): rint(-1.5) = -2, rint(0.5) = 0.
  Tensor y = run1({"QuantizeLinear", {}, 21}, {&x, &s, &zp});
  ASSERT_EQ(y.dtype(), DType::kInt4);
  const int8_t* p = y.data_as<int8_t>();
  EXPECT_EQ(std::vector<int8_t>(p, p + 6), (std::vector<int8_t>{-8, -3, -1, -1, 0, 7}));
  Tensor d = run1({"DequantizeLinear", {}, 21}, {&y, &s, &zp});
  EXPECT_EQ(testing::to_vector<float>(d), (std::vector<float>{-14.f, -4.f, 0.f, 0.f, 2.f, 16.f}));
}

TEST(Float8, QuantizeAndDequantizeLinearWithFloat16Scale) {
  Tensor x = make_tensor<float>({4}, {1.f, -3.f, 1000.f, 0.1f}), s = make_tensor<float>({}, {0.5f});
  Tensor zp = bytes_tensor(DType::kFloat8E4M3FN, {}, {0x00});
  Tensor y = run1({"QuantizeLinear", {}, 19}, {&x, &s, &zp});
  ASSERT_EQ(y.dtype(), DType::kFloat8E4M3FN);
  EXPECT_EQ(bytes_of(y), (std::vector<uint8_t>{float_to_float8(2.f, kFloat8E4M3FN), float_to_float8(-6.f, kFloat8E4M3FN),
                                               0x7E, float_to_float8(0.2f, kFloat8E4M3FN)}));
  Tensor sh = Tensor::allocate(DType::kFloat16, {}).value();
  sh.data_as<uint16_t>()[0] = float_to_half(0.5f);
  Tensor d = run1({"DequantizeLinear", {}, 19}, {&y, &sh});
  ASSERT_EQ(d.dtype(), DType::kFloat16);  // Y takes the scale's dtype (opset 19)
  EXPECT_EQ(half_to_float(d.data_as<uint16_t>()[0]), 1.f);
  EXPECT_EQ(half_to_float(d.data_as<uint16_t>()[2]), 224.f);  // 448 * 0.5
}

#ifdef TESSERA_HAVE_CONVERTER
TEST(TensorProtoFile, Int4PacksAndFloat8RoundTrips) {
  const std::string path = ::testing::TempDir() + "/tessera_int4_" + std::to_string(::getpid()) + ".pb";
  Tensor i4 = bytes_tensor(DType::kInt4, {5}, {0xF8, 0x07, 0x00, 0xFF, 0x03});  // -8 7 0 -1 3 (odd count)
  ASSERT_TRUE(write_onnx_tensor_file(path, i4, "q").is_ok());
  auto r = read_onnx_tensor_file(path);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r.value().dtype(), DType::kInt4);
  EXPECT_EQ(bytes_of(r.value()), bytes_of(i4));
  Tensor f8 = bytes_tensor(DType::kFloat8E5M2, {2, 2}, {0x3C, 0x7C, 0x80, 0x01});
  ASSERT_TRUE(write_onnx_tensor_file(path, f8, "f").is_ok());
  auto r2 = read_onnx_tensor_file(path);
  ASSERT_TRUE(r2.is_ok());
  EXPECT_EQ(r2.value().dtype(), DType::kFloat8E5M2);
  EXPECT_EQ(r2.value().shape(), (Shape{2, 2}));
  EXPECT_EQ(bytes_of(r2.value()), bytes_of(f8));
  std::remove(path.c_str());
  auto bad = read_onnx_tensor_file("/nonexistent/x.pb");
  EXPECT_FALSE(bad.is_ok());
}
#endif

}  // namespace
}  // namespace tessera
