#include <gtest/gtest.h>

#include <cmath>

#include "op_test_util.h"

namespace tessera {
namespace {

using testing::attr_i;
using testing::attr_s;
using testing::make_tensor;
using testing::run1;
using testing::run_op;
using testing::to_vector;

// X[y][x] = 4y + x on a 4x4 plane: bilinear interpolation reproduces the linear function
// exactly inside the plane, so expected values are 4 * mean(y) + mean(x) of the samples.
Tensor ramp() {
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i) v[i] = static_cast<float>(i);
  return make_tensor<float>({1, 1, 4, 4}, v);
}

TEST(RefRoiAlign, AverageOfBilinearSamples) {
  Tensor x = ramp();
  Tensor rois = make_tensor<float>({1, 4}, {0, 0, 3, 3});
  Tensor bi = make_tensor<int64_t>({1}, {0});
  // output_half_pixel, 2x2 bins of 1.5, 2x2 samples each at 0.375 and 1.125 (bin 0) or
  // 1.875 and 2.625 (bin 1): means 0.75 and 2.25.
  Tensor y = run1({"RoiAlign", {attr_s("coordinate_transformation_mode", "output_half_pixel"), attr_i("output_height", 2),
                                attr_i("output_width", 2), attr_i("sampling_ratio", 2)}, 16},
                  {&x, &rois, &bi});
  EXPECT_EQ(y.shape(), (Shape{1, 1, 2, 2}));
  testing::expect_near(to_vector<float>(y), {3.75f, 5.25f, 9.75f, 11.25f});
  // Opset 10 has only output_half_pixel: one sample at (1.5, 1.5) -> 7.5. Opset 16 defaults
  // to half_pixel: the ROI moves by -0.5, the sample to (1, 1) -> 5.
  Tensor y10 = run1({"RoiAlign", {attr_i("sampling_ratio", 1)}, 10}, {&x, &rois, &bi});
  testing::expect_near(to_vector<float>(y10), {7.5f});
  Tensor y16 = run1({"RoiAlign", {attr_i("sampling_ratio", 1)}, 16}, {&x, &rois, &bi});
  testing::expect_near(to_vector<float>(y16), {5.0f});
  // spatial_scale 0.5 halves the ROI: (0, 0, 1.5, 1.5), one sample at (0.75, 0.75) -> 3.75.
  Tensor ys = run1({"RoiAlign", {attr_i("sampling_ratio", 1), testing::attr_f("spatial_scale", 0.5f)}, 10}, {&x, &rois, &bi});
  testing::expect_near(to_vector<float>(ys), {3.75f});
}

// X = [[1, 2], [3, 4]], ROI (0, 0, 1, 1), one sample at (0.5, 0.5) with weights 1/4:
// avg interpolates (2.5); max takes the largest weighted corner, 4 / 4 = 1 (opset-10
// semantics, kept by the ONNX reference implementation for every opset).
TEST(RefRoiAlign, MaxIsTheLargestWeightedCorner) {
  Tensor x = make_tensor<double>({1, 1, 2, 2}, {1, 2, 3, 4});
  Tensor rois = make_tensor<double>({1, 4}, {0, 0, 1, 1});
  Tensor bi = make_tensor<int64_t>({1}, {0});
  std::vector<Attribute> a = {attr_s("coordinate_transformation_mode", "output_half_pixel"), attr_i("sampling_ratio", 1)};
  EXPECT_EQ(to_vector<double>(run1({"RoiAlign", a, 16}, {&x, &rois, &bi})), (std::vector<double>{2.5}));
  a.push_back(attr_s("mode", "max"));
  EXPECT_EQ(to_vector<double>(run1({"RoiAlign", a, 16}, {&x, &rois, &bi})), (std::vector<double>{1.0}));
}

// ROI (0, 0, 4, 4) on a 2x2 plane with 2x2 samples at 1 and 3: y = 3 > H is outside (reads
// 0); y = 1 is the last row. Only sample (1, 1) reads X[1][1] = 4; the average over 4 is 1.
// The second ROI reads batch 1 (X + 10).
TEST(RefRoiAlign, SamplesOutsideReadZeroAndBatchIndicesSelectTheImage) {
  Tensor x = make_tensor<float>({2, 1, 2, 2}, {1, 2, 3, 4, 11, 12, 13, 14});
  Tensor rois = make_tensor<float>({2, 4}, {0, 0, 4, 4, 0, 0, 4, 4});
  Tensor bi = make_tensor<int64_t>({2}, {0, 1});
  Tensor y = run1({"RoiAlign", {attr_s("coordinate_transformation_mode", "output_half_pixel"), attr_i("sampling_ratio", 2)}, 16},
                  {&x, &rois, &bi});
  testing::expect_near(to_vector<float>(y), {1.0f, 3.5f});
}

TEST(RefRoiAlign, BadInputsAreErrorsNamingTheNode) {
  Tensor x = ramp();
  Tensor rois = make_tensor<float>({1, 4}, {0, 0, 3, 3});
  Tensor bi = make_tensor<int64_t>({1}, {0});
  // Planning errors name the node; run-time errors (bad index values) name the op, and the
  // executor adds the node's name.
  auto expect_error = [](const Result<std::vector<Tensor>>& r, const char* what, bool at_run = false) {
    ASSERT_FALSE(r.is_ok()) << what;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().to_string();
    EXPECT_NE(r.status().message().find(at_run ? "RoiAlign:" : "test_RoiAlign"), std::string::npos) << r.status().to_string();
    EXPECT_NE(r.status().message().find(what), std::string::npos) << r.status().to_string();
  };
  Tensor bad_bi = make_tensor<int64_t>({1}, {1});
  expect_error(run_op({"RoiAlign", {}, 16}, {&x, &rois, &bad_bi}), "batch_indices[0] = 1", true);
  expect_error(run_op({"RoiAlign", {attr_s("mode", "min")}, 16}, {&x, &rois, &bi}), "mode");
  expect_error(run_op({"RoiAlign", {attr_s("coordinate_transformation_mode", "asymmetric")}, 16}, {&x, &rois, &bi}),
               "coordinate_transformation_mode");
  expect_error(run_op({"RoiAlign", {attr_i("output_height", 0)}, 16}, {&x, &rois, &bi}), "output_height");
  expect_error(run_op({"RoiAlign", {attr_i("sampling_ratio", -1)}, 16}, {&x, &rois, &bi}), "sampling_ratio");
  Tensor rois3 = make_tensor<float>({1, 3}, {0, 0, 3});
  expect_error(run_op({"RoiAlign", {}, 16}, {&x, &rois3, &bi}), "rois");
  Tensor bi2 = make_tensor<int64_t>({2}, {0, 0});
  expect_error(run_op({"RoiAlign", {}, 16}, {&x, &rois, &bi2}), "batch_indices");
  Tensor x3 = make_tensor<float>({1, 4, 4}, std::vector<float>(16, 1.f));
  expect_error(run_op({"RoiAlign", {}, 16}, {&x3, &rois, &bi}), "X must be");
  Tensor inf_roi = make_tensor<float>({1, 4}, {0, 0, 3, INFINITY});
  expect_error(run_op({"RoiAlign", {}, 16}, {&x, &inf_roi, &bi}), "non-finite", true);
}

}  // namespace
}  // namespace tessera
