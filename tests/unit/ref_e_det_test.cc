// Det reference kernel. Expected values: exact determinants worked by hand (integer matrices,
// so double LU gives them to the last bit or within a few ulps).
#include "ref_a_util.h"

namespace tessera {
namespace {

using testing::expect_error;
using testing::make_tensor;
using testing::run_ok;
using testing::to_vector;

TEST(RefDet, TwoDAndBatchedNeedPivoting) {
  // [[0, 1], [2, 3]]: the first pivot is 0, so pivoting is needed; det = 0*3 - 1*2 = -2.
  Tensor x = make_tensor<float>({2, 2}, {0, 1, 2, 3});
  auto y = run_ok({"Det", {}, 11}, {&x});
  ASSERT_EQ(y.size(), 1u);
  EXPECT_EQ(y[0].shape(), Shape{});
  EXPECT_FLOAT_EQ(to_vector<float>(y[0])[0], -2.f);
  // Batch [2, 1, 3, 3]: det [[2,0,1],[1,3,2],[1,1,1]] = 2*(3-2) - 0 + 1*(1-3) = 0 (singular)
  // and the permutation matrix [[0,0,1],[1,0,0],[0,1,0]] (a 3-cycle, even): det = 1.
  Tensor xb = make_tensor<double>({2, 1, 3, 3}, {2, 0, 1, 1, 3, 2, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0, 1, 0});
  auto yb = run_ok({"Det", {}, 11}, {&xb});
  EXPECT_EQ(yb[0].shape(), (Shape{2, 1}));
  std::vector<double> v = to_vector<double>(yb[0]);
  EXPECT_NEAR(v[0], 0.0, 1e-12);
  EXPECT_DOUBLE_EQ(v[1], 1.0);
  // 4x4 [[1,2,3,4],[2,5,3,1],[0,1,4,2],[3,1,0,2]]: det = -99 (integer; numpy.linalg.det agrees).
  Tensor x4 = make_tensor<double>({4, 4}, {1, 2, 3, 4, 2, 5, 3, 1, 0, 1, 4, 2, 3, 1, 0, 2});
  EXPECT_NEAR(to_vector<double>(run_ok({"Det", {}, 11}, {&x4})[0])[0], -99.0, 1e-9);
}

TEST(RefDet, BadShapesAndDtypesAreErrors) {
  Tensor r1 = make_tensor<float>({3}, {1, 2, 3});
  expect_error({"Det", {}, 11}, {&r1}, StatusCode::kInvalidArgument, "rank >= 2");
  Tensor rect = make_tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  expect_error({"Det", {}, 11}, {&rect}, StatusCode::kInvalidArgument, "square");
  Tensor xi = make_tensor<int32_t>({1, 1}, {1});
  expect_error({"Det", {}, 11}, {&xi}, StatusCode::kUnimplemented, "int32");
}

}  // namespace
}  // namespace tessera
