// Section B reference kernels: Reduce* and ArgMax/ArgMin. Expected values marked "numpy"
// were computed with numpy on kX below (x.mean(axis=(0,2), keepdims=True), ...).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "op_test_util.h"

namespace tessera {
namespace {

using testing::attr_i;
using testing::attr_ints;
using testing::expect_near;
using testing::make_tensor;
using testing::OpSpec;
using testing::run_op;
using testing::to_vector;

using testing::run1;

// x, shape [2, 2, 3]
const std::vector<float> kX = {1, 2, 3, 4, 5, 6, -1, 0.5f, 2, 3, -4, 8};
Tensor ints(std::vector<int64_t> v) { return make_tensor<int64_t>({static_cast<int64_t>(v.size())}, v); }

TEST(RefBReduce, MeanWithAxesAttributeOpset11) {
  Tensor x = make_tensor<float>({2, 2, 3}, kX);
  Tensor y = run1({"ReduceMean", {attr_ints("axes", {0, -1})}, 11}, {&x});
  EXPECT_EQ(y.shape(), (Shape{1, 2, 1}));
  expect_near(to_vector<float>(y), {1.25f, 3.6666667461395264f});  // numpy
  Tensor all = run1({"ReduceMean", {attr_i("keepdims", 0)}, 13}, {&x});
  EXPECT_EQ(all.shape(), (Shape{}));
  expect_near(to_vector<float>(all), {29.5f / 12});
}

TEST(RefBReduce, SumWithAxesInputOpset13) {
  Tensor x = make_tensor<float>({2, 2, 3}, kX);
  Tensor axes = ints({-1});
  Tensor y = run1({"ReduceSum", {attr_i("keepdims", 0)}, 13}, {&x, &axes}, {1});
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_EQ(to_vector<float>(y), (std::vector<float>{6, 15, 1.5f, 7}));  // numpy: x.sum(axis=-1)
  // No axes: reduce all, or with noop_with_empty_axes=1 the output is the input.
  EXPECT_EQ(to_vector<float>(run1({"ReduceSum", {}, 13}, {&x})), (std::vector<float>{29.5f}));
  Tensor noop = run1({"ReduceSum", {attr_i("noop_with_empty_axes", 1)}, 13}, {&x});
  EXPECT_EQ(noop.shape(), (Shape{2, 2, 3}));
  EXPECT_EQ(to_vector<float>(noop), kX);
  // Opset 11 ReduceSum takes axes as an attribute.
  EXPECT_EQ(to_vector<float>(run1({"ReduceSum", {attr_ints("axes", {2}), attr_i("keepdims", 0)}, 11}, {&x})),
            (std::vector<float>{6, 15, 1.5f, 7}));
}

TEST(RefBReduce, MaxMinProdL2SumSquare) {
  Tensor x = make_tensor<float>({2, 2, 3}, kX);
  Tensor a1 = ints({1});
  EXPECT_EQ(to_vector<float>(run1({"ReduceMax", {attr_i("keepdims", 0)}, 18}, {&x, &a1}, {1})),
            (std::vector<float>{4, 5, 6, 3, 0.5f, 8}));  // numpy: x.max(axis=1)
  EXPECT_EQ(to_vector<float>(run1({"ReduceMin", {attr_i("keepdims", 0)}, 13}, {&x})), (std::vector<float>{-4}));
  EXPECT_EQ(to_vector<float>(run1({"ReduceProd", {attr_ints("axes", {0})}, 13}, {&x})),
            (std::vector<float>{-1, 1, 6, 12, -20, 48}));  // numpy: x.prod(axis=0)
  expect_near(to_vector<float>(run1({"ReduceL2", {attr_ints("axes", {2})}, 13}, {&x})),
              {3.7416574954986572f, 8.774964332580566f, 2.291287899017334f, 9.433980941772461f});  // numpy
  EXPECT_EQ(to_vector<float>(run1({"ReduceSumSquare", {attr_i("keepdims", 0)}, 13}, {&x})),
            (std::vector<float>{185.25f}));  // numpy: (x*x).sum()
}

TEST(RefBReduce, IntegerAndEmpty) {
  Tensor x = make_tensor<int64_t>({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(to_vector<int64_t>(run1({"ReduceSum", {attr_ints("axes", {1})}, 11}, {&x})), (std::vector<int64_t>{6, 15}));
  EXPECT_EQ(to_vector<int64_t>(run1({"ReduceMean", {attr_ints("axes", {0})}, 11}, {&x})), (std::vector<int64_t>{2, 3, 4}));
  Tensor e = make_tensor<float>({0, 3}, {});
  Tensor s = run1({"ReduceSum", {attr_ints("axes", {0})}, 11}, {&e});
  EXPECT_EQ(s.shape(), (Shape{1, 3}));
  EXPECT_EQ(to_vector<float>(s), (std::vector<float>{0, 0, 0}));
  Tensor p = run1({"ReduceProd", {attr_ints("axes", {0}), attr_i("keepdims", 0)}, 11}, {&e});
  EXPECT_EQ(to_vector<float>(p), (std::vector<float>{1, 1, 1}));
  Tensor m = run1({"ReduceMax", {attr_ints("axes", {0}), attr_i("keepdims", 0)}, 11}, {&e});
  EXPECT_TRUE(std::isinf(to_vector<float>(m)[0]));
  Tensor reduce_empty_rows = run1({"ReduceSum", {attr_ints("axes", {1})}, 11}, {&e});
  EXPECT_EQ(reduce_empty_rows.shape(), (Shape{0, 1}));
}

TEST(RefBReduce, Errors) {
  Tensor x = make_tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  auto r = run_op({"ReduceMean", {attr_ints("axes", {2})}, 11}, {&x});
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("out of range"), std::string::npos);
  EXPECT_FALSE(run_op({"ReduceMean", {attr_ints("axes", {0, -2})}, 11}, {&x}).is_ok());  // repeated
  Tensor a = ints({0});
  EXPECT_FALSE(run_op({"ReduceMean", {}, 13}, {&x, &a}, {1}).is_ok());  // opset 13 ReduceMean: attribute axes
  EXPECT_FALSE(run_op({"ReduceSum", {}, 13}, {&x, &a}).is_ok());         // axes not known at plan time
}

TEST(RefBArg, MaxMinKeepdimsAndLastIndex) {
  Tensor x = make_tensor<float>({2, 2, 3}, kX);
  Tensor y = run1({"ArgMax", {attr_i("axis", -1), attr_i("keepdims", 0)}}, {&x});
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_EQ(to_vector<int64_t>(y), (std::vector<int64_t>{2, 2, 2, 2}));  // numpy: x.argmax(axis=2)
  Tensor z = run1({"ArgMin", {attr_i("axis", 1)}}, {&x});
  EXPECT_EQ(z.shape(), (Shape{2, 1, 3}));
  EXPECT_EQ(to_vector<int64_t>(z), (std::vector<int64_t>{0, 0, 0, 0, 1, 0}));  // numpy: x.argmin(axis=1)
  Tensor t = make_tensor<int32_t>({5}, {3, 7, 1, 7, 1});
  EXPECT_EQ(to_vector<int64_t>(run1({"ArgMax", {}, 12}, {&t})), (std::vector<int64_t>{1}));
  EXPECT_EQ(to_vector<int64_t>(run1({"ArgMax", {attr_i("select_last_index", 1)}, 12}, {&t})), (std::vector<int64_t>{3}));
  EXPECT_EQ(to_vector<int64_t>(run1({"ArgMin", {attr_i("select_last_index", 1), attr_i("keepdims", 0)}, 12}, {&t})),
            (std::vector<int64_t>{4}));
  Tensor e = make_tensor<float>({0, 2}, {});
  EXPECT_FALSE(run_op({"ArgMax"}, {&e}).is_ok());  // empty reduced axis
  EXPECT_EQ(run1({"ArgMax", {attr_i("axis", 1)}}, {&e}).shape(), (Shape{0, 1}));
  EXPECT_FALSE(run_op({"ArgMax", {attr_i("axis", 3)}}, {&x}).is_ok());
}

}  // namespace
}  // namespace tessera
