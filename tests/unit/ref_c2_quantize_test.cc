// Reference kernels QuantizeLinear and DequantizeLinear. Expected values were computed with
// onnxruntime 1.20 on single-node models fed the same inputs (int32-input QuantizeLinear,
// which onnxruntime does not implement, with numpy: clip(rint(x / s) + zp)).
#include "ref_a_util.h"

namespace tessera {
namespace {

using testing::attr_i;
using testing::expect_error;
using testing::expect_near;
using testing::make_tensor;
using testing::run_ok;
using testing::to_vector;

const std::vector<float> kX = {-3.5f, -2.5f, -0.5f, 0.5f, 1.5f, 2.5f, 300.f, -300.f, 7.25f};

std::vector<float> xa() {  // np.arange(12).reshape(2, 3, 2) * 1.5 - 7
  std::vector<float> v(12);
  for (int i = 0; i < 12; ++i) v[i] = i * 1.5f - 7.f;
  return v;
}

TEST(RefQuantizeLinear, PerTensorRoundsHalfToEvenAndSaturates) {
  Tensor x = make_tensor<float>({9}, kX), s = make_tensor<float>({}, {0.5f});
  Tensor zu = make_tensor<uint8_t>({}, {10});
  // ort(QuantizeLinear, opset 10), scale 0.5, zero point uint8 10
  EXPECT_EQ(to_vector<uint8_t>(run_ok({"QuantizeLinear", {}, 10}, {&x, &s, &zu})[0]),
            (std::vector<uint8_t>{3, 5, 9, 11, 13, 15, 255, 0, 24}));
  Tensor s1 = make_tensor<float>({}, {1.f}), zi = make_tensor<int8_t>({}, {-3});
  // ort(QuantizeLinear, opset 10), scale 1, zero point int8 -3
  EXPECT_EQ(to_vector<int8_t>(run_ok({"QuantizeLinear", {}, 10}, {&x, &s1, &zi})[0]),
            (std::vector<int8_t>{-7, -5, -3, -3, -1, -1, 127, -128, 4}));
  // ort(QuantizeLinear, opset 10), scale 1, no zero point: uint8
  EXPECT_EQ(to_vector<uint8_t>(run_ok({"QuantizeLinear", {}, 10}, {&x, &s1})[0]),
            (std::vector<uint8_t>{0, 0, 0, 0, 2, 2, 255, 0, 7}));
}

TEST(RefQuantizeLinear, PerAxisBlockedUInt16Int32) {
  Tensor x = make_tensor<float>({2, 3, 2}, xa());
  Tensor s = make_tensor<float>({3}, {1.f, 2.f, 0.5f});
  Tensor z = make_tensor<int8_t>({3}, {0, -5, 5});
  // ort(QuantizeLinear, opset 13, axis 1)
  EXPECT_EQ(to_vector<int8_t>(run_ok({"QuantizeLinear", {}, 13}, {&x, &s, &z})[0]),
            (std::vector<int8_t>{-7, -6, -7, -6, 3, 6, 2, 4, -3, -2, 21, 24}));
  Tensor sb = make_tensor<float>({2, 3, 1}, {1.f, 2.f, 4.f, 0.5f, 4.f, 1.f});
  Tensor zb = make_tensor<int16_t>({2, 3, 1}, {0, 3, 1, 1, 2, 0});
  // ort(QuantizeLinear, opset 21, axis 2, block_size 2)
  EXPECT_EQ(to_vector<int16_t>(run_ok({"QuantizeLinear", {attr_i("axis", 2), attr_i("block_size", 2)}, 21}, {&x, &sb, &zb})[0]),
            (std::vector<int16_t>{-7, -6, 1, 2, 1, 1, 5, 8, 3, 4, 8, 10}));
  std::vector<float> x300 = kX;
  for (float& v : x300) v *= 300.f;
  Tensor xu = make_tensor<float>({9}, x300), s2 = make_tensor<float>({}, {2.f}), zu = make_tensor<uint16_t>({}, {100});
  // ort(QuantizeLinear, opset 21), x * 300, scale 2, zero point uint16 100
  EXPECT_EQ(to_vector<uint16_t>(run_ok({"QuantizeLinear", {}, 21}, {&xu, &s2, &zu})[0]),
            (std::vector<uint16_t>{0, 0, 25, 175, 325, 475, 45100, 0, 1188}));
  Tensor xi = make_tensor<int32_t>({4}, {-10, 0, 7, 100000}), s3 = make_tensor<float>({}, {3.f}), z1 = make_tensor<int8_t>({}, {1});
  // numpy: clip(rint(x / 3) + 1, -128, 127)
  EXPECT_EQ(to_vector<int8_t>(run_ok({"QuantizeLinear", {}, 10}, {&xi, &s3, &z1})[0]), (std::vector<int8_t>{-2, 1, 3, 127}));
}

TEST(RefQuantizeLinear, Errors) {
  Tensor x = make_tensor<float>({2, 3, 2}, xa());
  Tensor s3 = make_tensor<float>({3}, {1.f, 2.f, 0.5f}), s2 = make_tensor<float>({2}, {1.f, 2.f});
  expect_error({"QuantizeLinear", {}, 10}, {&x, &s3}, StatusCode::kInvalidArgument, "scalar");
  expect_error({"QuantizeLinear", {}, 13}, {&x, &s2}, StatusCode::kInvalidArgument, "per-axis");
  expect_error({"QuantizeLinear", {attr_i("axis", 5)}, 13}, {&x, &s3}, StatusCode::kInvalidArgument, "axis");
  expect_error({"QuantizeLinear", {attr_i("block_size", -1)}, 21}, {&x, &s3}, StatusCode::kInvalidArgument, "block_size");
  expect_error({"QuantizeLinear", {attr_i("block_size", 2)}, 21}, {&x, &s3}, StatusCode::kInvalidArgument, "blocked");
  Tensor s = make_tensor<float>({}, {1.f}), z2 = make_tensor<int8_t>({1, 1}, {0});
  expect_error({"QuantizeLinear", {}, 13}, {&x, &s, &z2}, StatusCode::kInvalidArgument, "zero point");
  expect_error({"QuantizeLinear", {attr_i("output_dtype", 23)}, 21}, {&x, &s}, StatusCode::kUnimplemented, "float4e2m1");
  expect_error({"QuantizeLinear", {attr_i("output_dtype", 99)}, 21}, {&x, &s}, StatusCode::kInvalidArgument, "99");
  Tensor zf = make_tensor<float>({}, {0.f});
  expect_error({"QuantizeLinear", {}, 13}, {&x, &s, &zf}, StatusCode::kUnimplemented, "output dtype float");
}

TEST(RefDequantizeLinear, PerTensorPerAxisBlockedInt32) {
  Tensor d = make_tensor<uint8_t>({4}, {0, 3, 128, 255}), s = make_tensor<float>({}, {0.5f}), z = make_tensor<uint8_t>({}, {128});
  // ort(DequantizeLinear, opset 10)
  expect_near(to_vector<float>(run_ok({"DequantizeLinear", {}, 10}, {&d, &s, &z})[0]), {-64.f, -62.5f, 0.f, 63.5f});
  std::vector<int8_t> dv(12);
  for (int i = 0; i < 12; ++i) dv[i] = static_cast<int8_t>(i - 6);
  Tensor di = make_tensor<int8_t>({2, 3, 2}, dv);
  Tensor s3 = make_tensor<float>({3}, {1.f, 2.f, 0.5f}), z3 = make_tensor<int8_t>({3}, {0, -5, 5});
  // ort(DequantizeLinear, opset 13, axis 1)
  expect_near(to_vector<float>(run_ok({"DequantizeLinear", {}, 13}, {&di, &s3, &z3})[0]),
              {-6.f, -5.f, 2.f, 4.f, -3.5f, -3.f, 0.f, 1.f, 14.f, 16.f, -0.5f, 0.f});
  Tensor s2 = make_tensor<float>({2}, {0.25f, 3.f});
  // ort(DequantizeLinear, opset 13, axis -1, no zero point)
  expect_near(to_vector<float>(run_ok({"DequantizeLinear", {attr_i("axis", -1)}, 13}, {&di, &s2})[0]),
              {-1.5f, -15.f, -1.f, -9.f, -0.5f, -3.f, 0.f, 3.f, 0.5f, 9.f, 1.f, 15.f});
  std::vector<int16_t> d16(dv.begin(), dv.end());
  Tensor dh = make_tensor<int16_t>({2, 3, 2}, d16);
  Tensor sb = make_tensor<float>({2, 1, 2}, {1.f, 2.f, 0.5f, 4.f}), zb = make_tensor<int16_t>({2, 1, 2}, {0, 3, 1, 2});
  // ort(DequantizeLinear, opset 21, axis 1, block_size 3)
  expect_near(to_vector<float>(run_ok({"DequantizeLinear", {attr_i("axis", 1), attr_i("block_size", 3)}, 21}, {&dh, &sb, &zb})[0]),
              {-6.f, -16.f, -4.f, -12.f, -2.f, -8.f, -0.5f, -4.f, 0.5f, 4.f, 1.5f, 12.f});
  Tensor d32 = make_tensor<int32_t>({3}, {-2147483647, 5, 1000});
  // ort(DequantizeLinear, opset 10, int32)
  expect_near(to_vector<float>(run_ok({"DequantizeLinear", {}, 10}, {&d32, &s})[0]), {-1.073742e+09f, 2.5f, 500.f});
}

TEST(RefDequantizeLinear, Errors) {
  Tensor d = make_tensor<uint8_t>({4}, {0, 3, 128, 255}), s = make_tensor<float>({}, {0.5f});
  Tensor zi = make_tensor<int8_t>({}, {1});
  expect_error({"DequantizeLinear", {}, 13}, {&d, &s, &zi}, StatusCode::kInvalidArgument, "zero point dtype");
  Tensor f = make_tensor<float>({1}, {1.f});
  expect_error({"DequantizeLinear", {}, 13}, {&f, &s}, StatusCode::kUnimplemented, "float");
  Tensor s2 = make_tensor<float>({2}, {1.f, 1.f});
  expect_error({"DequantizeLinear", {attr_i("axis", 0)}, 13}, {&d, &s2}, StatusCode::kInvalidArgument, "per-axis");
}

}  // namespace
}  // namespace tessera
