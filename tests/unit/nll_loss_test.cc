#include <gtest/gtest.h>

#include "op_test_util.h"

namespace tessera {
namespace {

using testing::attr_i;
using testing::attr_s;
using testing::make_tensor;
using testing::run1;
using testing::to_vector;

// input [2, 3] log-probabilities, target [2] = {2, 0}, weight {1, 2, 3}:
// none: [-x[0,2]*3, -x[1,0]*1] = [0.3*3, 1.2*1] = [0.9, 1.2]; sum 2.1; mean 2.1 / (3 + 1).
TEST(RefNLLLoss, ReductionsWithWeightAndIgnoreIndex) {
  Tensor x = make_tensor<float>({2, 3}, {-0.1f, -0.2f, -0.3f, -1.2f, -0.5f, -0.7f});
  Tensor t = make_tensor<int64_t>({2}, {2, 0});
  Tensor w = make_tensor<float>({3}, {1.f, 2.f, 3.f});
  testing::expect_near(to_vector<float>(run1({"NegativeLogLikelihoodLoss", {attr_s("reduction", "none")}, 13}, {&x, &t, &w})),
                       {0.9f, 1.2f});
  testing::expect_near(to_vector<float>(run1({"NegativeLogLikelihoodLoss", {attr_s("reduction", "sum")}, 13}, {&x, &t, &w})),
                       {2.1f});
  testing::expect_near(to_vector<float>(run1({"NegativeLogLikelihoodLoss", {}, 13}, {&x, &t, &w})), {2.1f / 4.f});
  // ignore_index = 0 drops the second element: mean = 0.9 / 3.
  testing::expect_near(
      to_vector<float>(run1({"NegativeLogLikelihoodLoss", {attr_i("ignore_index", 0)}, 13}, {&x, &t, &w})), {0.3f});
}

TEST(RefNLLLoss, TargetOutOfRangeIsAnError) {
  Tensor x = make_tensor<float>({1, 2}, {-0.1f, -0.2f});
  Tensor t = make_tensor<int64_t>({1}, {5});
  auto r = testing::run_op({"NegativeLogLikelihoodLoss", {}, 13}, {&x, &t});
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("target 5"), std::string::npos) << r.status().message();
}

}  // namespace
}  // namespace tessera
