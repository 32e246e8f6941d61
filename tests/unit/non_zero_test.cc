#include <gtest/gtest.h>

#include "op_test_util.h"

namespace tessera {
namespace {

// numpy.array(np.nonzero([[1, 0], [0, -2], [3, 0]])) = [[0, 1, 2], [0, 1, 0]].
TEST(RefNonZero, IndicesInRowMajorOrderWhenPlannedByValue) {
  Tensor x = testing::make_tensor<float>({3, 2}, {1, 0, 0, -2, 3, -0.0f});
  auto r = testing::run_op({"NonZero"}, {&x}, {0});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r.value()[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(testing::to_vector<int64_t>(r.value()[0]), (std::vector<int64_t>{0, 1, 2, 0, 1, 0}));
}

TEST(RefNonZero, UnknownInputValueAsksForPlanningByValue) {
  Tensor x = testing::make_tensor<float>({2}, {1, 0});
  auto r = testing::run_op({"NonZero"}, {&x});
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(r.status().message().find("before the run"), std::string::npos);
}

}  // namespace
}  // namespace tessera
