// Section C1 reductions: ReduceL1, ReduceLogSum, ReduceLogSumExp. Expected values were
// computed with numpy 1.26 as stated at each check.
#include <gtest/gtest.h>

#include <cmath>

#include "op_test_util.h"

namespace tessera {
namespace {

using testing::attr_i;
using testing::attr_ints;
using testing::expect_near;
using testing::make_tensor;
using testing::run1;
using testing::run_op;
using testing::to_vector;

const std::vector<float> kX = {1, -2, 3, 4, -5, 6, 7, -8};

TEST(RefC1Reduce, L1AxisKeepdims) {
  Tensor x = make_tensor<float>({2, 2, 2}, kX);
  // numpy: np.sum(np.abs(x), axis=1, keepdims=True) = [[[4, 6]], [[12, 14]]]
  Tensor y = run1({"ReduceL1", {attr_ints("axes", {1})}, 13}, {&x});
  EXPECT_EQ(y.shape(), (Shape{2, 1, 2}));
  EXPECT_EQ(to_vector<float>(y), (std::vector<float>{4, 6, 12, 14}));
  Tensor axes = make_tensor<int64_t>({1}, {-2});
  Tensor y18 = run1({"ReduceL1", {attr_i("keepdims", 0)}, 18}, {&x, &axes}, {1});
  EXPECT_EQ(y18.shape(), (Shape{2, 2}));
  EXPECT_EQ(to_vector<float>(y18), (std::vector<float>{4, 6, 12, 14}));
  Tensor i = make_tensor<int32_t>({3}, {-3, 4, -5});
  EXPECT_EQ(to_vector<int32_t>(run1({"ReduceL1", {attr_i("keepdims", 0)}, 13}, {&i})), (std::vector<int32_t>{12}));
}

TEST(RefC1Reduce, LogSumAndLogSumExp) {
  Tensor x = make_tensor<float>({2, 2, 2}, kX);
  Tensor ax = make_tensor<float>({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  // numpy: np.log(np.sum(|x|, axis=2)) = [1.0986123, 1.9459102, 2.3978953, 2.7080502]
  expect_near(to_vector<float>(run1({"ReduceLogSum", {attr_ints("axes", {2}), attr_i("keepdims", 0)}, 13}, {&ax})),
              {1.0986123085021973f, 1.9459102153778076f, 2.397895336151123f, 2.70805025100708f});
  // numpy (float64): np.log(np.sum(np.exp(x))) = 7.363663995883203
  expect_near(to_vector<float>(run1({"ReduceLogSumExp", {attr_i("keepdims", 0)}, 13}, {&x})), {7.363663995883203f});
  // Large inputs do not overflow: numpy log(sum(exp(v - 1000.5))) + 1000.5 = 1001.1041306053368
  Tensor big = make_tensor<float>({3}, {1000, 1000.5f, 999});
  expect_near(to_vector<float>(run1({"ReduceLogSumExp", {}, 18}, {&big})), {1001.1041306053368f});
  // Empty reduction: log(0) = -inf.
  Tensor e = make_tensor<float>({0, 2}, {});
  Tensor axes = make_tensor<int64_t>({1}, {0});
  auto ls = to_vector<float>(run1({"ReduceLogSumExp", {}, 18}, {&e, &axes}, {1}));
  ASSERT_EQ(ls.size(), 2u);
  EXPECT_TRUE(std::isinf(ls[0]) && ls[0] < 0);
  EXPECT_FALSE(run_op({"ReduceLogSum", {attr_ints("axes", {3})}, 13}, {&x}).is_ok());
}

}  // namespace
}  // namespace tessera
