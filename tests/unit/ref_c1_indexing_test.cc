// Section C1 indexing ops: GatherElements, Trilu (and the scatter/gather ops further down).
// Expected values were computed with numpy 1.26 (np.take_along_axis, np.triu, np.tril) as
// stated at each check.
#include <gtest/gtest.h>

#include <limits>

#include "op_test_util.h"

namespace tessera {
namespace {

using testing::attr_i;
using testing::attr_ints;
using testing::attr_s;
using testing::make_tensor;
using testing::run1;
using testing::run_op;
using testing::to_vector;

TEST(RefC1GatherElements, AxesNegativeIndicesAndSmallerIndices) {
  Tensor d = make_tensor<float>({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  // numpy: np.take_along_axis(d[:2], [[1, 2], [0, 2]], axis=1) = [[2, 3], [4, 6]]
  Tensor i1 = make_tensor<int64_t>({2, 2}, {1, -1, 0, 2});
  Tensor y = run1({"GatherElements", {attr_i("axis", 1)}, 13}, {&d, &i1});
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_EQ(to_vector<float>(y), (std::vector<float>{2, 3, 4, 6}));
  // numpy: np.take_along_axis(d, [[1, 2, 0], [2, 0, 0]], axis=0) = [[4, 8, 3], [7, 2, 3]]
  Tensor i0 = make_tensor<int32_t>({2, 3}, {1, 2, 0, 2, 0, 0});
  EXPECT_EQ(to_vector<float>(run1({"GatherElements", {}, 11}, {&d, &i0})), (std::vector<float>{4, 8, 3, 7, 2, 3}));
  Tensor bad = make_tensor<int64_t>({1, 1}, {3});
  EXPECT_FALSE(run_op({"GatherElements"}, {&d, &bad}).is_ok());  // out of range
  Tensor rank1 = make_tensor<int64_t>({2}, {0, 1});
  EXPECT_FALSE(run_op({"GatherElements"}, {&d, &rank1}).is_ok());  // rank differs
  EXPECT_FALSE(run_op({"GatherElements", {attr_i("axis", 2)}}, {&d, &i1}).is_ok());
}

TEST(RefC1Trilu, UpperLowerWithK) {
  Tensor x = make_tensor<float>({3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  Tensor k1 = make_tensor<int64_t>({}, {1});
  Tensor km1 = make_tensor<int64_t>({}, {-1});
  // numpy: np.triu(x, 1), np.tril(x, -1)
  EXPECT_EQ(to_vector<float>(run1({"Trilu", {}, 14}, {&x, &k1})), (std::vector<float>{0, 2, 3, 4, 0, 0, 7, 8, 0, 0, 0, 12}));
  EXPECT_EQ(to_vector<float>(run1({"Trilu", {attr_i("upper", 0)}, 14}, {&x, &km1})),
            (std::vector<float>{0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0}));
  // Batched int64, default k: np.tril on each [2, 2] matrix.
  Tensor b = make_tensor<int64_t>({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  EXPECT_EQ(to_vector<int64_t>(run1({"Trilu", {attr_i("upper", 0)}, 14}, {&b})), (std::vector<int64_t>{1, 0, 3, 4, 5, 0, 7, 8}));
  Tensor huge = make_tensor<int64_t>({}, {std::numeric_limits<int64_t>::min()});
  EXPECT_EQ(to_vector<float>(run1({"Trilu", {}, 14}, {&x, &huge})), to_vector<float>(x));
  Tensor v = make_tensor<float>({3}, {1, 2, 3});
  EXPECT_FALSE(run_op({"Trilu", {}, 14}, {&v}).is_ok());  // rank 1
  Tensor e = make_tensor<float>({0, 3}, {});
  EXPECT_EQ(run1({"Trilu", {}, 14}, {&e}).numel(), 0);
}

}  // namespace
}  // namespace tessera
