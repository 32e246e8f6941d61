#include <gtest/gtest.h>

#include "op_test_util.h"

namespace tessera {
namespace {

using testing::attr_i;
using testing::attr_s;
using testing::make_tensor;
using testing::run1;
using testing::to_vector;

// X = [[1, 2], [3, 4]]. Hand-computed:
//  grid (0, 0), align_corners 0: x = y = ((0 + 1) * 2 - 1) / 2 = 0.5 -> bilinear mean 2.5;
//  grid (-1, -1): x = y = -0.5 -> neighbours (-1..0)^2, weights 1/4, only X[0,0] inside -> 0.25
//    with zeros padding, 1 with border padding (all four clamp to X[0,0]);
//  grid (1, 1), align_corners 1, nearest: x = y = 1 -> 4.
TEST(RefGridSample, BilinearNearestAndPadding) {
  Tensor x = make_tensor<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  Tensor g = make_tensor<float>({1, 1, 2, 2}, {0, 0, -1, -1});
  testing::expect_near(to_vector<float>(run1({"GridSample", {}, 16}, {&x, &g})), {2.5f, 0.25f});
  testing::expect_near(to_vector<float>(run1({"GridSample", {attr_s("padding_mode", "border")}, 16}, {&x, &g})),
                       {2.5f, 1.0f});
  Tensor corner = make_tensor<float>({1, 1, 1, 2}, {1, 1});
  testing::expect_near(
      to_vector<float>(run1({"GridSample", {attr_s("mode", "nearest"), attr_i("align_corners", 1)}, 16}, {&x, &corner})),
      {4.0f});
}

TEST(RefGridSample, VolumetricIsUnsupportedAndBadGridIsAnError) {
  Tensor x5 = make_tensor<float>({1, 1, 1, 1, 1}, {1});
  Tensor g5 = make_tensor<float>({1, 1, 1, 1, 3}, {0, 0, 0});
  auto r = testing::run_op({"GridSample", {}, 20}, {&x5, &g5});
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnimplemented);
  Tensor x = make_tensor<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  Tensor bad = make_tensor<float>({1, 1, 1, 3}, {0, 0, 0});
  EXPECT_FALSE(testing::run_op({"GridSample", {}, 16}, {&x, &bad}).is_ok());
}

}  // namespace
}  // namespace tessera
