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

// The inputs of ONNX's node tests test_qlinearmatmul_2D_int8_float32 / _float16 (onnx 1.17).
// acc[1][2] = (A[1] + 14) . (B[:, 2] + 13) = -52135, real value -52135 * 0.0066 * 0.00705 /
// 0.0107 - 9 = -235.7 (-235.8 with the float16 scales), which the spec ("y = saturate(...)")
// and onnxruntime 1.20.1 saturate to -128. The node tests' expected output holds 20 there:
// -236 wrapped modulo 256, from the ONNX reference implementation's np.rint(D).astype(int8),
// which does not clip. The other five elements are the same in all three.
TEST(RefQLinearMatMul, SaturatesWhereTheOnnxNodeTestDataWrap) {
  Tensor a = make_tensor<int8_t>({2, 4}, {81, 109, -127, 111, -124, 87, -128, -98});
  Tensor b = make_tensor<int8_t>({4, 3}, {25, -76, 117, -67, -101, -128, -127, 0, 119, 0, 127, 120});
  Tensor az = make_tensor<int8_t>({1}, {-14}), bz = make_tensor<int8_t>({1}, {-13}), yz = make_tensor<int8_t>({1}, {-9});
  Tensor as = make_tensor<float>({1}, {0.0066f}), bs = make_tensor<float>({1}, {0.00705f}), ys = make_tensor<float>({1}, {0.0107f});
  auto out = run_ok({"QLinearMatMul", {}, 10}, {&a, &as, &az, &b, &bs, &bz, &ys, &yz});
  ASSERT_EQ(out.size(), 1u);
  // ort(QLinearMatMul, opset 10)
  EXPECT_EQ(to_vector<int8_t>(out[0]), (std::vector<int8_t>{41, -12, -9, 1, -75, -128}));
  // float16 scales (the bits of the node test's inputs: 0.0065994, 0.0070496, 0.0106964).
  auto half = [](uint16_t bits) {
    Tensor t = std::move(Tensor::allocate(DType::kFloat16, {1})).value();
    t.data_as<uint16_t>()[0] = bits;
    return t;
  };
  Tensor ash = half(7874), bsh = half(7992), ysh = half(8570);
  auto out16 = run_ok({"QLinearMatMul", {}, 21}, {&a, &ash, &az, &b, &bsh, &bz, &ysh, &yz});
  ASSERT_EQ(out16.size(), 1u);
  // ort(QLinearMatMul, opset 21, float16 scales)
  EXPECT_EQ(to_vector<int8_t>(out16[0]), (std::vector<int8_t>{41, -12, -9, 1, -75, -128}));
}

}  // namespace
}  // namespace tessera
