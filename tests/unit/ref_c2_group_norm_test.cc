// Reference kernel GroupNormalization. Expected values were computed with onnxruntime 1.20
// on single-node models fed seq() inputs (ref_a_util.h).
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

TEST(RefGroupNormalization, Opset18PerGroupScale) {
  Tensor x = seq({2, 4, 3}), s = make_tensor<float>({2}, {1.5f, -0.5f}), b = make_tensor<float>({2}, {0.25f, 1.f});
  auto out = run_ok({"GroupNormalization", {attr_i("num_groups", 2), attr_f("epsilon", 0.01f)}, 18}, {&x, &s, &b});
  ASSERT_EQ(out.size(), 1u);
  // ort(GroupNormalization, opset 18, num_groups 2, epsilon 0.01)
  expect_near(to_vector<float>(out[0]),
              {-1.824839f, 1.28742f, -0.4910141f, 2.621245f, 0.8428113f, -0.9356226f, 0.3239513f, 0.9248835f,
               1.525816f, 0.4741843f, 1.075117f, 1.676049f, 0.6754503f, -1.366711f, 2.207071f, 0.16491f,
               -1.877251f, 1.696531f, 0.8581833f, 1.538904f, 0.347643f, 1.028363f, 1.709084f, 0.5178231f},
              1e-5f, 1e-5f);
}

TEST(RefGroupNormalization, Opset21PerChannelScale) {
  Tensor x = seq({2, 4, 3}), s = make_tensor<float>({4}, {1.5f, -0.5f, 2.f, 1.f});
  Tensor b = make_tensor<float>({4}, {0.25f, 1.f, 0.f, -1.f});
  auto out = run_ok({"GroupNormalization", {attr_i("num_groups", 2)}, 21}, {&x, &s, &b});
  ASSERT_EQ(out.size(), 1u);
  // ort(GroupNormalization, opset 21, num_groups 2)
  expect_near(to_vector<float>(out[0]),
              {-1.839563f, 1.294782f, -0.4962726f, 0.2039759f, 0.800994f, 1.398012f, 2.72392f, 0.3026578f,
               -2.118604f, 0.05930209f, -1.151329f, -2.36196f, 0.6794447f, -1.38189f, 2.225446f, 1.02863f,
               1.715741f, 0.513296f, 0.5725929f, -2.175853f, 2.633927f, -1.057259f, -2.431482f, -0.02659208f},
              1e-5f, 1e-5f);
}

TEST(RefGroupNormalization, Errors) {
  Tensor x = seq({2, 4, 3}), s2 = make_tensor<float>({2}, {1.f, 1.f}), s4 = make_tensor<float>({4}, {1.f, 1.f, 1.f, 1.f});
  expect_error({"GroupNormalization", {attr_i("num_groups", 3)}, 18}, {&x, &s2, &s2}, StatusCode::kInvalidArgument, "divide");
  expect_error({"GroupNormalization", {attr_i("num_groups", 0)}, 18}, {&x, &s2, &s2}, StatusCode::kInvalidArgument, "num_groups");
  expect_error({"GroupNormalization", {}, 18}, {&x, &s2, &s2}, StatusCode::kInvalidArgument, "num_groups");
  expect_error({"GroupNormalization", {attr_i("num_groups", 2)}, 18}, {&x, &s4, &s4}, StatusCode::kInvalidArgument, "scale");
  expect_error({"GroupNormalization", {attr_i("num_groups", 2)}, 21}, {&x, &s2, &s2}, StatusCode::kInvalidArgument, "scale");
}

}  // namespace
}  // namespace tessera
