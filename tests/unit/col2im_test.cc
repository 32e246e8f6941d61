#include <gtest/gtest.h>

#include "op_test_util.h"

namespace tessera {
namespace {

using testing::attr_ints;
using testing::make_tensor;
using testing::run_op;
using testing::to_vector;

Result<std::vector<Tensor>> col2im(const Tensor& x, const std::vector<int64_t>& image, const std::vector<int64_t>& block,
                                   std::vector<Attribute> attrs = {}) {
  Tensor is = make_tensor<int64_t>({static_cast<int64_t>(image.size())}, image);
  Tensor bs = make_tensor<int64_t>({static_cast<int64_t>(block.size())}, block);
  return run_op({"Col2Im", std::move(attrs), 18}, {&x, &is, &bs}, {1, 2});
}

// All-ones 2x2 blocks at the 2x2 positions of a 3x3 image: each pixel counts the blocks
// that cover it (corners 1, edges 2, centre 4).
TEST(RefCol2Im, OverlappingBlocksAddUp) {
  Tensor x = make_tensor<float>({1, 4, 4}, std::vector<float>(16, 1.0f));
  auto r = col2im(x, {3, 3}, {2, 2});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r.value()[0].shape(), (Shape{1, 1, 3, 3}));
  EXPECT_EQ(to_vector<float>(r.value()[0]), (std::vector<float>{1, 2, 1, 2, 4, 2, 1, 2, 1}));
}

// 1-D, image 5, block 2, dilations 2, strides 2, pads (1, 1): (5 + 2 - 2 - 1) / 2 + 1 = 3
// positions; image index b * 2 - 1 + k * 2: k = 0 -> -1 (dropped), 1, 3; k = 1 -> 1, 3, 5
// (dropped). With rows a = (1, 2, 3), b = (10, 20, 30): Y = (0, 2 + 10, 0, 3 + 20, 0).
TEST(RefCol2Im, StridesDilationsAndPads) {
  Tensor x = make_tensor<double>({1, 2, 3}, {1, 2, 3, 10, 20, 30});
  auto r = col2im(x, {5}, {2}, {attr_ints("dilations", {2}), attr_ints("strides", {2}), attr_ints("pads", {1, 1})});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(to_vector<double>(r.value()[0]), (std::vector<double>{0, 12, 0, 23, 0}));
}

// 3-D image [2, 1, 2] with 1x1x1 blocks: Col2Im is a reshape of each (n, c) row; two
// batches and two channels check the channel/batch layout.
TEST(RefCol2Im, ThreeDimensionalBatchesAndChannels) {
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i) v[i] = static_cast<float>(i + 1);
  Tensor x = make_tensor<float>({2, 2, 4}, v);
  auto r = col2im(x, {2, 1, 2}, {1, 1, 1});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r.value()[0].shape(), (Shape{2, 2, 2, 1, 2}));
  EXPECT_EQ(to_vector<float>(r.value()[0]), v);
}

TEST(RefCol2Im, BadInputsAreErrorsNamingTheNode) {
  auto expect_error = [](const Result<std::vector<Tensor>>& r, const char* what) {
    ASSERT_FALSE(r.is_ok()) << what;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().to_string();
    EXPECT_NE(r.status().message().find("test_Col2Im"), std::string::npos) << r.status().to_string();
    EXPECT_NE(r.status().message().find(what), std::string::npos) << r.status().to_string();
  };
  Tensor x = make_tensor<float>({1, 4, 4}, std::vector<float>(16, 1.0f));
  expect_error(col2im(x, {3, 4}, {2, 2}), "number of sliding blocks");
  expect_error(col2im(x, {3, 3}, {3, 1}), "not divisible");
  expect_error(col2im(x, {3, 3}, {2}), "block_shape has 1");
  expect_error(col2im(x, {1, 1}, {2, 2}), "larger than the padded image");
  expect_error(col2im(x, {3, 3}, {2, 2}, {attr_ints("pads", {0, 0})}), "pads");
  expect_error(col2im(x, {3, 3}, {2, 2}, {attr_ints("strides", {0, 1})}), "strides");
  expect_error(col2im(x, {3, 3}, {0, 2}), "block_shape values");
  expect_error(col2im(x, {}, {}), "image_shape");
  Tensor x2 = make_tensor<float>({4, 4}, std::vector<float>(16, 1.0f));
  expect_error(col2im(x2, {3, 3}, {2, 2}), "input must be");
}

TEST(RefCol2Im, UnknownImageShapeAsksForPlanningByValue) {
  Tensor x = make_tensor<float>({1, 4, 4}, std::vector<float>(16, 1.0f));
  Tensor is = make_tensor<int64_t>({2}, {3, 3});
  Tensor bs = make_tensor<int64_t>({2}, {2, 2});
  auto r = run_op({"Col2Im", {}, 18}, {&x, &is, &bs}, {2});
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(r.status().message().find("before the run"), std::string::npos);
}

}  // namespace
}  // namespace tessera
