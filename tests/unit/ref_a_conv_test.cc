// Reference kernels Conv and ConvTranspose. Expected values were computed with onnxruntime
// 1.20 on a single-node model (CPUExecutionProvider) fed the same seq() inputs; the
// expression is given above each table, e.g. ort(Conv, opset 11, strides=[2,1], ...).
#include "ref_a_util.h"
#include "runtime/ops/spatial_attrs.h"

namespace tessera {
namespace {

using testing::attr_i;
using testing::attr_ints;
using testing::attr_s;
using testing::expect_error;
using testing::expect_near;
using testing::run_ok;
using testing::seq;
using testing::to_vector;

TEST(RefConv, Conv2dStridesPadsDilationsBias) {
  Tensor x = seq({1, 3, 5, 7}), w = seq({4, 3, 3, 3}, 5, 13), b = seq({4}, 3, 7);
  auto out = run_ok({"Conv", {attr_ints("strides", {2, 1}), attr_ints("pads", {1, 0, 2, 1}), attr_ints("dilations", {1, 2})}, 11},
                    {&x, &w, &b});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{1, 4, 3, 4}));
  // ort(Conv, opset 11, strides=[2,1], pads=[1,0,2,1], dilations=[1,2])
  expect_near(to_vector<float>(out[0]),
              {2.625f, 2.1875f, -3.75f, -4.125f, -11.6875f, 4.25f, -0.4375f, 0.6875f, 5.125f, 2.75f, -5.125f, 2.875f,
               -0.1875f, 0.5f, -0.1875f, 2.f, 6.125f, 1.5625f, -9.1875f, 1.3125f, -1.9375f, 0.75f, 6.1875f, -0.6875f,
               -3.f, -1.1875f, 3.375f, 3.25f, 2.f, -5.1875f, 4.8125f, 4.375f, 4.8125f, -5.3125f, -4.4375f, 3.0625f,
               3.8125f, 4.3125f, -6.1875f, -2.125f, 1.f, 3.375f, 1.625f, -5.6875f, -4.f, 3.125f, 2.6875f, -3.875f});
}

TEST(RefConv, Conv1dGroupsBatch2NoBias) {
  Tensor x = seq({2, 4, 9}), w = seq({6, 2, 3}, 5, 13);
  auto out = run_ok({"Conv", {attr_ints("strides", {2}), attr_ints("pads", {1, 1}), attr_i("group", 2)}, 11}, {&x, &w});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{2, 6, 5}));
  // ort(Conv, opset 11, strides=[2], pads=[1,1], group=2)
  expect_near(to_vector<float>(out[0]),
              {0.625f, 1.3125f, -1.4375f, -1.4375f, 1.25f, -0.4375f, -4.125f, -1.0625f, 2.f, 0.5f, 0.9375f, 1.8125f,
               1.75f, -1.0625f, -0.25f, 0.5f, -4.5625f, 1.5625f, 2.875f, 1.125f, -0.25f, 2.25f, 0.0625f, -4.1875f,
               -1.4375f, 1.4375f, 1.75f, -3.875f, 0.125f, 1.6875f, -0.6875f, 2.f, -1.4375f, -1.4375f, 1.875f, 1.625f,
               -0.5625f, -0.9375f, 2.125f, 0.125f, -2.5625f, -0.6875f, 2.f, -0.8125f, 0.f, 0.125f, -5.f, -0.25f,
               2.4375f, 1.1875f, 0.f, 2.75f, 1.9375f, -0.9375f, -1.5625f, 1.5f, 1.5625f, 0.0625f, -3.5f, 1.375f});
}

TEST(RefConv, DepthwiseAutoPadSameUpperAndLower) {
  Tensor x = seq({1, 3, 4, 5}), w = seq({3, 1, 3, 3}, 5, 13);
  auto up = run_ok({"Conv", {attr_ints("strides", {2, 2}), attr_s("auto_pad", "SAME_UPPER"), attr_i("group", 3)}, 11}, {&x, &w});
  auto lo = run_ok({"Conv", {attr_ints("strides", {2, 2}), attr_s("auto_pad", "SAME_LOWER"), attr_i("group", 3)}, 11}, {&x, &w});
  ASSERT_EQ(up.size(), 1u);
  ASSERT_EQ(lo.size(), 1u);
  EXPECT_EQ(up[0].shape(), (Shape{1, 3, 2, 3}));
  // ort(Conv, opset 11, strides=[2,2], auto_pad=SAME_UPPER, group=3)
  expect_near(to_vector<float>(up[0]), {3.5f, -0.25f, 0.4375f, -2.25f, 2.25f, 0.1875f, 0.375f, -0.25f, -1.875f,
                                        -1.375f, 1.0625f, -1.25f, -0.875f, -2.75f, -0.75f, 0.125f, 2.f, -0.3125f});
  // ort(Conv, opset 11, strides=[2,2], auto_pad=SAME_LOWER, group=3)
  expect_near(to_vector<float>(lo[0]), {-1.375f, 2.f, -0.125f, 0.375f, -0.75f, 1.375f, -2.25f, 2.875f, 2.f, 3.5f,
                                        0.1875f, -3.125f, -0.25f, 1.5625f, -0.25f, -2.f, -2.75f, -1.f});
}

TEST(RefConv, Conv3dValidWithBias) {
  Tensor x = seq({1, 2, 3, 4, 5}), w = seq({2, 2, 2, 2, 2}, 5, 13), b = seq({2}, 3, 7);
  auto out = run_ok({"Conv", {attr_s("auto_pad", "VALID")}, 11}, {&x, &w, &b});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{1, 2, 2, 3, 4}));
  // ort(Conv, opset 11, auto_pad=VALID)
  expect_near(to_vector<float>(out[0]),
              {1.4375f, -5.375f, 0.1875f, -4.5625f, 3.8125f, -5.0625f, 2.5625f, 1.25f, 0.6875f, 1.4375f, -5.375f,
               0.1875f, -5.5625f, 0.6875f, 1.4375f, -5.375f, -4.5625f, 2.375f, 3.8125f, -5.0625f, 1.25f, -5.5625f,
               0.6875f, 1.4375f, 4.5625f, 3.125f, -3.8125f, 0.9375f, 2.1875f, 1.4375f, -4.8125f, 2.f, -4.3125f,
               4.5625f, 3.125f, -3.8125f, 3.3125f, -4.3125f, 4.5625f, 3.125f, 0.9375f, -4.625f, 2.1875f, 1.4375f, 2.f,
               3.3125f, -4.3125f, 4.5625f});
}

TEST(RefConv, SizeOneAndKernelShapeAttribute) {
  Tensor x = testing::make_tensor<float>({1, 1, 1, 1}, {3.f});
  Tensor w = testing::make_tensor<float>({1, 1, 1, 1}, {-2.f});
  Tensor b = testing::make_tensor<float>({1}, {0.5f});
  auto out = run_ok({"Conv", {attr_ints("kernel_shape", {1, 1})}, 7}, {&x, &w, &b});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{1, 1, 1, 1}));
  EXPECT_EQ(to_vector<float>(out[0]), (std::vector<float>{-5.5f}));  // 3 * -2 + 0.5
}

TEST(RefConv, HostileAttributesAreErrors) {
  Tensor x = seq({1, 4, 5, 5}), w = seq({6, 2, 3, 3});
  expect_error({"Conv", {attr_i("group", 3)}}, {&x, &w}, StatusCode::kInvalidArgument, "group");
  expect_error({"Conv", {attr_i("group", 0)}}, {&x, &w}, StatusCode::kInvalidArgument, "group");
  expect_error({"Conv", {attr_i("group", int64_t{1} << 62)}}, {&x, &w}, StatusCode::kInvalidArgument, "group");
  Tensor w4 = seq({6, 1, 3, 3});
  expect_error({"Conv", {attr_i("group", 4)}}, {&x, &w4}, StatusCode::kInvalidArgument, "divisible");
  expect_error({"Conv", {attr_i("group", 2), attr_ints("strides", {0, 1})}}, {&x, &w}, StatusCode::kInvalidArgument, "strides");
  expect_error({"Conv", {attr_i("group", 2), attr_ints("pads", {1, 1})}}, {&x, &w}, StatusCode::kInvalidArgument, "pads");
  expect_error({"Conv", {attr_i("group", 2), attr_ints("pads", {-1, 0, 0, 0})}}, {&x, &w}, StatusCode::kInvalidArgument, "pads");
  expect_error({"Conv", {attr_i("group", 2), attr_ints("kernel_shape", {2, 2})}}, {&x, &w}, StatusCode::kInvalidArgument,
               "kernel_shape");
  expect_error({"Conv", {attr_i("group", 2), attr_ints("dilations", {4, 1})}}, {&x, &w}, StatusCode::kInvalidArgument,
               "larger than the padded input");
  expect_error({"Conv", {attr_i("group", 2), attr_s("auto_pad", "SAME")}}, {&x, &w}, StatusCode::kInvalidArgument, "auto_pad");
  Tensor bad_b = seq({5});
  expect_error({"Conv", {attr_i("group", 2)}}, {&x, &w, &bad_b}, StatusCode::kInvalidArgument, "B");
  Tensor x2 = seq({4, 5});
  expect_error({"Conv"}, {&x2, &w}, StatusCode::kInvalidArgument, "rank");
}

TEST(RefConvTranspose, Stride2Kernel2WithBias) {
  Tensor x = seq({1, 2, 3, 3}), w = seq({2, 3, 2, 2}, 5, 13), b = seq({3}, 3, 7);
  auto out = run_ok({"ConvTranspose", {attr_ints("strides", {2, 2})}, 11}, {&x, &w, &b});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{1, 3, 6, 6}));
  // ort(ConvTranspose, opset 11, strides=[2,2])
  expect_near(to_vector<float>(out[0]),
              {1.5f, -1.5625f, -1.625f, -0.5f, -0.625f, 1.25f, -2.1875f, 1.25f, -0.1875f, -1.5f, -0.9375f, -1.5f,
               -2.375f, -1.8125f, -1.375f, -0.0625f, 1.f, -2.4375f, 0.375f, -1.5f, -0.375f, -1.5f, -1.8125f, 1.25f,
               -2.125f, -1.375f, -1.125f, 0.375f, 1.25f, -2.f, 0.1875f, -1.5f, -0.5625f, -1.5f, -2.f, 1.25f, -1.0625f,
               -1.6875f, 0.375f, 0.6875f, 1.125f, -1.0625f, 1.75f, -1.3125f, -0.625f, 0.5f, -1.625f, 0.25f, -0.1875f,
               2.f, 0.5625f, 0.25f, -1.4375f, -0.8125f, 0.125f, 0.6875f, -0.875f, 0.4375f, 2.25f, -1.1875f, 0.f,
               1.5625f, 0.75f, -0.1875f, -1.25f, -1.25f, -0.125f, 0.625f, -1.125f, 0.375f, 2.f, -1.25f, 2.875f,
               -0.1875f, -0.0625f, 1.0625f, 0.4375f, 2.3125f, -0.8125f, 2.625f, 1.375f, 0.0625f, 0.125f, -0.4375f,
               -0.4375f, 0.125f, 0.0625f, 1.375f, 2.625f, -0.8125f, 2.3125f, 0.4375f, 1.0625f, -0.0625f, -0.1875f,
               2.875f, -0.3125f, 0.4375f, 0.1875f, 1.6875f, 2.75f, -0.5f, 2.f, 0.3125f, 0.75f, -0.1875f, -0.5f, 2.75f});
}

TEST(RefConvTranspose, PadsAndOutputPadding) {
  Tensor x = seq({1, 2, 3, 2}), w = seq({2, 1, 3, 3}, 5, 13);
  auto out = run_ok({"ConvTranspose", {attr_ints("strides", {2, 2}), attr_ints("pads", {1, 1, 1, 1}),
                                       attr_ints("output_padding", {1, 1})}, 11},
                    {&x, &w});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{1, 1, 6, 4}));
  // ort(ConvTranspose, opset 11, strides=[2,2], pads=[1,1,1,1], output_padding=[1,1])
  expect_near(to_vector<float>(out[0]),
              {-1.8125f, -2.625f, 0.125f, 0.75f, -3.0625f, -0.0625f, 1.f, 0.0625f, 1.375f, -1.375f, -0.8125f, 1.6875f,
               0.25f, 2.0625f, -1.1875f, -1.1875f, 0.4375f, 0.5625f, 1.6875f, -0.8125f, 0.4375f, -1.25f, 0.6875f, 0.625f});
}

TEST(RefConvTranspose, Conv1dGroupsDilations) {
  Tensor x = seq({1, 4, 5}), w = seq({4, 1, 3}, 5, 13);
  auto out = run_ok({"ConvTranspose", {attr_i("group", 2), attr_ints("dilations", {2})}, 11}, {&x, &w});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{1, 2, 9}));
  // ort(ConvTranspose, opset 11, group=2, dilations=[2])
  expect_near(to_vector<float>(out[0]), {2.625f, -1.75f, 0.875f, -0.75f, -3.375f, 1.4375f, -0.375f, -0.25f, 1.375f,
                                         0.125f, 0.625f, -0.125f, -1.625f, 1.125f, 1.75f, -1.6875f, 0.625f, -0.8125f});
}

TEST(RefConvTranspose, OutputShapeDerivesPads) {
  Tensor x = seq({1, 1, 3}), w = seq({1, 2, 3}, 5, 13);
  auto out = run_ok({"ConvTranspose", {attr_ints("strides", {2}), attr_ints("output_shape", {5})}, 11}, {&x, &w});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{1, 2, 5}));
  // ort(ConvTranspose, opset 11, strides=[2], output_shape=[5]) (total padding 2: even, so
  // the spec and onnxruntime agree on the split)
  expect_near(to_vector<float>(out[0]), {0.3125f, -2.f, -0.125f, 1.25f, 0.125f, -0.3125f, -2.375f, 0.125f, 1.25f, -0.125f});
}

TEST(RefConvTranspose, SameWithKernelSmallerThanStride) {
  // Spec: SAME gives out = in * stride (here 6) even though the full transposed size is
  // only 2 * 2 + 1 = 5; the total pad is clamped to 0, so the last position holds only the
  // bias. Hand-computed: y[2i] = x[i] * 2 + 1, y[odd] = 1. (onnxruntime gives 5 outputs.)
  Tensor x = testing::make_tensor<float>({1, 1, 3}, {1.f, 2.f, 3.f});
  Tensor w = testing::make_tensor<float>({1, 1, 1}, {2.f}), b = testing::make_tensor<float>({1}, {1.f});
  auto out = run_ok({"ConvTranspose", {attr_ints("strides", {2}), attr_s("auto_pad", "SAME_UPPER")}, 11}, {&x, &w, &b});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(to_vector<float>(out[0]), (std::vector<float>{3.f, 1.f, 5.f, 1.f, 7.f, 1.f}));
}

TEST(RefConvTranspose, SizeOneAndErrors) {
  Tensor x = testing::make_tensor<float>({1, 1, 1}, {2.f});
  Tensor w = testing::make_tensor<float>({1, 1, 1}, {-1.5f});
  auto out = run_ok({"ConvTranspose", {attr_ints("strides", {3})}, 11}, {&x, &w});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(to_vector<float>(out[0]), (std::vector<float>{-3.f}));
  Tensor x2 = seq({1, 4, 3, 3}), w2 = seq({4, 2, 3, 3});
  expect_error({"ConvTranspose", {attr_ints("strides", {2, 2}), attr_ints("output_padding", {2, 0})}}, {&x2, &w2},
               StatusCode::kInvalidArgument, "output_padding");
  expect_error({"ConvTranspose", {attr_i("group", 3)}}, {&x2, &w2}, StatusCode::kInvalidArgument, "group");
  expect_error({"ConvTranspose", {attr_i("group", int64_t{1} << 62)}}, {&x2, &w2}, StatusCode::kInvalidArgument, "group");
  expect_error({"ConvTranspose", {attr_ints("pads", {3, 3, 3, 3})}}, {&x2, &w2}, StatusCode::kInvalidArgument, "output spatial");
  Tensor w3 = seq({3, 2, 3, 3});
  expect_error({"ConvTranspose"}, {&x2, &w3}, StatusCode::kInvalidArgument, "channels");
  expect_error({"ConvTranspose", {attr_ints("strides", {int64_t{1} << 40, 1})}}, {&x2, &w2}, StatusCode::kInvalidArgument,
               "strides");
}

TEST(RefConvTranspose, HugeStrideTimesInputDoesNotOverflow) {
  // stride 2^30 over an input dim of 2^33 would overflow int64 in the size formula; the
  // schema must reject it without allocating anything.
  Node node;
  node.name = "big";
  node.op_type = "ConvTranspose";
  node.opset = 11;
  node.attributes = {attr_ints("strides", {int64_t{1} << 30})};
  auto g = conv_transpose_geometry(node, {1, 1, int64_t{1} << 33}, {1, 1, 1});
  ASSERT_FALSE(g.is_ok());
  EXPECT_NE(g.status().message().find("too large"), std::string::npos) << g.status().to_string();
}

}  // namespace
}  // namespace tessera
