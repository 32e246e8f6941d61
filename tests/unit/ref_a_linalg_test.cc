// Reference kernels MatMul, Gemm, Softmax, LogSoftmax. Expected values were computed with
// onnxruntime 1.20 on single-node models fed the same seq() inputs (expression above
// each table).
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

TEST(RefMatMul, ThreeDTimesTwoD) {
  Tensor a = seq({2, 3, 4}), b = seq({4, 5}, 5, 13);
  auto out = run_ok({"MatMul", {}, 13}, {&a, &b});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{2, 3, 5}));
  // ort(MatMul, opset 13)
  expect_near(to_vector<float>(out[0]),
              {3.25f, -0.8125f, -0.8125f, 3.25f, -0.8125f, -0.25f, -0.4375f, 0.1875f, -0.8125f, -0.1875f, 1.0625f,
               1.3125f, -0.875f, -1.4375f, 0.4375f, 0.3125f, -1.0625f, 0.8125f, -1.375f, -0.3125f, 1.625f, 0.6875f,
               -0.25f, -2.f, 0.3125f, -2.5625f, 0.375f, 0.0625f, 2.1875f, 0.25f});
}

TEST(RefMatMul, FourDBatchBroadcast) {
  Tensor a = seq({2, 1, 3, 4}), b = seq({3, 4, 2}, 5, 13);
  auto out = run_ok({"MatMul", {}, 13}, {&a, &b});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{2, 3, 3, 2}));
  // ort(MatMul, opset 13)
  expect_near(to_vector<float>(out[0]),
              {1.625f, 0.f, -0.875f, 2.1875f, 2.8125f, -1.8125f, 1.625f, 1.625f, -0.75f, -0.9375f, 2.375f, -1.4375f,
               1.625f, 1.625f, -0.625f, -0.8125f, 1.9375f, -1.875f, -1.0625f, 2.4375f, 2.625f, -1.5625f, -1.9375f,
               -1.4375f, -0.6875f, -1.25f, 2.4375f, -1.75f, -2.f, 2.5625f, -0.3125f, -0.875f, 2.25f, -1.9375f, -2.0625f,
               2.5f});
}

TEST(RefMatMul, OneDOperands) {
  Tensor a = seq({4}), b = seq({2, 4, 3}, 5, 13);
  auto left = run_ok({"MatMul", {}, 13}, {&a, &b});
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].shape(), (Shape{2, 3}));
  // ort(MatMul, opset 13) with A 1-D
  expect_near(to_vector<float>(left[0]), {1.625f, 1.625f, -0.8125f, -2.4375f, 1.625f, 1.625f});
  Tensor a3 = seq({2, 3, 4}), b1 = seq({4}, 5, 13);
  auto right = run_ok({"MatMul", {}, 13}, {&a3, &b1});
  ASSERT_EQ(right.size(), 1u);
  EXPECT_EQ(right[0].shape(), (Shape{2, 3}));
  // ort(MatMul, opset 13) with B 1-D
  expect_near(to_vector<float>(right[0]), {0.f, 0.8125f, 2.3125f, 0.375f, 1.875f, -2.8125f});
  Tensor v = make_tensor<float>({3}, {1.f, 2.f, 3.f}), w = make_tensor<float>({3}, {4.f, -5.f, 6.f});
  auto dot = run_ok({"MatMul", {}, 13}, {&v, &w});
  ASSERT_EQ(dot.size(), 1u);
  EXPECT_EQ(dot[0].shape(), Shape{});
  EXPECT_EQ(to_vector<float>(dot[0]), (std::vector<float>{12.f}));  // 4 - 10 + 18
}

TEST(RefMatMul, Int64AndErrors) {
  Tensor a = make_tensor<int64_t>({1, 2}, {3, -4}), b = make_tensor<int64_t>({2, 1}, {5, 6});
  auto out = run_ok({"MatMul", {}, 13}, {&a, &b});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(to_vector<int64_t>(out[0]), (std::vector<int64_t>{-9}));
  Tensor x = seq({2, 3}), y = seq({4, 2});
  expect_error({"MatMul"}, {&x, &y}, StatusCode::kInvalidArgument, "inner dims");
  Tensor p = seq({2, 3, 4}), q = seq({3, 4, 5});
  expect_error({"MatMul"}, {&p, &q}, StatusCode::kInvalidArgument, "batch");
  Tensor s = make_tensor<float>({}, {1.f});
  expect_error({"MatMul"}, {&s, &x}, StatusCode::kInvalidArgument, "rank");
}

TEST(RefGemm, TransposesAlphaBetaRowBroadcastC) {
  Tensor a = seq({4, 3}), b = seq({5, 4}, 5, 13), c = seq({1, 5}, 3, 7);
  auto out = run_ok({"Gemm", {attr_i("transA", 1), attr_i("transB", 1), attr_f("alpha", 0.5f), attr_f("beta", 2.f)}, 13},
                    {&a, &b, &c});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{3, 5}));
  // ort(Gemm, opset 13, transA=1, transB=1, alpha=0.5, beta=2)
  expect_near(to_vector<float>(out[0]), {-0.59375f, 0.8125f, 2.625f, -1.5f, 2.34375f, -1.78125f, 0.15625f, 1.28125f,
                                         -0.6875f, 0.84375f, -0.90625f, -0.84375f, 1.65625f, -0.5625f, 0.71875f});
}

TEST(RefGemm, ColumnBroadcastCAndNoC) {
  Tensor a = seq({3, 4}), b = seq({4, 2}, 5, 13), c = seq({3, 1}, 3, 7);
  auto with_c = run_ok({"Gemm", {attr_f("beta", -1.f)}, 11}, {&a, &b, &c});
  auto no_c = run_ok({"Gemm", {attr_f("alpha", 2.f)}, 13}, {&a, &b});
  ASSERT_EQ(with_c.size(), 1u);
  ASSERT_EQ(no_c.size(), 1u);
  // ort(Gemm, opset 11, beta=-1) and ort(Gemm, opset 13, alpha=2) without C
  expect_near(to_vector<float>(with_c[0]), {2.375f, 0.75f, -0.875f, 2.1875f, 2.0625f, -2.5625f});
  expect_near(to_vector<float>(no_c[0]), {3.25f, 0.f, -1.75f, 4.375f, 5.625f, -3.625f});
}

TEST(RefGemm, Errors) {
  Tensor a = seq({3, 4}), b = seq({3, 2}), c = seq({2, 2});
  expect_error({"Gemm"}, {&a, &b}, StatusCode::kInvalidArgument, "inner dims");
  Tensor b2 = seq({4, 2});
  expect_error({"Gemm"}, {&a, &b2, &c}, StatusCode::kInvalidArgument, "C");
  Tensor a3 = seq({1, 3, 4});
  expect_error({"Gemm"}, {&a3, &b2}, StatusCode::kInvalidArgument, "2-D");
}

TEST(RefSoftmax, Opset13SingleAxisVersusOpset11Coerced) {
  Tensor x = seq({2, 3, 4}, 5, 13);
  auto s13 = run_ok({"Softmax", {attr_i("axis", 1)}, 13}, {&x});
  auto s11 = run_ok({"Softmax", {}, 11}, {&x});  // default axis 1: softmax over 12 elements
  ASSERT_EQ(s13.size(), 1u);
  ASSERT_EQ(s11.size(), 1u);
  // ort(Softmax, opset 13, axis=1)
  expect_near(to_vector<float>(s13[0]),
              {0.1243993f, 0.1243993f, 0.3988584f, 0.1243993f, 0.7158687f, 0.7158687f, 0.08899733f, 0.7158687f,
               0.1597319f, 0.1597319f, 0.5121443f, 0.1597319f, 0.3988584f, 0.1243993f, 0.1243993f, 0.3988584f,
               0.08899733f, 0.7158687f, 0.7158687f, 0.08899733f, 0.5121443f, 0.1597319f, 0.1597319f, 0.5121443f});
  // ort(Softmax, opset 11) (default axis 1, input coerced to [2, 12])
  expect_near(to_vector<float>(s11[0]),
              {0.01251673f, 0.04368769f, 0.152485f, 0.0206366f, 0.07202882f, 0.2514053f, 0.03402401f, 0.1187555f,
               0.0160718f, 0.05609611f, 0.1957946f, 0.02649792f, 0.08676153f, 0.0117419f, 0.04098324f, 0.1430456f,
               0.01935911f, 0.06756994f, 0.2358423f, 0.03191778f, 0.111404f, 0.01507689f, 0.05262353f, 0.1836741f});
}

TEST(RefSoftmax, Opset11LastAxisAnd4dAttention) {
  Tensor x = seq({2, 3, 4}, 5, 13);
  auto s = run_ok({"Softmax", {attr_i("axis", 2)}, 11}, {&x});
  ASSERT_EQ(s.size(), 1u);
  // ort(Softmax, opset 11, axis=2)
  expect_near(to_vector<float>(s[0]),
              {0.05458051f, 0.1905047f, 0.6649267f, 0.08998805f, 0.1512532f, 0.5279256f, 0.07144696f, 0.2493744f,
               0.05458051f, 0.1905047f, 0.6649267f, 0.08998805f, 0.3070854f, 0.04155949f, 0.1450569f, 0.5062982f,
               0.05458051f, 0.1905047f, 0.6649267f, 0.08998805f, 0.3070854f, 0.04155949f, 0.1450569f, 0.5062982f});
  Tensor x4 = seq({1, 2, 3, 3}, 5, 13);
  auto s4 = run_ok({"Softmax", {attr_i("axis", -1)}, 12}, {&x4});
  ASSERT_EQ(s4.size(), 1u);
  // ort(Softmax, opset 12, axis=-1)
  expect_near(to_vector<float>(s4[0]), {0.05997779f, 0.2093431f, 0.7306791f, 0.05997779f, 0.2093431f, 0.7306791f,
                                        0.2015028f, 0.703314f, 0.0951832f, 0.2015028f, 0.703314f, 0.0951832f,
                                        0.6220059f, 0.08417934f, 0.2938148f, 0.6220059f, 0.08417934f, 0.2938148f});
  Tensor one = make_tensor<float>({1}, {-3.f});
  auto s1 = run_ok({"Softmax", {}, 13}, {&one});
  ASSERT_EQ(s1.size(), 1u);
  EXPECT_EQ(to_vector<float>(s1[0]), (std::vector<float>{1.f}));
}

TEST(RefLogSoftmax, Opset13DefaultAndOpset11Axis0) {
  Tensor x = seq({2, 3, 4}, 5, 13);
  auto l13 = run_ok({"LogSoftmax", {}, 13}, {&x});
  auto l11 = run_ok({"LogSoftmax", {attr_i("axis", 0)}, 11}, {&x});  // axis 0: over all 24
  ASSERT_EQ(l13.size(), 1u);
  ASSERT_EQ(l11.size(), 1u);
  // ort(LogSoftmax, opset 13)
  expect_near(to_vector<float>(l13[0]),
              {-2.908078f, -1.658078f, -0.4080784f, -2.408078f, -1.8888f, -0.6388f, -2.6388f, -1.3888f, -2.908078f,
               -1.658078f, -0.4080784f, -2.408078f, -1.180629f, -3.180629f, -1.930629f, -0.6806294f, -2.908078f,
               -1.658078f, -0.4080784f, -2.408078f, -1.180629f, -3.180629f, -1.930629f, -0.6806294f});
  // ort(LogSoftmax, opset 11, axis=0)
  expect_near(to_vector<float>(l11[0]),
              {-5.106298f, -3.856298f, -2.606298f, -4.606298f, -3.356298f, -2.106298f, -4.106298f, -2.856298f,
               -4.856298f, -3.606298f, -2.356298f, -4.356298f, -3.106298f, -5.106298f, -3.856298f, -2.606298f,
               -4.606298f, -3.356298f, -2.106298f, -4.106298f, -2.856298f, -4.856298f, -3.606298f, -2.356298f});
}

TEST(RefSoftmax, Errors) {
  Tensor x = seq({2, 3});
  expect_error({"Softmax", {attr_i("axis", 2)}, 13}, {&x}, StatusCode::kInvalidArgument, "axis");
  expect_error({"LogSoftmax", {attr_i("axis", -3)}, 11}, {&x}, StatusCode::kInvalidArgument, "axis");
  Tensor s = make_tensor<float>({}, {1.f});
  expect_error({"Softmax", {}, 13}, {&s}, StatusCode::kInvalidArgument, "rank");
}

}  // namespace
}  // namespace tessera
