// Resize with antialias = 1 (opset 18). Expected values: onnx.reference.ReferenceEvaluator
// (onnx 1.17, whose antialias filters the ONNX node tests were generated with) on
// single-node models fed the same inputs; it computes in float32, hence 1e-5 tolerances.
#include "ref_a_util.h"

namespace tessera {
namespace {

using testing::attr_i;
using testing::attr_s;
using testing::expect_near;
using testing::make_tensor;
using testing::run_ok;
using testing::to_vector;

// X [1, 1, 5, 6] = ((arange(30) * 7 % 11) - 5) * 0.5.
Tensor x56() {
  std::vector<float> v(30);
  for (int i = 0; i < 30; ++i) v[i] = static_cast<float>((i * 7) % 11 - 5) * 0.5f;
  return make_tensor<float>({1, 1, 5, 6}, v);
}

TEST(RefResizeAntialias, LinearAndCubicDownsampleFromScales) {
  Tensor x = x56(), roi = make_tensor<float>({0}, {}), scales = make_tensor<float>({4}, {1, 1, 0.6f, 0.5f});
  auto lin = run_ok({"Resize", {attr_s("mode", "linear"), attr_i("antialias", 1)}, 18}, {&x, &roi, &scales}, {1, 2});
  ASSERT_EQ(lin.size(), 1u);
  EXPECT_EQ(lin[0].shape(), (Shape{1, 1, 3, 3}));
  expect_near(to_vector<float>(lin[0]), {-0.34375003f, 0.375f, -0.625f, 0.28472227f, 0.35416666f, -0.11111113f, 0.10156242f,
                                         0.046874996f, 0.16406243f},
              1e-5f, 1e-5f);
  auto cub = run_ok({"Resize", {attr_s("mode", "cubic"), attr_i("antialias", 1)}, 18}, {&x, &roi, &scales}, {1, 2});
  expect_near(to_vector<float>(cub[0]), {-0.34336883f, 0.59408414f, -0.57828033f, 0.27272838f, 0.23894393f, -0.37159365f,
                                         0.13707867f, 0.04949405f, 0.116855599f},
              1e-5f, 1e-5f);
}

TEST(RefResizeAntialias, CubicExcludeOutsideFromSizes) {
  Tensor x = x56(), roi = make_tensor<float>({0}, {}), scales = make_tensor<float>({0}, {});
  Tensor sizes = make_tensor<int64_t>({4}, {1, 1, 2, 4});
  auto y = run_ok({"Resize", {attr_s("mode", "cubic"), attr_i("antialias", 1), attr_i("exclude_outside", 1)}, 18},
                  {&x, &roi, &scales, &sizes}, {1, 2, 3});
  EXPECT_EQ(y[0].shape(), (Shape{1, 1, 2, 4}));
  expect_near(to_vector<float>(y[0]), {0.13473071f, -0.15654305f, 0.8124578f, -1.0073285f, -0.117784992f, 0.73600006f,
                                       -0.5928997f, 0.29779184f},
              1e-5f, 1e-5f);
}

TEST(RefResizeAntialias, MixedDownAndUpsample) {
  // Height downsampled (0.6, filtered), width upsampled (2: the plain linear filter).
  Tensor x = x56(), roi = make_tensor<float>({0}, {}), scales = make_tensor<float>({4}, {1, 1, 0.6f, 2.0f});
  auto y = run_ok({"Resize", {attr_s("mode", "linear"), attr_i("antialias", 1)}, 18}, {&x, &roi, &scales}, {1, 2});
  EXPECT_EQ(y[0].shape(), (Shape{1, 1, 3, 12}));
  const std::vector<float> want = {
      -0.81250006f, -0.45312503f, 0.265625f,  0.12500001f, -0.875f,       -0.5f,        1.25f,       1.625f,      0.625f,
      -0.375f,      -1.375f,      -1.875f,    1.0000001f,  0.50000006f,  -0.49999994f, -0.43055552f, 0.70833325f, 1.0833333f,
      0.69444448f,  6.6227386e-08f, -0.99999994f, -0.93055552f, 0.20833327f, 0.77777767f, -0.62499982f, -0.265625f,  0.4531247f,
      0.8281247f,   0.859375f,    0.37500015f, -0.62499982f, -0.765625f,   -0.046875313f, 0.3281247f,  0.359375f,   0.37500015f};
  expect_near(to_vector<float>(y[0]), want, 1e-5f, 1e-5f);
}

TEST(RefResizeAntialias, NearestIgnoresItAndBadValuesAreErrors) {
  Tensor x = x56(), roi = make_tensor<float>({0}, {}), scales = make_tensor<float>({4}, {1, 1, 0.6f, 0.5f});
  auto a = run_ok({"Resize", {attr_s("mode", "nearest"), attr_i("antialias", 1)}, 18}, {&x, &roi, &scales}, {1, 2});
  auto b = run_ok({"Resize", {attr_s("mode", "nearest")}, 18}, {&x, &roi, &scales}, {1, 2});
  EXPECT_EQ(to_vector<float>(a[0]), to_vector<float>(b[0]));
  testing::expect_error({"Resize", {attr_s("mode", "linear"), attr_i("antialias", 2)}, 18}, {&x, &roi, &scales},
                        StatusCode::kInvalidArgument, "antialias", {1, 2});
}

}  // namespace
}  // namespace tessera
