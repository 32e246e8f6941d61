// CenterCropPad and AffineGrid reference kernels. CenterCropPad expectations are worked by
// hand from the spec's centering rule; AffineGrid's come from
// onnx.reference.ReferenceEvaluator (onnx 1.17) on single-node models (it rounds to float32,
// hence the 1e-6 tolerance).
#include "ref_a_util.h"

namespace tessera {
namespace {

using testing::attr_i;
using testing::attr_ints;
using testing::expect_error;
using testing::expect_near;
using testing::make_tensor;
using testing::run_ok;
using testing::to_vector;

TEST(RefCenterCropPad, CropAndPadPerAxis) {
  // X [3, 4] = arange(12). Rows 3 -> 5: pad 1 before, 1 after. Columns 4 -> 1: crop, keep
  // [(4 - 1) / 2 = 1], i.e. column 1.
  std::vector<int32_t> xv(12);
  for (int i = 0; i < 12; ++i) xv[i] = i;
  Tensor x = make_tensor<int32_t>({3, 4}, xv);
  Tensor shape = make_tensor<int64_t>({2}, {5, 1});
  auto y = run_ok({"CenterCropPad", {}, 18}, {&x, &shape}, {1});
  ASSERT_EQ(y.size(), 1u);
  EXPECT_EQ(y[0].shape(), (Shape{5, 1}));
  EXPECT_EQ(to_vector<int32_t>(y[0]), (std::vector<int32_t>{0, 1, 5, 9, 0}));
  // axes = [-1] only: columns 4 -> 7, pad (7 - 4) / 2 = 1 before, 2 after.
  Tensor s1 = make_tensor<int32_t>({1}, {7});
  auto z = run_ok({"CenterCropPad", {attr_ints("axes", {-1})}, 18}, {&x, &s1}, {1});
  EXPECT_EQ(z[0].shape(), (Shape{3, 7}));
  EXPECT_EQ(to_vector<int32_t>(z[0]),
            (std::vector<int32_t>{0, 0, 1, 2, 3, 0, 0, 0, 4, 5, 6, 7, 0, 0, 0, 8, 9, 10, 11, 0, 0}));
  // Crop an even excess from both ends: rows 3 -> 1 keeps row 1.
  Tensor s2 = make_tensor<int64_t>({2}, {1, 4});
  EXPECT_EQ(to_vector<int32_t>(run_ok({"CenterCropPad", {}, 18}, {&x, &s2}, {1})[0]), (std::vector<int32_t>{4, 5, 6, 7}));
}

TEST(RefCenterCropPad, BadInputsAreErrors) {
  Tensor x = make_tensor<float>({2, 2}, {1, 2, 3, 4});
  Tensor short_shape = make_tensor<int64_t>({1}, {3});
  expect_error({"CenterCropPad", {}, 18}, {&x, &short_shape}, StatusCode::kInvalidArgument, "axes", {1});
  Tensor neg = make_tensor<int64_t>({2}, {-1, 2});
  expect_error({"CenterCropPad", {}, 18}, {&x, &neg}, StatusCode::kInvalidArgument, "out of range", {1});
  Tensor s = make_tensor<int64_t>({2}, {2, 2});
  expect_error({"CenterCropPad", {attr_ints("axes", {0, -2})}, 18}, {&x, &s}, StatusCode::kInvalidArgument, "repeats", {1});
  expect_error({"CenterCropPad", {attr_ints("axes", {0, 2})}, 18}, {&x, &s}, StatusCode::kInvalidArgument, "axis", {1});
  // shape must be known at plan time.
  expect_error({"CenterCropPad", {}, 18}, {&x, &s}, StatusCode::kUnimplemented, "computable before the run");
}

TEST(RefAffineGrid, TwoDAndThreeD) {
  Tensor th = make_tensor<float>({1, 2, 3}, {1.0f, 0.2f, 0.1f, -0.3f, 0.9f, -0.2f});
  Tensor size = make_tensor<int64_t>({4}, {1, 1, 2, 3});
  auto g = run_ok({"AffineGrid", {}, 20}, {&th, &size}, {1});
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].shape(), (Shape{1, 2, 3, 2}));
  expect_near(to_vector<float>(g[0]), {-0.6666667f, -0.45f, 0.0f, -0.65f, 0.6666667f, -0.85f, -0.46666667f, 0.45f, 0.2f,
                                       0.25f, 0.8666667f, 0.05f},
              1e-6f, 1e-6f);
  // align_corners with a height of 1: the single row sits at -1.
  Tensor size1 = make_tensor<int64_t>({4}, {1, 1, 1, 3});
  expect_near(to_vector<float>(run_ok({"AffineGrid", {attr_i("align_corners", 1)}, 20}, {&th, &size1}, {1})[0]),
              {-1.1f, -0.8f, -0.1f, -1.1f, 0.9f, -1.4f}, 1e-6f, 1e-6f);
  Tensor th3 = make_tensor<float>({1, 3, 4}, {1, 0, 0.5f, 0.1f, 0, 2, 0, 0, 0.25f, 0, 1, -1});
  Tensor size3 = make_tensor<int64_t>({5}, {1, 3, 2, 1, 2});
  auto g3 = run_ok({"AffineGrid", {attr_i("align_corners", 1)}, 20}, {&th3, &size3}, {1});
  EXPECT_EQ(g3[0].shape(), (Shape{1, 2, 1, 2, 3}));
  expect_near(to_vector<float>(g3[0]), {-1.4f, -2.0f, -2.25f, 0.6f, -2.0f, -1.75f, -0.4f, -2.0f, -0.25f, 1.6f, -2.0f, 0.25f},
              1e-6f, 1e-6f);
}

TEST(RefAffineGrid, BadInputsAreErrors) {
  Tensor th = make_tensor<float>({1, 2, 3}, {1, 0, 0, 0, 1, 0});
  Tensor size5 = make_tensor<int64_t>({5}, {1, 1, 2, 2, 2});
  expect_error({"AffineGrid", {}, 20}, {&th, &size5}, StatusCode::kInvalidArgument, "theta", {1});
  Tensor size_n = make_tensor<int64_t>({4}, {2, 1, 2, 2});
  expect_error({"AffineGrid", {}, 20}, {&th, &size_n}, StatusCode::kInvalidArgument, "batch", {1});
  Tensor size3 = make_tensor<int64_t>({3}, {1, 1, 2});
  expect_error({"AffineGrid", {}, 20}, {&th, &size3}, StatusCode::kInvalidArgument, "4", {1});
}

}  // namespace
}  // namespace tessera
