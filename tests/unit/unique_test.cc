#include <gtest/gtest.h>

#include "op_test_util.h"

namespace tessera {
namespace {

using testing::attr_i;
using testing::make_tensor;
using testing::to_vector;

// ONNX Unique spec, example 1 (sorted=0) and example 3 (axis=0).
TEST(RefUnique, FirstOccurrenceOrderAndAxis) {
  Tensor x = make_tensor<float>({6}, {2, 1, 1, 3, 4, 3});
  auto r = testing::run_op({"Unique", {attr_i("sorted", 0)}, 11, 4}, {&x}, {0});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(to_vector<float>(r.value()[0]), (std::vector<float>{2, 1, 3, 4}));
  EXPECT_EQ(to_vector<int64_t>(r.value()[1]), (std::vector<int64_t>{0, 1, 3, 4}));
  EXPECT_EQ(to_vector<int64_t>(r.value()[2]), (std::vector<int64_t>{0, 1, 1, 2, 3, 2}));
  EXPECT_EQ(to_vector<int64_t>(r.value()[3]), (std::vector<int64_t>{1, 2, 2, 1}));

  Tensor m = make_tensor<int64_t>({3, 3}, {1, 0, 0, 1, 0, 0, 2, 3, 4});
  auto a = testing::run_op({"Unique", {attr_i("axis", 0)}, 11, 4}, {&m}, {0});
  ASSERT_TRUE(a.is_ok()) << a.status().to_string();
  EXPECT_EQ(a.value()[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(to_vector<int64_t>(a.value()[0]), (std::vector<int64_t>{1, 0, 0, 2, 3, 4}));
  EXPECT_EQ(to_vector<int64_t>(a.value()[1]), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(to_vector<int64_t>(a.value()[2]), (std::vector<int64_t>{0, 0, 1}));
  EXPECT_EQ(to_vector<int64_t>(a.value()[3]), (std::vector<int64_t>{2, 1}));
}

}  // namespace
}  // namespace tessera
