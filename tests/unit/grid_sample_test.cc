#include <gtest/gtest.h>

#include <cmath>

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

// Volumetric (X [1, 1, 2, 3, 4] = arange(24) * 0.5 - 3) and 1-D sampling at opset 20.
// Expected values: onnx.reference.ReferenceEvaluator (onnx 1.17) on single-node models fed
// the same inputs; it computes in float32, hence the 1e-5 tolerance.
TEST(RefGridSample, VolumetricAllModesAndPaddings) {
  std::vector<float> xv(24);
  for (int i = 0; i < 24; ++i) xv[i] = i * 0.5f - 3;
  Tensor x = make_tensor<float>({1, 1, 2, 3, 4}, xv);
  Tensor g = make_tensor<float>({1, 1, 1, 3, 3}, {0.1f, -0.3f, 0.7f, -1.2f, 0.5f, 0.0f, 0.9f, 0.9f, -0.9f});
  struct Case {
    const char* mode;
    const char* pad;
    int align;
    std::vector<float> want;
  };
  const std::vector<Case> cases = {
      {"linear", "zeros", 0, {3.9599995613f, 0.3499996662f, 0.6825001836f}},
      {"linear", "zeros", 1, {4.3249998093f, 2.0999999046f, 2.5250000954f}},
      {"linear", "border", 0, {4.9499998093f, 3.5f, 2.5f}},
      {"linear", "reflection", 1, {4.3249998093f, 3.1499998569f, 2.5250000954f}},
      {"nearest", "zeros", 0, {6.0f, 0.0f, 2.5f}},
      {"nearest", "zeros", 1, {6.0f, 1.0f, 2.5f}},
      {"nearest", "reflection", 0, {6.0f, 1.0f, 2.5f}},
      {"cubic", "zeros", 0, {4.7911052704f, 0.3888727725f, 0.5445795059f}},
      {"cubic", "border", 1, {4.2633132935f, 3.1875f, 2.5287029743f}},
      {"cubic", "reflection", 0, {5.4571876526f, 3.5834374428f, 1.8399999142f}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.mode) + " " + c.pad + " align_corners " + std::to_string(c.align));
    Tensor y = run1({"GridSample", {attr_s("mode", c.mode), attr_s("padding_mode", c.pad), attr_i("align_corners", c.align)}, 20},
                    {&x, &g});
    EXPECT_EQ(y.shape(), (Shape{1, 1, 1, 1, 3}));
    testing::expect_near(to_vector<float>(y), c.want, 1e-5f, 1e-5f);
  }
}

TEST(RefGridSample, OneD) {
  Tensor x = make_tensor<float>({1, 1, 4}, {1, 4, 2, 8});
  Tensor g = make_tensor<float>({1, 4, 1}, {-1, -0.2f, 0.45f, 1.3f});
  testing::expect_near(to_vector<float>(run1({"GridSample", {}, 20}, {&x, &g})), {0.5f, 3.8f, 4.4000005722f, 0.0f}, 1e-5f, 1e-5f);
  testing::expect_near(
      to_vector<float>(run1({"GridSample", {attr_s("mode", "cubic"), attr_s("padding_mode", "border")}, 20}, {&x, &g})),
      {0.71875f, 3.9777500629f, 4.1120004654f, 8.0f}, 1e-5f, 1e-5f);
}

TEST(RefGridSample, BadShapesAreErrors) {
  Tensor x5 = make_tensor<float>({1, 1, 1, 1, 1}, {1});
  Tensor g5 = make_tensor<float>({1, 1, 1, 1, 3}, {0, 0, 0});
  // N-d needs opset 20.
  auto r = testing::run_op({"GridSample", {}, 16}, {&x5, &g5});
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  // The grid's last dim must be the number of spatial dims.
  Tensor g5bad = make_tensor<float>({1, 1, 1, 1, 2}, {0, 0});
  EXPECT_FALSE(testing::run_op({"GridSample", {}, 20}, {&x5, &g5bad}).is_ok());
  Tensor x = make_tensor<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  Tensor bad = make_tensor<float>({1, 1, 1, 3}, {0, 0, 0});
  EXPECT_FALSE(testing::run_op({"GridSample", {}, 16}, {&x, &bad}).is_ok());
  // Non-finite grid values sample the padding instead of crashing.
  Tensor nan = make_tensor<float>({1, 1, 1, 2}, {NAN, INFINITY});
  EXPECT_EQ(to_vector<float>(run1({"GridSample", {}, 16}, {&x, &nan})), (std::vector<float>{0.f}));
}

}  // namespace
}  // namespace tessera
