// Reference kernels BatchNormalization, InstanceNormalization, LayerNormalization.
// Expected values were computed with onnxruntime 1.20 on single-node models fed the same
// seq() inputs (expression above each table).
#include <cmath>

#include "ref_a_util.h"

namespace tessera {
namespace {

using testing::attr_f;
using testing::attr_i;
using testing::expect_error;
using testing::expect_near;
using testing::make_tensor;
using testing::run_ok;
using testing::seq;
using testing::to_vector;

TEST(RefBatchNormalization, Inference4dAnd2d) {
  Tensor x = seq({2, 3, 2, 3}), s = seq({3}, 3, 7), b = seq({3}, 5, 13), mean = seq({3}, 2, 5);
  Tensor var = make_tensor<float>({3}, {1.25f, 0.5f, 1.25f});  // abs(seq([3],3,7)) + 0.5
  auto out = run_ok({"BatchNormalization", {attr_f("epsilon", 1e-3f)}, 15}, {&x, &s, &b, &mean, &var});
  ASSERT_EQ(out.size(), 1u);
  // ort(BatchNormalization, opset 15, epsilon=1e-3)
  expect_near(to_vector<float>(out[0]),
              {-0.9970859f, -2.170552f, -1.5f, -2.673466f, -2.002914f, -1.332362f, -0.25f, -0.25f, -0.25f, -0.25f,
               -0.25f, -0.25f, 1.f, 0.3294478f, 1.502914f, 0.8323619f, 0.1618097f, 1.335276f, -1.835276f, -1.164724f,
               -2.33819f, -1.667638f, -0.9970859f, -2.170552f, -0.25f, -0.25f, -0.25f, -0.25f, -0.25f, -0.25f,
               -0.005828321f, 1.167638f, 0.4970858f, -0.1734664f, 1.f, 0.3294478f});
  Tensor x2 = seq({2, 3});
  auto out2 = run_ok({"BatchNormalization", {}, 9}, {&x2, &s, &b, &mean, &var});
  ASSERT_EQ(out2.size(), 1u);
  // ort(BatchNormalization, opset 9)
  expect_near(to_vector<float>(out2[0]), {-0.9968867f, -0.25f, 0.3291823f, -2.673931f, -0.25f, 0.1614779f});
}

TEST(RefBatchNormalization, Opset7NonSpatial) {
  // spatial = 0: one parameter per (c, position); hand-computed: y = (x - m) / sqrt(v + eps) * s + b.
  Tensor x = make_tensor<float>({2, 1, 2}, {1.f, 2.f, 3.f, 4.f});
  Tensor s = make_tensor<float>({1, 2}, {2.f, 1.f}), b = make_tensor<float>({1, 2}, {0.f, 1.f});
  Tensor m = make_tensor<float>({1, 2}, {1.f, 0.f}), v = make_tensor<float>({1, 2}, {4.f, 1.f});
  auto out = run_ok({"BatchNormalization", {attr_i("spatial", 0), attr_f("epsilon", 0.f)}, 7}, {&x, &s, &b, &m, &v});
  ASSERT_EQ(out.size(), 1u);
  expect_near(to_vector<float>(out[0]), {0.f, 3.f, 2.f, 5.f});
}

TEST(RefBatchNormalization, TrainingModeUsesBatchStatistics) {
  // X [2, 1, 2] = 1 2 3 4: batch mean 2.5, population variance ((1.5^2 + 0.5^2) * 2) / 4 = 1.25.
  Tensor x = make_tensor<float>({2, 1, 2}, {1.f, 2.f, 3.f, 4.f});
  Tensor scale = make_tensor<float>({1}, {2.f}), b = make_tensor<float>({1}, {1.f});
  Tensor mean = make_tensor<float>({1}, {0.f}), var = make_tensor<float>({1}, {1.f});
  auto out = run_ok({"BatchNormalization", {attr_i("training_mode", 1), attr_f("epsilon", 0.f), attr_f("momentum", 0.9f)}, 15, 3},
                    {&x, &scale, &b, &mean, &var});
  ASSERT_EQ(out.size(), 3u);
  const float s = 2.f / std::sqrt(1.25f);  // scale / sqrt(var)
  expect_near(to_vector<float>(out[0]), {-1.5f * s + 1, -0.5f * s + 1, 0.5f * s + 1, 1.5f * s + 1});
  expect_near(to_vector<float>(out[1]), {0.f * 0.9f + 2.5f * 0.1f});   // running_mean
  expect_near(to_vector<float>(out[2]), {1.f * 0.9f + 1.25f * 0.1f});  // running_var
}

TEST(RefBatchNormalization, TrainingOutputsAndBadShapesAreErrors) {
  Tensor x = seq({1, 3, 2}), p = seq({3}), bad = seq({4});
  expect_error({"BatchNormalization", {}, 15, 3}, {&x, &p, &p, &p, &p}, StatusCode::kUnimplemented, "training_mode = 1");
  expect_error({"BatchNormalization", {}, 9, 3}, {&x, &p, &p, &p, &p}, StatusCode::kUnimplemented, "training outputs");
  expect_error({"BatchNormalization", {}, 15}, {&x, &p, &bad, &p, &p}, StatusCode::kInvalidArgument, "B");
  Tensor x1 = seq({3});
  expect_error({"BatchNormalization", {}, 15}, {&x1, &p, &p, &p, &p}, StatusCode::kInvalidArgument, "rank");
}

TEST(RefInstanceNormalization, PerPlaneStatistics) {
  Tensor x = seq({2, 3, 5}), s = seq({3}, 3, 7), b = seq({3}, 5, 13);
  auto out = run_ok({"InstanceNormalization", {attr_f("epsilon", 1e-2f)}, 6}, {&x, &s, &b});
  ASSERT_EQ(out.size(), 1u);
  // ort(InstanceNormalization, opset 6, epsilon=1e-2)
  expect_near(to_vector<float>(out[0]),
              {-0.3703952f, -1.891017f, -1.02209f, -2.542712f, -1.673785f, -0.25f, -0.25f, -0.25f, -0.25f, -0.25f,
               0.8262146f, -0.04271221f, 1.47791f, 0.6089829f, 2.129605f, -1.862284f, -0.827186f, -2.638608f,
               -1.60351f, -0.5684115f, -0.25f, -0.25f, -0.25f, -0.25f, -0.25f, 1.931588f, 0.8964902f, -0.1386082f,
               1.672814f, 0.6377156f},
              1e-5f, 1e-5f);
  // A single-element plane has variance 0: the output is B.
  Tensor x1 = make_tensor<float>({1, 1, 1}, {5.f}), s1 = make_tensor<float>({1}, {3.f}), b1 = make_tensor<float>({1}, {0.5f});
  auto one = run_ok({"InstanceNormalization", {}, 6}, {&x1, &s1, &b1});
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(to_vector<float>(one[0]), (std::vector<float>{0.5f}));
  Tensor bad = seq({2});
  expect_error({"InstanceNormalization"}, {&x, &bad, &b}, StatusCode::kInvalidArgument, "scale");
}

TEST(RefLayerNormalization, LastAxisWithMeanAndInvStdDev) {
  Tensor x = seq({2, 3, 4}), s = seq({4}, 3, 7), b = seq({4}, 5, 13);
  auto out = run_ok({"LayerNormalization", {}, 17, 3}, {&x, &s, &b});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[1].shape(), (Shape{2, 3, 1}));
  // ort(LayerNormalization, opset 17), outputs Y, Mean, InvStdDev
  expect_near(to_vector<float>(out[0]),
              {-0.5152072f, -0.25f, 0.6060829f, -1.328264f, -1.649998f, -0.25f, 2.049987f, -0.9500006f, -0.9578314f,
               -0.25f, 1.180723f, -0.7389559f, -1.649998f, -0.25f, 2.049987f, -0.9500006f, -0.9578314f, -0.25f,
               1.180723f, -0.7389559f, -2.283132f, -0.25f, -0.1445781f, -1.180723f});
  expect_near(to_vector<float>(out[1]), {0.f, 0.125f, -0.4375f, 0.375f, -0.1875f, -0.0625f});
  expect_near(to_vector<float>(out[2]), {1.050446f, 1.59998f, 1.28514f, 1.59998f, 1.28514f, 1.28514f});
}

TEST(RefLayerNormalization, Axis1NoBias) {
  Tensor x = seq({2, 3, 4}), s = seq({3, 4}, 3, 7);
  auto out = run_ok({"LayerNormalization", {attr_i("axis", 1), attr_f("epsilon", 1e-3f)}, 17, 3}, {&x, &s});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[2].shape(), (Shape{2, 1, 1}));
  // ort(LayerNormalization, opset 17, axis=1, epsilon=1e-3)
  expect_near(to_vector<float>(out[0]),
              {1.03212f, 0.f, -0.3565505f, -0.4065927f, 0.2126792f, 0.3878269f, 0.3315294f, -0.09382908f, -0.f,
               0.7693985f, 0.04378691f, -0.68808f, -0.4463857f, -0.f, 1.176835f, -0.0676342f, -0.5140199f, -0.6222346f,
               -0.01352684f, 1.014513f, 0.f, -0.2840636f, 0.419332f, 0.2975905f});
  expect_near(to_vector<float>(out[1]), {-0.1041667f, 0.04166667f});
  expect_near(to_vector<float>(out[2]), {1.201012f, 1.298577f});
}

TEST(RefLayerNormalization, Errors) {
  Tensor x = seq({2, 3, 4}), s = seq({3});
  expect_error({"LayerNormalization"}, {&x, &s}, StatusCode::kUnimplemented, "Scale");
  Tensor s4 = seq({4});
  expect_error({"LayerNormalization", {attr_i("axis", 3)}}, {&x, &s4}, StatusCode::kInvalidArgument, "axis");
}

}  // namespace
}  // namespace tessera
