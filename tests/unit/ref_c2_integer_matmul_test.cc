// Reference kernels MatMulInteger and QLinearMatMul. Expected values were computed with
// onnxruntime 1.20 on single-node models fed the same inputs (the int8 x uint8 per-row /
// per-column MatMulInteger case, which onnxruntime does not implement, with numpy:
// (A - a_zp[:, None]) @ (B - b_zp[None, :]) in int32).
#include "ref_a_util.h"

namespace tessera {
namespace {

using testing::expect_error;
using testing::make_tensor;
using testing::run_ok;
using testing::to_vector;

TEST(RefMatMulInteger, ScalarAndPerRowColumnZeroPoints) {
  Tensor a = make_tensor<uint8_t>({4, 3}, {11, 7, 3, 10, 6, 2, 9, 5, 1, 8, 4, 0});
  Tensor b = make_tensor<uint8_t>({3, 2}, {1, 4, 2, 5, 3, 6});
  Tensor za = make_tensor<uint8_t>({1}, {12}), zb = make_tensor<uint8_t>({1}, {0});
  auto out = run_ok({"MatMulInteger", {}, 10}, {&a, &b, &za, &zb});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{4, 2}));
  // ort(MatMulInteger, opset 10)
  EXPECT_EQ(to_vector<int32_t>(out[0]), (std::vector<int32_t>{-38, -83, -44, -98, -50, -113, -56, -128}));
  Tensor ai = make_tensor<int8_t>({2, 3}, {-3, 7, 100, 10, -128, 2});
  Tensor bu = make_tensor<uint8_t>({3, 2}, {1, 200, 2, 5, 3, 255});
  Tensor zr = make_tensor<int8_t>({2}, {1, -2}), zc = make_tensor<uint8_t>({2}, {3, 4});
  auto o2 = run_ok({"MatMulInteger", {}, 10}, {&ai, &bu, &zr, &zc});
  ASSERT_EQ(o2.size(), 1u);
  EXPECT_EQ(to_vector<int32_t>(o2[0]), (std::vector<int32_t>{2, 24071, 102, 3230}));  // numpy
  Tensor bad = make_tensor<uint8_t>({3}, {1, 2, 3});
  expect_error({"MatMulInteger", {}, 10}, {&a, &b, &bad}, StatusCode::kUnimplemented, "a_zero_point");
  expect_error({"MatMulInteger", {}, 10}, {&a, &a}, StatusCode::kInvalidArgument, "inner dims");
  Tensor f = make_tensor<float>({3, 2}, {1, 2, 3, 4, 5, 6});
  expect_error({"MatMulInteger", {}, 10}, {&a, &f}, StatusCode::kUnimplemented, "float");
}

TEST(RefQLinearMatMul, UInt8AndBatchedInt8) {
  Tensor a = make_tensor<uint8_t>({2, 4}, {208, 236, 0, 238, 3, 214, 255, 29});
  Tensor b = make_tensor<uint8_t>({4, 3}, {152, 51, 244, 60, 26, 255, 0, 127, 246, 127, 254, 247});
  Tensor as = make_tensor<float>({1}, {0.0066f}), az = make_tensor<uint8_t>({1}, {113});
  Tensor bs = make_tensor<float>({1}, {0.00705f}), bz = make_tensor<uint8_t>({1}, {114});
  Tensor ys = make_tensor<float>({1}, {0.0107f}), yz = make_tensor<uint8_t>({1}, {118});
  auto out = run_ok({"QLinearMatMul", {}, 10}, {&a, &as, &az, &b, &bs, &bz, &ys, &yz});
  ASSERT_EQ(out.size(), 1u);
  // ort(QLinearMatMul, opset 10)
  EXPECT_EQ(to_vector<uint8_t>(out[0]), (std::vector<uint8_t>{168, 115, 255, 1, 66, 151}));
  Tensor a3 = make_tensor<int8_t>({2, 2, 4}, {80, 108, -128, 110, -125, 86, 127, -99, 80, 108, -128, 110, -125, 86, 127, -99});
  Tensor b3 = make_tensor<int8_t>({4, 3}, {24, -77, 116, -68, -102, 127, -128, -1, 118, -1, 126, 119});
  Tensor s1 = make_tensor<float>({}, {0.05f}), z1 = make_tensor<int8_t>({}, {-3});
  Tensor s2 = make_tensor<float>({}, {0.02f}), z2 = make_tensor<int8_t>({}, {1});
  Tensor s3 = make_tensor<float>({}, {0.9f}), z3 = make_tensor<int8_t>({}, {5});
  auto o3 = run_ok({"QLinearMatMul", {}, 10}, {&a3, &s1, &z1, &b3, &s2, &z2, &s3, &z3});
  ASSERT_EQ(o3.size(), 1u);
  EXPECT_EQ(o3[0].shape(), (Shape{2, 2, 3}));
  // ort(QLinearMatMul, opset 10), 3-D int8
  EXPECT_EQ(to_vector<int8_t>(o3[0]), (std::vector<int8_t>{16, 1, 30, -23, -8, 6, 16, 1, 30, -23, -8, 6}));
  Tensor zbad = make_tensor<int8_t>({}, {0});
  expect_error({"QLinearMatMul", {}, 10}, {&a, &as, &zbad, &b, &bs, &bz, &ys, &yz}, StatusCode::kInvalidArgument, "zero_point");
}

}  // namespace
}  // namespace tessera
