// Reference kernels MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool. Expected values
// were computed with onnxruntime 1.20 on a single-node model fed the same seq() inputs
// (the expression is above each table).
#include "ref_a_util.h"

namespace tessera {
namespace {

using testing::attr_i;
using testing::attr_ints;
using testing::attr_s;
using testing::expect_error;
using testing::expect_near;
using testing::make_tensor;
using testing::run_ok;
using testing::seq;
using testing::to_vector;

TEST(RefMaxPool, Kernel3Stride2Pad1WithIndices) {
  Tensor x = seq({1, 2, 7, 7}, 7, 23);
  auto out = run_ok({"MaxPool", {attr_ints("kernel_shape", {3, 3}), attr_ints("strides", {2, 2}), attr_ints("pads", {1, 1, 1, 1})}, 12, 2},
                    {&x});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape(), (Shape{1, 2, 4, 4}));
  // ort(MaxPool, opset 12, kernel_shape=[3,3], strides=[2,2], pads=[1,1,1,1]), outputs Y, Indices
  expect_near(to_vector<float>(out[0]), {-0.25f, 2.5f, 2.5f, 2.75f, 1.25f, 2.25f, 2.5f, 2.75f, 2.75f, 2.75f, 2.5f,
                                         2.5f, 2.75f, 2.75f, 2.25f, 0.75f, 2.5f, 2.75f, 2.75f, 2.25f, 0.75f, 2.75f,
                                         2.75f, 2.25f, 2.25f, 2.5f, 2.75f, 2.75f, 2.25f, 2.25f, 2.5f, 0.25f});
  EXPECT_EQ(to_vector<int64_t>(out[1]), (std::vector<int64_t>{8, 3, 3, 13, 22, 16, 26, 13, 36, 36, 26, 26, 36, 36, 39, 48,
                                                              49, 59, 59, 62, 71, 59, 59, 62, 85, 72, 82, 82, 85, 85, 95, 97}));
}

TEST(RefMaxPool, OmittedIndicesOutput) {
  Tensor x = seq({1, 1, 5, 5}, 7, 23);
  auto out = testing::run_op_with_omitted_outputs(
      {"MaxPool", {attr_ints("kernel_shape", {2, 2}), attr_ints("strides", {2, 2}), attr_i("ceil_mode", 1)}, 12}, {&x},
      {true, false});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  // Same values as CeilMode below (onnxruntime).
  expect_near(to_vector<float>(out.value()[0]), {2.f, 2.5f, 1.5f, 2.25f, 2.75f, 1.75f, -0.5f, 1.25f, -1.f});
}

TEST(RefMaxPool, CeilMode) {
  Tensor x = seq({1, 1, 5, 5}, 7, 23);
  auto out = run_ok({"MaxPool", {attr_ints("kernel_shape", {2, 2}), attr_ints("strides", {2, 2}), attr_i("ceil_mode", 1)}, 12, 2},
                    {&x});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape(), (Shape{1, 1, 3, 3}));
  // ort(MaxPool, opset 12, kernel_shape=[2,2], strides=[2,2], ceil_mode=1)
  expect_near(to_vector<float>(out[0]), {2.f, 2.5f, 1.5f, 2.25f, 2.75f, 1.75f, -0.5f, 1.25f, -1.f});
  EXPECT_EQ(to_vector<int64_t>(out[1]), (std::vector<int64_t>{6, 3, 9, 16, 13, 19, 21, 22, 24}));
}

TEST(RefMaxPool, CeilModeDropsWindowStartingInEndPadding) {
  // in 5, kernel 2, stride 2, pads 1+1: ceil((5+2-2)/2)+1 = 4 windows, but the 4th would
  // start at 5 (in the end padding), so ONNX shape inference (and PyTorch) give 3.
  Tensor x = testing::make_tensor<float>({1, 1, 5}, {0.f, 1.f, 2.f, 3.f, 4.f});
  auto out = run_ok({"MaxPool", {attr_ints("kernel_shape", {2}), attr_ints("strides", {2}), attr_ints("pads", {1, 1}),
                                 attr_i("ceil_mode", 1)}, 12},
                    {&x});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{1, 1, 3}));
  EXPECT_EQ(to_vector<float>(out[0]), (std::vector<float>{0.f, 2.f, 4.f}));
}

TEST(RefMaxPool, SameWithNegativeTotalPadding) {
  // in 6, kernel 1, stride 3: out = ceil(6/3) = 2 and total pad = (2-1)*3 + 1 - 6 = -2 is
  // kept for pooling (onnxruntime: SAME_UPPER begins at -(-2/2) = 1, SAME_LOWER at 0).
  Tensor x = make_tensor<float>({1, 1, 6}, {0.f, 1.f, 2.f, 3.f, 4.f, 5.f});
  auto up = run_ok({"MaxPool", {attr_ints("kernel_shape", {1}), attr_ints("strides", {3}), attr_s("auto_pad", "SAME_UPPER")}, 12}, {&x});
  auto lo = run_ok({"MaxPool", {attr_ints("kernel_shape", {1}), attr_ints("strides", {3}), attr_s("auto_pad", "SAME_LOWER")}, 12}, {&x});
  ASSERT_EQ(up.size(), 1u);
  ASSERT_EQ(lo.size(), 1u);
  // ort(MaxPool, opset 12, kernel_shape=[1], strides=[3], auto_pad=SAME_UPPER / SAME_LOWER)
  EXPECT_EQ(to_vector<float>(up[0]), (std::vector<float>{1.f, 4.f}));
  EXPECT_EQ(to_vector<float>(lo[0]), (std::vector<float>{0.f, 3.f}));
}

TEST(RefMaxPool, Dilations1d) {
  Tensor x = seq({1, 2, 10}, 7, 23);
  auto out = run_ok({"MaxPool", {attr_ints("kernel_shape", {3}), attr_ints("dilations", {2})}, 12}, {&x});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{1, 2, 6}));
  // ort(MaxPool, opset 12, kernel_shape=[3], dilations=[2])
  expect_near(to_vector<float>(out[0]), {0.75f, 2.5f, 2.f, 2.5f, 2.f, 1.5f, 1.f, 2.75f, 2.25f, 2.75f, 2.25f, 1.75f});
}

TEST(RefMaxPool, StorageOrderColumnMajorIndices) {
  Tensor x = seq({1, 1, 4, 3}, 7, 23);
  auto out = run_ok({"MaxPool", {attr_ints("kernel_shape", {2, 2}), attr_i("storage_order", 1)}, 12, 2}, {&x});
  ASSERT_EQ(out.size(), 2u);
  // ort(MaxPool, opset 12, kernel_shape=[2,2], storage_order=1)
  expect_near(to_vector<float>(out[0]), {2.5f, 0.75f, 2.5f, 0.25f, 2.f, -0.25f});
  EXPECT_EQ(to_vector<int64_t>(out[1]), (std::vector<int64_t>{1, 8, 1, 9, 2, 10}));
}

TEST(RefMaxPool, Int8AndSizeOne) {
  Tensor x = testing::make_tensor<int8_t>({1, 1, 1, 1}, {-7});
  auto out = run_ok({"MaxPool", {attr_ints("kernel_shape", {1, 1})}, 12}, {&x});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(to_vector<int8_t>(out[0]), (std::vector<int8_t>{-7}));
}

TEST(RefMaxPool, Errors) {
  Tensor x = seq({1, 1, 5, 5});
  expect_error({"MaxPool", {}}, {&x}, StatusCode::kInvalidArgument, "kernel_shape");
  expect_error({"MaxPool", {attr_ints("kernel_shape", {2, 2}), attr_ints("pads", {2, 2, 2, 2})}}, {&x},
               StatusCode::kInvalidArgument, "smaller than the kernel");
  expect_error({"MaxPool", {attr_ints("kernel_shape", {2})}}, {&x}, StatusCode::kInvalidArgument, "kernel_shape");
  expect_error({"MaxPool", {attr_ints("kernel_shape", {6, 6})}}, {&x}, StatusCode::kInvalidArgument, "larger");
  expect_error({"MaxPool", {attr_ints("kernel_shape", {2, 2}), attr_ints("strides", {1, -1})}}, {&x},
               StatusCode::kInvalidArgument, "strides");
  Tensor i = testing::make_tensor<int32_t>({1, 1, 2, 2}, {1, 2, 3, 4});
  expect_error({"MaxPool", {attr_ints("kernel_shape", {2, 2})}}, {&i}, StatusCode::kUnimplemented, "int32");
}

TEST(RefAveragePool, CountIncludePad) {
  Tensor x = seq({1, 2, 5, 6}, 7, 23);
  auto ex = run_ok({"AveragePool", {attr_ints("kernel_shape", {3, 3}), attr_ints("strides", {2, 2}), attr_ints("pads", {1, 1, 1, 1})}, 11},
                   {&x});
  auto in = run_ok({"AveragePool", {attr_ints("kernel_shape", {3, 3}), attr_ints("strides", {2, 2}), attr_ints("pads", {1, 1, 1, 1}),
                                    attr_i("count_include_pad", 1)}, 11},
                   {&x});
  ASSERT_EQ(ex.size(), 1u);
  ASSERT_EQ(in.size(), 1u);
  EXPECT_EQ(ex[0].shape(), (Shape{1, 2, 3, 3}));
  // ort(AveragePool, opset 11, kernel_shape=[3,3], strides=[2,2], pads=[1,1,1,1])
  expect_near(to_vector<float>(ex[0]), {-0.9375f, 0.25f, -0.08333334f, 0.9166667f, 0.02777778f, -0.3055556f, 0.375f,
                                        0.125f, -0.2083333f, -0.1875f, 0.04166667f, -0.2916667f, 0.7083333f, 0.1388889f,
                                        -0.1944444f, 1.125f, -0.08333334f, 0.5416667f});
  // ... the same with count_include_pad=1
  expect_near(to_vector<float>(in[0]), {-0.4166667f, 0.1666667f, -0.05555556f, 0.6111111f, 0.02777778f, -0.3055556f,
                                        0.1666667f, 0.08333334f, -0.1388889f, -0.08333334f, 0.02777778f, -0.1944444f,
                                        0.4722222f, 0.1388889f, -0.1944444f, 0.5f, -0.05555556f, 0.3611111f});
}

TEST(RefAveragePool, CeilModeWithAndWithoutPadCounting) {
  Tensor x = seq({1, 2, 5, 6}, 7, 23);
  std::vector<Attribute> attrs = {attr_ints("kernel_shape", {2, 3}), attr_ints("strides", {2, 2}),
                                  attr_ints("pads", {1, 1, 0, 1}), attr_i("ceil_mode", 1)};
  auto ex = run_ok({"AveragePool", attrs, 11}, {&x});
  attrs.push_back(attr_i("count_include_pad", 1));
  auto in = run_ok({"AveragePool", attrs, 11}, {&x});
  ASSERT_EQ(ex.size(), 1u);
  ASSERT_EQ(in.size(), 1u);
  EXPECT_EQ(ex[0].shape(), (Shape{1, 2, 3, 4}));
  // ort(AveragePool, opset 11, kernel_shape=[2,3], strides=[2,2], pads=[1,1,0,1], ceil_mode=1)
  expect_near(to_vector<float>(ex[0]), {-1.875f, 0.75f, 0.4166667f, 0.25f, 0.9375f, 0.2083333f, -0.125f, -1.25f, 0.375f,
                                        0.125f, -0.2083333f, -0.375f, -1.125f, -0.4166667f, -0.75f, 1.f, 0.25f, 0.f,
                                        -0.3333333f, -0.5f, 1.125f, -0.08333334f, 0.5416667f, 0.375f});
  // ... the same with count_include_pad=1 (a window reaching past the end pad still divides by 6)
  expect_near(to_vector<float>(in[0]), {-0.625f, 0.375f, 0.2083333f, 0.04166667f, 0.625f, 0.2083333f, -0.125f,
                                        -0.4166667f, 0.25f, 0.125f, -0.2083333f, -0.125f, -0.375f, -0.2083333f, -0.375f,
                                        0.1666667f, 0.1666667f, 0.f, -0.3333333f, -0.1666667f, 0.75f, -0.08333334f,
                                        0.5416667f, 0.125f});
}

TEST(RefAveragePool, SameUpperOddKernel) {
  Tensor x = seq({1, 2, 5, 6}, 7, 23);
  auto out = run_ok({"AveragePool", {attr_ints("kernel_shape", {2, 3}), attr_s("auto_pad", "SAME_UPPER")}, 11}, {&x});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{1, 2, 5, 6}));
  // ort(AveragePool, opset 11, kernel_shape=[2,3], auto_pad=SAME_UPPER)
  expect_near(to_vector<float>(out[0]),
              {-0.9375f, -0.5416667f, 0.25f, 0.08333334f, -0.08333334f, -1.125f, 0.9375f, 0.375f, 0.2083333f,
               0.04166667f, -0.125f, -0.6875f, 1.375f, 0.3333333f, 0.1666667f, 0.f, -0.1666667f, -0.25f, 0.375f,
               0.2916667f, 0.125f, -0.04166667f, -0.2083333f, 0.1875f, -0.125f, 0.75f, 0.5833333f, 0.4166667f, 0.25f,
               1.125f, -0.1875f, 0.2083333f, 0.04166667f, -0.125f, -0.2916667f, -0.375f, 0.25f, 0.1666667f, 0.f,
               -0.1666667f, -0.3333333f, -1.375f, 0.6875f, 0.125f, -0.04166667f, -0.2083333f, -0.375f, -0.9375f,
               1.125f, 0.08333334f, -0.08333334f, -0.25f, 0.5416667f, 0.9375f, 0.625f, -0.4166667f, -0.5833333f,
               -0.75f, 1.f, 1.875f});
}

TEST(RefAveragePool, Dilations1dOpset19) {
  Tensor x = seq({1, 1, 9}, 7, 23);
  auto out = run_ok({"AveragePool", {attr_ints("kernel_shape", {3}), attr_ints("dilations", {2}), attr_ints("strides", {2})}, 19},
                    {&x});
  ASSERT_EQ(out.size(), 1u);
  // ort(AveragePool, opset 19, kernel_shape=[3], dilations=[2], strides=[2])
  expect_near(to_vector<float>(out[0]), {-1.166667f, 0.4166667f, 0.08333334f});
}

TEST(RefAveragePool, Errors) {
  Tensor x = seq({1, 1, 4, 4});
  expect_error({"AveragePool", {attr_ints("kernel_shape", {2, 2}), attr_i("count_include_pad", 2)}}, {&x},
               StatusCode::kInvalidArgument, "count_include_pad");
  expect_error({"AveragePool", {attr_ints("kernel_shape", {0, 2})}}, {&x}, StatusCode::kInvalidArgument, "kernel_shape");
}

TEST(RefGlobalPool, AverageAndMax) {
  Tensor x = seq({2, 3, 5, 7}, 7, 23);
  auto avg = run_ok({"GlobalAveragePool"}, {&x});
  auto mx = run_ok({"GlobalMaxPool"}, {&x});
  ASSERT_EQ(avg.size(), 1u);
  ASSERT_EQ(mx.size(), 1u);
  EXPECT_EQ(avg[0].shape(), (Shape{2, 3, 1, 1}));
  // ort(GlobalAveragePool) / ort(GlobalMaxPool)
  expect_near(to_vector<float>(avg[0]), {-0.1071429f, 0.02857143f, 0.f, -0.02857143f, 0.1071429f, -0.08571429f}, 1e-5f, 1e-6f);
  expect_near(to_vector<float>(mx[0]), {2.75f, 2.75f, 2.75f, 2.75f, 2.75f, 2.75f});
  Tensor one = testing::make_tensor<float>({1, 2, 1}, {-1.f, 4.f});
  auto a1 = run_ok({"GlobalAveragePool"}, {&one});
  ASSERT_EQ(a1.size(), 1u);
  EXPECT_EQ(a1[0].shape(), (Shape{1, 2, 1}));
  EXPECT_EQ(to_vector<float>(a1[0]), (std::vector<float>{-1.f, 4.f}));
  Tensor flat = seq({2, 3});
  expect_error({"GlobalAveragePool"}, {&flat}, StatusCode::kInvalidArgument, "rank");
  expect_error({"GlobalMaxPool"}, {&flat}, StatusCode::kInvalidArgument, "rank");
}

}  // namespace
}  // namespace tessera
