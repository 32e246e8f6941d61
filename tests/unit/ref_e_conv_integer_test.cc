// ConvInteger and QLinearConv reference kernels. Expected values: the integer convolution
// computed in numpy with the ONNX reference implementation's conv
// (onnx/reference/ops/op_conv.py _conv_implementation on zero-point-shifted int32 operands,
// the way its ConvInteger and QLinearConv call it), then for QLinearConv
// clip(round(acc * float32(x_scale * w_scale / y_scale) + y_zp)).
#include "ref_a_util.h"

namespace tessera {
namespace {

using testing::attr_i;
using testing::attr_ints;
using testing::expect_error;
using testing::make_tensor;
using testing::run_ok;
using testing::to_vector;

// x = (arange(18) * 7 % 11) as uint8 [1, 2, 3, 3].
const std::vector<uint8_t> kX = {0, 7, 3, 10, 6, 2, 9, 5, 1, 8, 4, 0, 7, 3, 10, 6, 2, 9};

TEST(RefConvInteger, GroupsPaddingPerChannelZeroPoint) {
  Tensor x = make_tensor<uint8_t>({1, 2, 3, 3}, kX);
  Tensor w = make_tensor<int8_t>({2, 1, 2, 2}, {1, -2, 3, 0, -1, 4, 2, -3});
  Tensor xz = make_tensor<uint8_t>({}, {3});
  Tensor wz = make_tensor<int8_t>({2}, {1, -2});
  auto y = run_ok({"ConvInteger", {attr_i("group", 2), attr_ints("pads", {1, 1, 1, 1})}, 10}, {&x, &w, &xz, &wz});
  ASSERT_EQ(y.size(), 1u);
  EXPECT_EQ(y[0].shape(), (Shape{1, 2, 4, 4}));
  EXPECT_EQ(to_vector<int32_t>(y[0]), (std::vector<int32_t>{3, -10, 8, 0, 2, -1, 7, -2, -27, 1, 9, -4, -18, -6, 6, 0,
                                                            -5, 19, 7, -12, 26, 27, -24, 25, 21, 17, 32, 31, 18, -3, 35, 6}));
}

TEST(RefConvInteger, OneDStridesDilationsNoZeroPoints) {
  Tensor x = make_tensor<int8_t>({1, 1, 9}, {5, -3, 7, 2, -8, 1, 4, 0, -6});
  Tensor w = make_tensor<int8_t>({2, 1, 3}, {2, -1, 3, 1, 1, -2});
  auto y = run_ok({"ConvInteger", {attr_ints("strides", {2}), attr_ints("dilations", {2})}, 10}, {&x, &w});
  EXPECT_EQ(y[0].shape(), (Shape{1, 2, 3}));
  EXPECT_EQ(to_vector<int32_t>(y[0]), (std::vector<int32_t>{-21, 34, -38, 28, -9, 8}));
}

TEST(RefQLinearConv, PerChannelScaleBiasAndTiesToEvenAfterZeroPoint) {
  Tensor x = make_tensor<uint8_t>({1, 2, 3, 3}, kX);
  Tensor xs = make_tensor<float>({}, {0.5f}), xz = make_tensor<uint8_t>({}, {3});
  Tensor w = make_tensor<uint8_t>({2, 1, 2, 2}, {1, 2, 0, 3, 4, 1, 1, 2});
  Tensor ws = make_tensor<float>({2}, {0.25f, 0.125f}), wz = make_tensor<uint8_t>({2}, {1, 2});
  Tensor ys = make_tensor<float>({}, {0.25f}), yz = make_tensor<uint8_t>({}, {10});
  Tensor b = make_tensor<int32_t>({2}, {3, -5});
  auto y = run_ok({"QLinearConv", {attr_i("group", 2), attr_ints("pads", {1, 1, 1, 1})}, 10},
                  {&x, &xs, &xz, &w, &ws, &wz, &ys, &yz, &b});
  ASSERT_EQ(y.size(), 1u);
  EXPECT_EQ(y[0].shape(), (Shape{1, 2, 4, 4}));
  // acc * mult + 10 is 8.5, 9.5, 12.5, ... here: the ties round to even (8, 10, 12).
  EXPECT_EQ(to_vector<uint8_t>(y[0]), (std::vector<uint8_t>{8, 17, 10, 12, 17, 13, 9, 12, 21, 12, 8, 12, 14, 12, 10, 12,
                                                            9, 8, 8, 10, 8, 10, 10, 6, 8, 10, 7, 11, 8, 10, 7, 12}));
}

TEST(RefQLinearConv, BadOperandsAreErrors) {
  Tensor x = make_tensor<uint8_t>({1, 2, 3, 3}, kX);
  Tensor xs = make_tensor<float>({}, {0.5f}), xz = make_tensor<uint8_t>({}, {3});
  Tensor w = make_tensor<uint8_t>({2, 1, 2, 2}, {1, 2, 0, 3, 4, 1, 1, 2});
  Tensor ws3 = make_tensor<float>({3}, {1, 1, 1}), wz = make_tensor<uint8_t>({}, {0});
  Tensor ys = make_tensor<float>({}, {0.25f}), yz = make_tensor<uint8_t>({}, {10});
  // w_scale with 3 entries for M = 2.
  expect_error({"QLinearConv", {attr_i("group", 2)}, 10}, {&x, &xs, &xz, &w, &ws3, &wz, &ys, &yz},
               StatusCode::kInvalidArgument, "w_scale");
  // group 1 needs W.shape[1] = 2.
  Tensor ws = make_tensor<float>({}, {1.f});
  expect_error({"QLinearConv", {}, 10}, {&x, &xs, &xz, &w, &ws, &wz, &ys, &yz}, StatusCode::kInvalidArgument, "channels");
  // float X is not a quantized input.
  Tensor xf = make_tensor<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  Tensor wf = make_tensor<uint8_t>({1, 1, 1, 1}, {1});
  expect_error({"ConvInteger", {}, 10}, {&xf, &wf}, StatusCode::kUnimplemented, "int8");
  // x_zero_point of X's dtype only.
  Tensor wi = make_tensor<uint8_t>({2, 2, 1, 1}, {1, 1, 1, 1});
  Tensor bad_z = make_tensor<int8_t>({}, {1});
  expect_error({"ConvInteger", {}, 10}, {&x, &wi, &bad_z}, StatusCode::kInvalidArgument, "x_zero_point");
}

}  // namespace
}  // namespace tessera
