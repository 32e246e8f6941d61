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

TEST(RefC1ScatterElements, ReductionsAndScatter) {
  Tensor d = make_tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor idx = make_tensor<int64_t>({1, 2}, {1, -3});
  Tensor upd = make_tensor<float>({1, 2}, {10, 20});
  // By hand: axis 1 -> row 0 gets [20, 10, 3] (index -3 = 0).
  EXPECT_EQ(to_vector<float>(run1({"ScatterElements", {attr_i("axis", 1)}, 13}, {&d, &idx, &upd})),
            (std::vector<float>{20, 10, 3, 4, 5, 6}));
  EXPECT_EQ(to_vector<float>(run1({"Scatter", {attr_i("axis", 1)}, 9}, {&d, &idx, &upd})), (std::vector<float>{20, 10, 3, 4, 5, 6}));
  Tensor dup = make_tensor<int64_t>({1, 2}, {1, 1});
  EXPECT_EQ(to_vector<float>(run1({"ScatterElements", {attr_i("axis", 1), attr_s("reduction", "add")}, 16}, {&d, &dup, &upd})),
            (std::vector<float>{1, 32, 3, 4, 5, 6}));
  EXPECT_EQ(to_vector<float>(run1({"ScatterElements", {attr_i("axis", 1), attr_s("reduction", "mul")}, 16}, {&d, &dup, &upd})),
            (std::vector<float>{1, 400, 3, 4, 5, 6}));
  Tensor upd2 = make_tensor<float>({1, 2}, {-1, 7});
  EXPECT_EQ(to_vector<float>(run1({"ScatterElements", {attr_i("axis", 1), attr_s("reduction", "max")}, 18}, {&d, &dup, &upd2})),
            (std::vector<float>{1, 7, 3, 4, 5, 6}));
  EXPECT_EQ(to_vector<float>(run1({"ScatterElements", {attr_i("axis", 1), attr_s("reduction", "min")}, 18}, {&d, &dup, &upd2})),
            (std::vector<float>{1, -1, 3, 4, 5, 6}));
  // Axis 0 with int32 indices.
  Tensor i0 = make_tensor<int32_t>({1, 3}, {1, 0, 1});
  Tensor u0 = make_tensor<float>({1, 3}, {7, 8, 9});
  EXPECT_EQ(to_vector<float>(run1({"ScatterElements", {}, 11}, {&d, &i0, &u0})), (std::vector<float>{1, 8, 3, 7, 5, 9}));
  EXPECT_FALSE(run_op({"ScatterElements", {attr_s("reduction", "max")}, 16}, {&d, &idx, &upd}).is_ok());  // max is 18+
  EXPECT_FALSE(run_op({"ScatterElements", {attr_s("reduction", "avg")}, 18}, {&d, &idx, &upd}).is_ok());
  Tensor bad = make_tensor<int64_t>({1, 2}, {0, 3});
  EXPECT_FALSE(run_op({"ScatterElements", {attr_i("axis", 1)}, 13}, {&d, &bad, &upd}).is_ok());
}

TEST(RefC1ScatterND, SlicesAndReductions) {
  // onnx spec example 1: data [1..8], indices [[4], [3], [1], [7]], updates [9, 10, 11, 12]
  Tensor d = make_tensor<float>({8}, {1, 2, 3, 4, 5, 6, 7, 8});
  Tensor idx = make_tensor<int64_t>({4, 1}, {4, 3, 1, 7});
  Tensor upd = make_tensor<float>({4}, {9, 10, 11, 12});
  EXPECT_EQ(to_vector<float>(run1({"ScatterND", {}, 13}, {&d, &idx, &upd})), (std::vector<float>{1, 11, 3, 10, 9, 6, 7, 12}));
  // Row slices with add and a repeated, negative index.
  Tensor m = make_tensor<int32_t>({2, 2}, {1, 2, 3, 4});
  Tensor ri = make_tensor<int64_t>({2, 1}, {-1, 1});
  Tensor ru = make_tensor<int32_t>({2, 2}, {10, 20, 30, 40});
  EXPECT_EQ(to_vector<int32_t>(run1({"ScatterND", {attr_s("reduction", "add")}, 16}, {&m, &ri, &ru})), (std::vector<int32_t>{1, 2, 43, 64}));
  EXPECT_EQ(to_vector<int32_t>(run1({"ScatterND", {attr_s("reduction", "min")}, 18}, {&m, &ri, &ru})), (std::vector<int32_t>{1, 2, 3, 4}));
  Tensor wrong = make_tensor<int32_t>({2}, {1, 2});
  EXPECT_FALSE(run_op({"ScatterND", {}, 13}, {&m, &ri, &wrong}).is_ok());  // updates shape
}

TEST(RefC1GatherND, SpecExamplesAndBatchDims) {
  // onnx spec examples 1, 3 and 5.
  Tensor d = make_tensor<int32_t>({2, 2}, {0, 1, 2, 3});
  Tensor i1 = make_tensor<int64_t>({2, 2}, {0, 0, 1, 1});
  EXPECT_EQ(to_vector<int32_t>(run1({"GatherND", {}, 13}, {&d, &i1})), (std::vector<int32_t>{0, 3}));
  Tensor d3 = make_tensor<int32_t>({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  Tensor i3 = make_tensor<int64_t>({2, 2}, {0, 1, 1, 0});
  Tensor y3 = run1({"GatherND", {}, 13}, {&d3, &i3});
  EXPECT_EQ(y3.shape(), (Shape{2, 2}));
  EXPECT_EQ(to_vector<int32_t>(y3), (std::vector<int32_t>{2, 3, 4, 5}));
  Tensor i5 = make_tensor<int64_t>({2, 1}, {1, 0});
  Tensor y5 = run1({"GatherND", {attr_i("batch_dims", 1)}, 12}, {&d3, &i5});
  EXPECT_EQ(y5.shape(), (Shape{2, 2}));
  EXPECT_EQ(to_vector<int32_t>(y5), (std::vector<int32_t>{2, 3, 4, 5}));
  Tensor neg = make_tensor<int64_t>({1, 2}, {-1, -2});
  EXPECT_EQ(to_vector<int32_t>(run1({"GatherND", {}, 13}, {&d, &neg})), (std::vector<int32_t>{2}));
  Tensor oob = make_tensor<int64_t>({1, 2}, {2, 0});
  EXPECT_FALSE(run_op({"GatherND", {}, 13}, {&d, &oob}).is_ok());
  Tensor big = make_tensor<int64_t>({1, 3}, {0, 0, 0});
  EXPECT_FALSE(run_op({"GatherND", {}, 13}, {&d, &big}).is_ok());  // k > rank
  EXPECT_FALSE(run_op({"GatherND", {attr_i("batch_dims", 2)}, 13}, {&d, &i1}).is_ok());
}

TEST(RefC1OneHot, AxisNegativeIndicesAndOutOfRange) {
  Tensor ind = make_tensor<int64_t>({3}, {0, -1, 5});
  Tensor depth = make_tensor<float>({}, {3});
  Tensor vals = make_tensor<int32_t>({2}, {-2, 7});
  // By hand: index -1 -> 2 (opset 11); 5 is out of range -> all off.
  Tensor y = run1({"OneHot", {}, 11}, {&ind, &depth, &vals}, {1});
  EXPECT_EQ(y.shape(), (Shape{3, 3}));
  EXPECT_EQ(to_vector<int32_t>(y), (std::vector<int32_t>{7, -2, -2, -2, -2, 7, -2, -2, -2}));
  Tensor y0 = run1({"OneHot", {attr_i("axis", 0)}, 11}, {&ind, &depth, &vals}, {1});
  EXPECT_EQ(to_vector<int32_t>(y0), (std::vector<int32_t>{7, -2, -2, -2, -2, -2, -2, 7, -2}));
  Tensor bad_depth = make_tensor<int64_t>({}, {0});
  EXPECT_FALSE(run_op({"OneHot", {}, 11}, {&ind, &bad_depth, &vals}, {1}).is_ok());
  EXPECT_FALSE(run_op({"OneHot", {}, 11}, {&ind, &depth, &vals}).is_ok());  // depth not known at plan time
  EXPECT_FALSE(run_op({"OneHot", {attr_i("axis", 2)}, 11}, {&ind, &depth, &vals}, {1}).is_ok());
}

TEST(RefC1CumSum, ExclusiveReverseAxis) {
  Tensor x = make_tensor<double>({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor a1 = make_tensor<int32_t>({}, {1});
  Tensor a0 = make_tensor<int64_t>({1}, {-2});
  // numpy: np.cumsum(x, 1); flip(cumsum(flip(x, 0), 0), 0) - x
  EXPECT_EQ(to_vector<double>(run1({"CumSum", {}, 14}, {&x, &a1})), (std::vector<double>{1, 3, 6, 4, 9, 15}));
  EXPECT_EQ(to_vector<double>(run1({"CumSum", {attr_i("exclusive", 1), attr_i("reverse", 1)}, 14}, {&x, &a0})),
            (std::vector<double>{4, 5, 6, 0, 0, 0}));
  Tensor xi = make_tensor<int64_t>({4}, {1, 2, 3, 4});
  Tensor z = make_tensor<int64_t>({}, {0});
  EXPECT_EQ(to_vector<int64_t>(run1({"CumSum", {attr_i("exclusive", 1)}, 11}, {&xi, &z})), (std::vector<int64_t>{0, 1, 3, 6}));
  EXPECT_EQ(to_vector<int64_t>(run1({"CumSum", {attr_i("reverse", 1)}, 11}, {&xi, &z})), (std::vector<int64_t>{10, 9, 7, 4}));
  Tensor a5 = make_tensor<int64_t>({}, {5});
  EXPECT_FALSE(run_op({"CumSum", {}, 14}, {&x, &a5}).is_ok());       // axis out of range (run time)
  EXPECT_FALSE(run_op({"CumSum", {}, 14}, {&x, &a5}, {1}).is_ok());  // ... and at plan time
}

TEST(RefC1TopK, LargestSmallestTiesAndOpset1) {
  Tensor x = make_tensor<float>({2, 5}, {3, 1, 4, 1, 5, 9, 2, 6, 5, 3});
  Tensor k3 = make_tensor<int64_t>({1}, {3});
  // numpy: argsort(-x, kind='stable')[:, :3] -> values [[5, 4, 3], [9, 6, 5]], indices [[4, 2, 0], [0, 2, 3]]
  auto r = run_op({"TopK", {}, 11, 2}, {&x, &k3}, {1});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(to_vector<float>(r.value()[0]), (std::vector<float>{5, 4, 3, 9, 6, 5}));
  EXPECT_EQ(to_vector<int64_t>(r.value()[1]), (std::vector<int64_t>{4, 2, 0, 0, 2, 3}));
  // numpy: argsort(x, kind='stable')[:, :2] -> [[1, 1], [2, 3]], indices [[1, 3], [1, 4]] (tie -> lower index)
  Tensor k2 = make_tensor<int64_t>({1}, {2});
  auto s = run_op({"TopK", {attr_i("largest", 0)}, 11, 2}, {&x, &k2}, {1});
  ASSERT_TRUE(s.is_ok()) << s.status().to_string();
  EXPECT_EQ(to_vector<float>(s.value()[0]), (std::vector<float>{1, 1, 2, 3}));
  EXPECT_EQ(to_vector<int64_t>(s.value()[1]), (std::vector<int64_t>{1, 3, 1, 4}));
  // opset 1: k attribute, axis 0.
  auto t = run_op({"TopK", {attr_i("k", 1), attr_i("axis", 0)}, 1, 2}, {&x});
  ASSERT_TRUE(t.is_ok()) << t.status().to_string();
  EXPECT_EQ(to_vector<float>(t.value()[0]), (std::vector<float>{9, 2, 6, 5, 5}));
  EXPECT_EQ(to_vector<int64_t>(t.value()[1]), (std::vector<int64_t>{1, 1, 1, 1, 0}));
  Tensor k9 = make_tensor<int64_t>({1}, {9});
  EXPECT_FALSE(run_op({"TopK", {}, 11, 2}, {&x, &k9}, {1}).is_ok());  // k > dim
  EXPECT_FALSE(run_op({"TopK", {}, 11, 2}, {&x, &k3}).is_ok());       // K not known at plan time
}

TEST(RefC1Hardmax, LegacyAndAxisLayouts) {
  Tensor x = make_tensor<float>({2, 3}, {1, 3, 3, 0, -1, 2});
  // opset 13 axis -1: first max of each row.
  EXPECT_EQ(to_vector<float>(run1({"Hardmax", {}, 13}, {&x})), (std::vector<float>{0, 1, 0, 0, 0, 1}));
  // opset 13 axis 0: per column.
  EXPECT_EQ(to_vector<float>(run1({"Hardmax", {attr_i("axis", 0)}, 13}, {&x})), (std::vector<float>{1, 1, 1, 0, 0, 0}));
  // opset 11 axis 0: the whole tensor coerced to [1, 6].
  EXPECT_EQ(to_vector<float>(run1({"Hardmax", {attr_i("axis", 0)}, 11}, {&x})), (std::vector<float>{0, 1, 0, 0, 0, 0}));
  Tensor i = make_tensor<int32_t>({2}, {1, 2});
  EXPECT_FALSE(run_op({"Hardmax", {}, 13}, {&i}).is_ok());
  EXPECT_FALSE(run_op({"Hardmax", {attr_i("axis", 2)}, 13}, {&x}).is_ok());
}

}  // namespace
}  // namespace tessera
