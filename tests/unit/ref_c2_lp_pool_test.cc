// Reference kernel LpPool. Expected values were computed with onnxruntime 1.20 on
// single-node models fed seq() inputs (see ref_a_util.h).
#include "ref_a_util.h"

namespace tessera {
namespace {

using testing::attr_i;
using testing::attr_ints;
using testing::attr_s;
using testing::expect_error;
using testing::expect_near;
using testing::run_ok;
using testing::seq;
using testing::to_vector;

TEST(RefLpPool, DefaultP2) {
  Tensor x = seq({2, 1, 5, 4});
  auto out = run_ok({"LpPool", {attr_ints("kernel_shape", {2, 2})}, 11}, {&x});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{2, 1, 4, 3}));
  // ort(LpPool, opset 11, kernel_shape [2, 2])
  expect_near(to_vector<float>(out[0]),
              {1.561249f, 1.436141f, 1.677051f, 1.47902f, 1.47902f, 1.620185f, 1.436141f, 1.561249f, 1.802776f, 1.436141f,
               1.677051f, 1.620185f, 1.561249f, 1.802776f, 1.561249f, 1.677051f, 1.620185f, 1.47902f, 1.620185f, 1.677051f,
               1.436141f, 1.802776f, 1.561249f, 1.436141f});
}

TEST(RefLpPool, P3StridesPads) {
  Tensor x = seq({2, 1, 5, 4});
  auto out = run_ok({"LpPool", {attr_ints("kernel_shape", {3, 2}), attr_i("p", 3), attr_ints("strides", {2, 1}),
                                attr_ints("pads", {1, 0, 1, 1})}, 11},
                    {&x});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{2, 1, 3, 4}));
  // ort(LpPool, opset 11, kernel_shape [3, 2], p 3, strides [2, 1], pads [1, 0, 1, 1])
  expect_near(to_vector<float>(out[0]),
              {1.36003f, 1.186865f, 1.454662f, 1.25f, 1.282482f, 1.57909f, 1.702821f, 1.253325f, 1.186865f, 1.454662f,
               1.437224f, 1.005181f, 1.36003f, 1.57909f, 1.36003f, 0.8177665f, 1.715303f, 1.715303f, 1.282482f, 0.9894729f,
               1.57909f, 1.36003f, 1.186865f, 1.040042f});
}

TEST(RefLpPool, P1SameLower) {
  Tensor x = seq({2, 1, 5, 4});
  auto out = run_ok({"LpPool", {attr_ints("kernel_shape", {2, 2}), attr_i("p", 1), attr_s("auto_pad", "SAME_LOWER")}, 11}, {&x});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{2, 1, 5, 4}));
  // ort(LpPool, opset 11, kernel_shape [2, 2], p 1, auto_pad SAME_LOWER)
  expect_near(to_vector<float>(out[0]),
              {1.25f, 1.75f, 1.f, 1.75f, 1.5f, 2.75f, 2.75f, 2.75f, 1.25f, 2.75f, 2.75f, 2.5f, 1.5f, 2.75f,
               2.75f, 3.f, 1.25f, 2.75f, 2.75f, 2.5f, 0.75f, 1.f, 1.5f, 1.75f, 1.25f, 2.75f, 3.f, 2.75f,
               1.5f, 2.75f, 2.5f, 2.75f, 1.25f, 2.5f, 2.75f, 2.75f, 1.5f, 3.f, 2.75f, 2.75f});
}

TEST(RefLpPool, DilationsCeilModeOpset18) {
  Tensor x = seq({2, 1, 5, 4});
  auto out = run_ok({"LpPool", {attr_ints("kernel_shape", {2, 2}), attr_ints("dilations", {2, 1}), attr_i("ceil_mode", 1),
                                attr_ints("strides", {2, 2})}, 18},
                    {&x});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{2, 1, 2, 2}));
  // ort(LpPool, opset 18, kernel_shape [2, 2], dilations [2, 1], ceil_mode 1, strides [2, 2])
  expect_near(to_vector<float>(out[0]), {1.837117f, 1.85405f, 1.767767f, 1.620185f, 1.274755f, 1.837117f, 1.620185f, 1.767767f});
}

TEST(RefLpPool, Errors) {
  Tensor x = seq({1, 1, 4, 4});
  expect_error({"LpPool", {attr_ints("kernel_shape", {2, 2}), attr_i("p", 0)}, 11}, {&x}, StatusCode::kInvalidArgument, "p must");
  expect_error({"LpPool", {}, 11}, {&x}, StatusCode::kInvalidArgument, "kernel_shape");
  expect_error({"LpPool", {attr_ints("kernel_shape", {2})}, 11}, {&x}, StatusCode::kInvalidArgument, "kernel_shape");
  expect_error({"LpPool", {attr_ints("kernel_shape", {2, 2}), attr_ints("strides", {0, 1})}, 11}, {&x},
               StatusCode::kInvalidArgument, "strides");
  Tensor x2 = seq({4, 4});
  expect_error({"LpPool", {attr_ints("kernel_shape", {2, 2})}, 11}, {&x2}, StatusCode::kInvalidArgument, "rank");
}

}  // namespace
}  // namespace tessera
