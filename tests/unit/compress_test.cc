#include <gtest/gtest.h>

#include "op_test_util.h"

namespace tessera {
namespace {

// numpy.compress([False, True, True], [[1, 2], [3, 4], [5, 6]], axis=0) = [[3, 4], [5, 6]];
// without axis, on the flattened input with [True, False, True]: [1, 3].
TEST(RefCompress, AxisAndFlattened) {
  Tensor x = testing::make_tensor<float>({3, 2}, {1, 2, 3, 4, 5, 6});
  Tensor c = testing::make_tensor<bool>({3}, {false, true, true});
  auto r = testing::run_op({"Compress", {testing::attr_i("axis", 0)}, 11}, {&x, &c}, {1});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r.value()[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(testing::to_vector<float>(r.value()[0]), (std::vector<float>{3, 4, 5, 6}));
  Tensor c2 = testing::make_tensor<bool>({3}, {true, false, true});
  auto f = testing::run_op({"Compress", {}, 11}, {&x, &c2}, {1});
  ASSERT_TRUE(f.is_ok()) << f.status().to_string();
  EXPECT_EQ(testing::to_vector<float>(f.value()[0]), (std::vector<float>{1, 3}));
  Tensor too_long = testing::make_tensor<bool>({4}, {true, true, true, true});
  EXPECT_FALSE(testing::run_op({"Compress", {testing::attr_i("axis", 0)}, 11}, {&x, &too_long}, {1}).is_ok());
}

}  // namespace
}  // namespace tessera
