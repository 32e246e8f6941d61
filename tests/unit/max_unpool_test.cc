#include <gtest/gtest.h>

#include "op_test_util.h"

namespace tessera {
namespace {

using testing::attr_ints;
using testing::make_tensor;
using testing::run1;
using testing::run_op;
using testing::to_vector;

std::vector<Attribute> k2s2() { return {attr_ints("kernel_shape", {2, 2}), attr_ints("strides", {2, 2})}; }

// The ONNX MaxUnpool example: a 2x2 pool of a 4x4 plane; I holds flat indices 5, 7, 13, 15
// ((1,1), (1,3), (3,1), (3,3)). Unpooled: (2 - 1) * 2 + 2 = 4 per dim.
TEST(RefMaxUnpool, ScattersIntoTheInferredShape) {
  Tensor x = make_tensor<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  Tensor i = make_tensor<int64_t>({1, 1, 2, 2}, {5, 7, 13, 15});
  Tensor y = run1({"MaxUnpool", k2s2(), 11}, {&x, &i});
  EXPECT_EQ(y.shape(), (Shape{1, 1, 4, 4}));
  EXPECT_EQ(to_vector<float>(y), (std::vector<float>{0, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4}));
}

// With output_shape [1, 1, 5, 5], I still indexes the 4x4 unpooled plane, which fills the
// leading corner (ONNX node test test_maxunpool_export_with_output_shape).
TEST(RefMaxUnpool, OutputShapeContainsTheUnpooledTensor) {
  Tensor x = make_tensor<float>({1, 1, 2, 2}, {5, 6, 7, 8});
  Tensor i = make_tensor<int64_t>({1, 1, 2, 2}, {5, 7, 13, 15});
  Tensor os = make_tensor<int64_t>({4}, {1, 1, 5, 5});
  auto r = run_op({"MaxUnpool", k2s2(), 11}, {&x, &i, &os}, {2});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r.value()[0].shape(), (Shape{1, 1, 5, 5}));
  EXPECT_EQ(to_vector<float>(r.value()[0]), (std::vector<float>{0, 0, 0, 0, 0, 0, 5, 0, 6, 0, 0, 0, 0, 0, 0,
                                                                0, 7, 0, 8, 0, 0, 0, 0, 0, 0}));
}

// 1-D, two channels, kernel 3 stride 1: unpooled length (2 - 1) + 3 = 4; indices cover the
// whole [1, 2, 4] tensor (channel 1 is 4..7). A repeated index keeps the last value; int64
// data is moved as is.
TEST(RefMaxUnpool, OneDimensionalTwoChannelsAnyDtype) {
  Tensor x = make_tensor<int64_t>({1, 2, 2}, {10, 20, 30, 40});
  Tensor i = make_tensor<int64_t>({1, 2, 2}, {1, 3, 6, 6});
  Tensor y = run1({"MaxUnpool", {attr_ints("kernel_shape", {3})}, 11}, {&x, &i});
  EXPECT_EQ(to_vector<int64_t>(y), (std::vector<int64_t>{0, 10, 0, 20, 0, 0, 40, 0}));
  // pads shrink the unpooled size: (2 - 1) * 2 - 1 - 0 + 2 = 3.
  Tensor xf = make_tensor<float>({1, 1, 2}, {1, 2});
  Tensor i2 = make_tensor<int64_t>({1, 1, 2}, {0, 2});
  Tensor yp = run1({"MaxUnpool", {attr_ints("kernel_shape", {2}), attr_ints("strides", {2}), attr_ints("pads", {1, 0})}, 11},
                   {&xf, &i2});
  EXPECT_EQ(to_vector<float>(yp), (std::vector<float>{1, 0, 2}));
}

TEST(RefMaxUnpool, BadInputsAreErrorsNamingTheNode) {
  Tensor x = make_tensor<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  // Planning errors name the node; run-time errors (bad index values) name the op, and the
  // executor adds the node's name.
  auto expect_error = [](const Result<std::vector<Tensor>>& r, const char* what, bool at_run = false) {
    ASSERT_FALSE(r.is_ok()) << what;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().to_string();
    EXPECT_NE(r.status().message().find(at_run ? "MaxUnpool:" : "test_MaxUnpool"), std::string::npos) << r.status().to_string();
    EXPECT_NE(r.status().message().find(what), std::string::npos) << r.status().to_string();
  };
  Tensor out_of_range = make_tensor<int64_t>({1, 1, 2, 2}, {5, 7, 13, 16});
  expect_error(run_op({"MaxUnpool", k2s2(), 11}, {&x, &out_of_range}), "index 16", true);
  Tensor negative = make_tensor<int64_t>({1, 1, 2, 2}, {-1, 7, 13, 15});
  expect_error(run_op({"MaxUnpool", k2s2(), 11}, {&x, &negative}), "index -1", true);
  Tensor i = make_tensor<int64_t>({1, 1, 2, 2}, {5, 7, 13, 15});
  expect_error(run_op({"MaxUnpool", {}, 11}, {&x, &i}), "kernel_shape");
  expect_error(run_op({"MaxUnpool", {attr_ints("kernel_shape", {2})}, 11}, {&x, &i}), "kernel_shape");
  expect_error(run_op({"MaxUnpool", {attr_ints("kernel_shape", {2, 2}), attr_ints("strides", {0, 2})}, 11}, {&x, &i}),
               "strides");
  Tensor small = make_tensor<int64_t>({4}, {1, 1, 3, 5});
  expect_error(run_op({"MaxUnpool", k2s2(), 11}, {&x, &i, &small}, {2}), "smaller");
  Tensor short_shape = make_tensor<int64_t>({2}, {4, 4});
  expect_error(run_op({"MaxUnpool", k2s2(), 11}, {&x, &i, &short_shape}, {2}), "output_shape");
  Tensor i32 = make_tensor<int32_t>({1, 1, 2, 2}, {5, 7, 13, 15});
  expect_error(run_op({"MaxUnpool", k2s2(), 11}, {&x, &i32}), "int64");
  Tensor i_shape = make_tensor<int64_t>({1, 1, 4}, {5, 7, 13, 15});
  expect_error(run_op({"MaxUnpool", k2s2(), 11}, {&x, &i_shape}), "X's shape");
  Tensor x2 = make_tensor<float>({2, 2}, {1, 2, 3, 4});
  Tensor i2 = make_tensor<int64_t>({2, 2}, {0, 1, 2, 3});
  expect_error(run_op({"MaxUnpool", {attr_ints("kernel_shape", {})}, 11}, {&x2, &i2}), "rank");
}

}  // namespace
}  // namespace tessera
