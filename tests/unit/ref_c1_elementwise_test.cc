// Section C1 elementwise ops: CastLike, Mod, BitwiseAnd/Or/Xor, BitShift, Dropout (and the
// unary ops further down). Expected values were computed with numpy 1.26 (np.mod, np.fmod,
// np.bitwise_*, np.left_shift/right_shift) as stated at each check; the rest by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "op_test_util.h"

namespace tessera {
namespace {

using testing::attr_f;
using testing::attr_i;
using testing::attr_s;
using testing::expect_near;
using testing::make_tensor;
using testing::OpSpec;
using testing::run1;
using testing::run_op;
using testing::to_vector;

TEST(RefC1CastLike, CastsToTheSecondInputsDtype) {
  Tensor x = make_tensor<float>({4}, {-2.7f, 0.5f, 3.9f, 1e3f});
  Tensor like = make_tensor<int32_t>({1}, {0});
  Tensor y = run1({"CastLike", {}, 15}, {&x, &like});
  EXPECT_EQ(y.shape(), (Shape{4}));
  EXPECT_EQ(to_vector<int32_t>(y), (std::vector<int32_t>{-2, 0, 3, 1000}));
  Tensor d = make_tensor<double>({}, {0.0});
  Tensor z = run1({"CastLike", {}, 21}, {&x, &d});
  EXPECT_EQ(to_vector<double>(z), (std::vector<double>{-2.7f, 0.5f, 3.9f, 1e3f}));
  Tensor b = make_tensor<bool>({2}, {true, false});
  Tensor yb = run1({"CastLike"}, {&x, &b});
  EXPECT_EQ(yb.dtype(), DType::kBool);
  EXPECT_EQ(yb.data_as<bool>()[1], true);
  EXPECT_FALSE(run_op({"CastLike"}, {&x}).is_ok());  // needs two inputs
}

TEST(RefC1Mod, IntegerTakesDivisorSignUnlessFmod) {
  // numpy: np.mod(a, b) = [0, -2, 5, 0, 2, 3]; np.fmod(a, b) = [0, 1, 5, 0, -1, 3]
  Tensor a = make_tensor<int32_t>({6}, {-4, 7, 5, 4, -7, 8});
  Tensor b = make_tensor<int32_t>({6}, {2, -3, 8, -2, 3, 5});
  EXPECT_EQ(to_vector<int32_t>(run1({"Mod", {}, 13}, {&a, &b})), (std::vector<int32_t>{0, -2, 5, 0, 2, 3}));
  EXPECT_EQ(to_vector<int32_t>(run1({"Mod", {attr_i("fmod", 1)}, 10}, {&a, &b})), (std::vector<int32_t>{0, 1, 5, 0, -1, 3}));
  Tensor m = make_tensor<int32_t>({2}, {std::numeric_limits<int32_t>::min(), 9});
  Tensor n1 = make_tensor<int32_t>({}, {-1});
  EXPECT_EQ(to_vector<int32_t>(run1({"Mod"}, {&m, &n1})), (std::vector<int32_t>{0, 0}));
  Tensor u = make_tensor<uint8_t>({3}, {250, 7, 0});
  Tensor v = make_tensor<uint8_t>({1}, {7});
  EXPECT_EQ(to_vector<uint8_t>(run1({"Mod"}, {&u, &v})), (std::vector<uint8_t>{5, 0, 0}));
}

TEST(RefC1Mod, FloatFmodAndErrors) {
  // numpy: np.fmod(float32) = [-0.10000038, 0.39999962, 5, 0.10000038, -0.39999962, 3]
  Tensor a = make_tensor<float>({6}, {-4.3f, 7.2f, 5.0f, 4.3f, -7.2f, 8.0f});
  Tensor b = make_tensor<float>({6}, {2.1f, -3.4f, 8.0f, -2.1f, 3.4f, 5.0f});
  expect_near(to_vector<float>(run1({"Mod", {attr_i("fmod", 1)}}, {&a, &b})),
              {-0.10000038146972656f, 0.39999961853027344f, 5.0f, 0.10000038146972656f, -0.39999961853027344f, 3.0f});
  EXPECT_FALSE(run_op({"Mod"}, {&a, &b}).is_ok());  // fmod 0 on floats
  EXPECT_FALSE(run_op({"Mod", {attr_i("fmod", 2)}}, {&a, &b}).is_ok());
  Tensor i = make_tensor<int64_t>({2}, {1, 2});
  Tensor z = make_tensor<int64_t>({2}, {1, 0});
  auto r = run_op({"Mod"}, {&i, &z});
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("by zero"), std::string::npos);
}

TEST(RefC1Bitwise, AndOrXorBroadcast) {
  // numpy (int16): and [8, 8, 10], or [14, -5, 255], xor [6, -13, 245]
  Tensor a = make_tensor<int16_t>({3}, {12, -7, 255});
  Tensor b = make_tensor<int16_t>({1}, {10});
  EXPECT_EQ(to_vector<int16_t>(run1({"BitwiseAnd", {}, 18}, {&a, &b})), (std::vector<int16_t>{8, 8, 10}));
  EXPECT_EQ(to_vector<int16_t>(run1({"BitwiseOr", {}, 18}, {&a, &b})), (std::vector<int16_t>{14, -5, 255}));
  EXPECT_EQ(to_vector<int16_t>(run1({"BitwiseXor", {}, 18}, {&a, &b})), (std::vector<int16_t>{6, -13, 245}));
  Tensor f = make_tensor<float>({1}, {1});
  EXPECT_FALSE(run_op({"BitwiseAnd", {}, 18}, {&f, &f}).is_ok());
}

TEST(RefC1BitShift, LeftRightAndWideShifts) {
  // numpy (uint8): left_shift [32, 16, 128], right_shift [8, 1, 0]
  Tensor x = make_tensor<uint8_t>({3}, {16, 4, 1});
  Tensor s = make_tensor<uint8_t>({3}, {1, 2, 7});
  EXPECT_EQ(to_vector<uint8_t>(run1({"BitShift", {attr_s("direction", "LEFT")}, 11}, {&x, &s})), (std::vector<uint8_t>{32, 16, 128}));
  EXPECT_EQ(to_vector<uint8_t>(run1({"BitShift", {attr_s("direction", "RIGHT")}, 11}, {&x, &s})), (std::vector<uint8_t>{8, 1, 0}));
  Tensor w = make_tensor<uint64_t>({2}, {1, 1});
  Tensor ws = make_tensor<uint64_t>({2}, {63, 64});
  EXPECT_EQ(to_vector<uint64_t>(run1({"BitShift", {attr_s("direction", "LEFT")}, 11}, {&w, &ws})),
            (std::vector<uint64_t>{uint64_t{1} << 63, 0}));
  EXPECT_FALSE(run_op({"BitShift", {attr_s("direction", "UP")}, 11}, {&x, &s}).is_ok());
  EXPECT_FALSE(run_op({"BitShift", {}, 11}, {&x, &s}).is_ok());
  Tensor i = make_tensor<int32_t>({1}, {1});
  EXPECT_FALSE(run_op({"BitShift", {attr_s("direction", "LEFT")}, 11}, {&i, &i}).is_ok());  // signed
}

TEST(RefC1Dropout, InferenceIsIdentityWithTrueMask) {
  Tensor x = make_tensor<float>({2, 2}, {1, -2, 3, 4});
  auto r = run_op({"Dropout", {}, 13, 2}, {&x});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(to_vector<float>(r.value()[0]), (std::vector<float>{1, -2, 3, 4}));
  EXPECT_EQ(r.value()[1].dtype(), DType::kBool);
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(r.value()[1].data_as<bool>()[i]);
  // opset 7: mask has the data's dtype.
  auto r7 = run_op({"Dropout", {attr_f("ratio", 0.2f)}, 7, 2}, {&x});
  ASSERT_TRUE(r7.is_ok()) << r7.status().to_string();
  EXPECT_EQ(to_vector<float>(r7.value()[1]), (std::vector<float>{1, 1, 1, 1}));
  // training_mode true: only ratio 0 is supported.
  Tensor ratio0 = make_tensor<float>({}, {0.0f});
  Tensor ratio5 = make_tensor<float>({}, {0.5f});
  Tensor on = make_tensor<bool>({}, {true});
  EXPECT_EQ(to_vector<float>(run1({"Dropout", {}, 13}, {&x, &ratio0, &on})), (std::vector<float>{1, -2, 3, 4}));
  auto t = run_op({"Dropout", {}, 13}, {&x, &ratio5, &on});
  ASSERT_FALSE(t.is_ok());
  EXPECT_EQ(t.status().code(), StatusCode::kUnimplemented);
  Tensor off = make_tensor<bool>({}, {false});
  EXPECT_EQ(to_vector<float>(run1({"Dropout", {}, 12}, {&x, &ratio5, &off})), (std::vector<float>{1, -2, 3, 4}));
  EXPECT_FALSE(run_op({"Dropout", {}, 10}, {&x, &ratio5}).is_ok());  // ratio is an attribute before 12
}

// ---- unary ----

const std::vector<float> kX = {-2.5f, -1.0f, -0.1f, 0.0f, 0.3f, 1.0f, 2.7f};

void expect_unary(const OpSpec& spec, const std::vector<float>& in, const std::vector<float>& want) {
  Tensor x = make_tensor<float>({static_cast<int64_t>(in.size())}, in);
  Tensor y = run1(spec, {&x});
  SCOPED_TRACE(spec.op_type);
  expect_near(to_vector<float>(y), want, 2e-6f, 1e-7f);
}

TEST(RefC1Unary, TrigAndHyperbolicMatchNumpy) {
  // numpy (float64, rounded to float32): np.tan, np.arctan, np.sinh, np.cosh, np.arcsinh of kX.
  expect_unary({"Tan", {}, 7}, kX, {0.747022271156311f, -1.5574077367782593f, -0.10033467411994934f, 0.0f, 0.30933624505996704f, 1.5574077367782593f, -0.47272762656211853f});
  expect_unary({"Atan", {}, 7}, kX, {-1.1902899742126465f, -0.7853981852531433f, -0.09966865181922913f, 0.0f, 0.29145678877830505f, 0.7853981852531433f, 1.2160906791687012f});
  expect_unary({"Sinh", {}, 9}, kX, {-6.050204277038574f, -1.175201177597046f, -0.10016675293445587f, 0.0f, 0.30452027916908264f, 1.175201177597046f, 7.4062628746032715f});
  expect_unary({"Cosh", {}, 9}, kX, {6.132289409637451f, 1.5430806875228882f, 1.0050041675567627f, 1.0f, 1.04533851146698f, 1.5430806875228882f, 7.473468780517578f});
  expect_unary({"Asinh", {}, 9}, kX, {-1.647231101989746f, -0.8813735842704773f, -0.09983407706022263f, 0.0f, 0.29567304253578186f, 0.8813735842704773f, 1.7190518379211426f});
  // numpy: np.arcsin, np.arccos, np.arctanh of [-0.9, -0.5, 0, 0.3, 0.99]; np.arccosh of [1, 1.5, 3, 10].
  const std::vector<float> u = {-0.9f, -0.5f, 0.0f, 0.3f, 0.99f};
  expect_unary({"Asin", {}, 7}, u, {-1.11976957321167f, -0.5235987901687622f, 0.0f, 0.30469265580177307f, 1.429256796836853f});
  expect_unary({"Acos", {}, 7}, u, {2.690565824508667f, 2.094395160675049f, 1.5707963705062866f, 1.2661036252975464f, 0.14153946936130524f});
  expect_unary({"Atanh", {}, 9}, u, {-1.472219467163086f, -0.5493061542510986f, 0.0f, 0.30951961874961853f, 2.6466524600982666f});
  expect_unary({"Acosh", {}, 9}, {1.0f, 1.5f, 3.0f, 10.0f}, {0.0f, 0.9624236226081848f, 1.7627471685409546f, 2.993222951889038f});
  Tensor i = make_tensor<int32_t>({1}, {1});
  EXPECT_FALSE(run_op({"Tan"}, {&i}).is_ok());
}

TEST(RefC1Unary, ActivationsMatchNumpy) {
  // numpy: maximum(0, x) + minimum(0, 2 * (exp(x / 2) - 1))
  expect_unary({"Celu", {attr_f("alpha", 2.0f)}, 12}, kX, {-1.4269903898239136f, -0.7869386672973633f, -0.09754115343093872f, 0.0f, 0.30000001192092896f, 1.0f, 2.700000047683716f});
  // numpy: x * tanh(log1p(exp(x)))
  expect_unary({"Mish", {}, 18}, kX, {-0.19681620597839355f, -0.30340147018432617f, -0.056788574904203415f, 0.0f, 0.20800137519836426f, 0.8650984168052673f, 2.6786701679229736f});
  expect_unary({"ThresholdedRelu", {attr_f("alpha", 0.5f)}, 10}, kX, {0, 0, 0, 0, 0, 1, 2.7f});
  expect_unary({"ThresholdedRelu", {}, 10}, kX, {0, 0, 0, 0, 0, 0, 2.7f});  // x > 1 strictly
  expect_unary({"Shrink", {attr_f("lambd", 1.5f), attr_f("bias", 1.0f)}, 9}, kX, {-1.5f, 0, 0, 0, 0, 0, 1.7000000476837158f});
  Tensor i = make_tensor<int8_t>({4}, {-5, -1, 1, 5});
  EXPECT_EQ(to_vector<int8_t>(run1({"Shrink", {attr_f("lambd", 1.5f), attr_f("bias", 1.0f)}, 9}, {&i})),
            (std::vector<int8_t>{-4, 0, 0, 4}));
  Tensor x = make_tensor<float>({1}, {1});
  EXPECT_FALSE(run_op({"Celu", {attr_f("alpha", 0.0f)}, 12}, {&x}).is_ok());
}

TEST(RefC1Unary, BitwiseNotIsNaNIsInf) {
  Tensor a = make_tensor<int32_t>({3}, {0, 5, -1});
  EXPECT_EQ(to_vector<int32_t>(run1({"BitwiseNot", {}, 18}, {&a})), (std::vector<int32_t>{-1, -6, 0}));
  Tensor u = make_tensor<uint8_t>({2}, {0, 200});
  EXPECT_EQ(to_vector<uint8_t>(run1({"BitwiseNot", {}, 18}, {&u})), (std::vector<uint8_t>{255, 55}));
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  Tensor x = make_tensor<float>({4}, {1.0f, inf, -inf, nan});
  auto bools = [](const Tensor& t) {
    std::vector<bool> v;
    for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.data_as<bool>()[i]);
    return v;
  };
  EXPECT_EQ(bools(run1({"IsNaN", {}, 13}, {&x})), (std::vector<bool>{false, false, false, true}));
  EXPECT_EQ(bools(run1({"IsInf", {}, 10}, {&x})), (std::vector<bool>{false, true, true, false}));
  EXPECT_EQ(bools(run1({"IsInf", {attr_i("detect_negative", 0)}, 20}, {&x})), (std::vector<bool>{false, true, false, false}));
  EXPECT_EQ(bools(run1({"IsInf", {attr_i("detect_positive", 0)}, 20}, {&x})), (std::vector<bool>{false, false, true, false}));
  Tensor f = make_tensor<float>({1}, {1});
  EXPECT_FALSE(run_op({"BitwiseNot", {}, 18}, {&f}).is_ok());
  EXPECT_FALSE(run_op({"IsNaN", {}, 13}, {&a}).is_ok());
}

/// A float16 tensor from raw binary16 bits.
Tensor half_tensor(const Shape& shape, const std::vector<uint16_t>& bits) {
  Tensor t = std::move(Tensor::allocate(DType::kFloat16, shape)).value();
  std::memcpy(t.data(), bits.data(), bits.size() * 2);
  return t;
}

TEST(RefC1Half, IsNaNIsInfAndModOnFloat16) {
  // binary16 bits: 1.0 = 0x3C00, +inf = 0x7C00, -inf = 0xFC00, NaN = 0x7E00.
  Tensor x = half_tensor({4}, {0x3C00, 0x7C00, 0xFC00, 0x7E00});
  Tensor n = run1({"IsNaN", {}, 20}, {&x});
  Tensor i = run1({"IsInf", {attr_i("detect_negative", 0)}, 20}, {&x});
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(n.data_as<bool>()[k], k == 3) << k;
    EXPECT_EQ(i.data_as<bool>()[k], k == 1) << k;
  }
  // np.fmod(float16 [5.5, -5.5], 2) = [1.5, -1.5]: bits 0x3E00, 0xBE00.
  Tensor a = half_tensor({2}, {0x4580, 0xC580});
  Tensor b = half_tensor({}, {0x4000});
  Tensor y = run1({"Mod", {attr_i("fmod", 1)}, 13}, {&a, &b});
  ASSERT_EQ(y.dtype(), DType::kFloat16);
  EXPECT_EQ(y.data_as<uint16_t>()[0], 0x3E00);
  EXPECT_EQ(y.data_as<uint16_t>()[1], 0xBE00);
  EXPECT_FALSE(run_op({"Mod", {}, 13}, {&a, &b}).is_ok());  // fmod 0 on floats
}

}  // namespace
}  // namespace tessera
