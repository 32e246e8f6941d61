// Section B reference kernels: broadcasting binary ops, variadic ops, unary math and
// activations, Clip and Cast. Expected float values marked "ort" were computed with
// onnxruntime 1.20 (CPU) on a single-node model of the stated opset; the rest by hand.
#include <gtest/gtest.h>

#include <cmath>
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
using testing::run_op;
using testing::to_vector;

using testing::run1;

// ---- binary arithmetic ----

TEST(RefBBinary, AddBroadcastsRowAndColumn) {
  Tensor a = make_tensor<float>({2, 1, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = make_tensor<float>({2, 1}, {10, 20});
  Tensor y = run1({"Add"}, {&a, &b});
  EXPECT_EQ(y.shape(), (Shape{2, 2, 3}));
  EXPECT_EQ(to_vector<float>(y), (std::vector<float>{11, 12, 13, 21, 22, 23, 14, 15, 16, 24, 25, 26}));
}

TEST(RefBBinary, SubMulScalarAndOddSizes) {
  Tensor a = make_tensor<int64_t>({5}, {1, -2, 3, 7, 11});
  Tensor s = make_tensor<int64_t>({}, {3});
  EXPECT_EQ(to_vector<int64_t>(run1({"Sub"}, {&a, &s})), (std::vector<int64_t>{-2, -5, 0, 4, 8}));
  EXPECT_EQ(to_vector<int64_t>(run1({"Mul"}, {&s, &a})), (std::vector<int64_t>{3, -6, 9, 21, 33}));
  Tensor d = make_tensor<double>({1, 1}, {0.5});
  Tensor e = make_tensor<double>({3, 1}, {1, 2, 3});
  Tensor y = run1({"Mul"}, {&d, &e});
  EXPECT_EQ(y.shape(), (Shape{3, 1}));
  EXPECT_EQ(to_vector<double>(y), (std::vector<double>{0.5, 1, 1.5}));
}

TEST(RefBBinary, IntegerDivTruncates) {
  // ort (Div opset 14, int32): [3, -3, -3, 3]
  Tensor a = make_tensor<int32_t>({4}, {7, -7, 7, -7});
  Tensor b = make_tensor<int32_t>({4}, {2, 2, -2, -2});
  EXPECT_EQ(to_vector<int32_t>(run1({"Div", {}, 14}, {&a, &b})), (std::vector<int32_t>{3, -3, -3, 3}));
  Tensor m = make_tensor<int32_t>({2}, {std::numeric_limits<int32_t>::min(), 5});
  Tensor n1 = make_tensor<int32_t>({}, {-1});
  EXPECT_EQ(to_vector<int32_t>(run1({"Div"}, {&m, &n1})), (std::vector<int32_t>{std::numeric_limits<int32_t>::min(), -5}));
}

TEST(RefBBinary, IntegerDivByZeroIsAnError) {
  Tensor a = make_tensor<int64_t>({2}, {1, 2});
  Tensor b = make_tensor<int64_t>({2}, {1, 0});
  auto r = run_op({"Div"}, {&a, &b});
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("division by zero"), std::string::npos);
}

TEST(RefBBinary, FloatDivByZeroIsInf) {
  Tensor a = make_tensor<float>({2}, {1, -1});
  Tensor b = make_tensor<float>({}, {0});
  auto y = to_vector<float>(run1({"Div"}, {&a, &b}));
  EXPECT_TRUE(std::isinf(y[0]) && y[0] > 0);
  EXPECT_TRUE(std::isinf(y[1]) && y[1] < 0);
}

TEST(RefBBinary, EmptyBroadcast) {
  Tensor a = make_tensor<float>({0, 3}, {});
  Tensor b = make_tensor<float>({3}, {1, 2, 3});
  Tensor y = run1({"Add"}, {&a, &b});
  EXPECT_EQ(y.shape(), (Shape{0, 3}));
  EXPECT_EQ(y.numel(), 0);
}

TEST(RefBBinary, IncompatibleShapesAndDtypesAreErrors) {
  Tensor a = make_tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = make_tensor<float>({2}, {1, 2});
  auto r = run_op({"Add"}, {&a, &b});
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("do not broadcast"), std::string::npos);
  Tensor c = make_tensor<int64_t>({3}, {1, 2, 3});
  EXPECT_FALSE(run_op({"Mul"}, {&a, &c}).is_ok());
  Tensor t = make_tensor<bool>({1}, {true});
  EXPECT_FALSE(run_op({"Add"}, {&t, &t}).is_ok());
}

TEST(RefBBinary, PowFloatAndIntExponents) {
  // ort (Pow opset 15): [2.25, 0.5, -27, 0.25, 0.25, 729]
  Tensor a = make_tensor<float>({2, 3}, {1.5f, 2, -3, 0.5f, 4, 9});
  Tensor b = make_tensor<float>({3}, {2, -1, 3});
  expect_near(to_vector<float>(run1({"Pow", {}, 15}, {&a, &b})), {2.25f, 0.5f, -27, 0.25f, 0.25f, 729});
  Tensor e = make_tensor<int64_t>({}, {2});
  expect_near(to_vector<float>(run1({"Pow", {}, 15}, {&a, &e})), {2.25f, 4, 9, 0.25f, 16, 81});
  // ort (Pow opset 15, int64): [1024, -27, 1]
  Tensor ib = make_tensor<int64_t>({3}, {2, -3, 5});
  Tensor ie = make_tensor<int64_t>({3}, {10, 3, 0});
  EXPECT_EQ(to_vector<int64_t>(run1({"Pow", {}, 15}, {&ib, &ie})), (std::vector<int64_t>{1024, -27, 1}));
  // sqrt via exponent 0.5; ort: [1.2247449, 1.4142135, 1.7320508]
  Tensor h = make_tensor<float>({}, {0.5f});
  Tensor c = make_tensor<float>({3}, {1.5f, 2, 3});
  expect_near(to_vector<float>(run1({"Pow"}, {&c, &h})), {1.2247449159622192f, 1.4142135381698608f, 1.7320507764816284f});
}

// ---- comparisons and logic ----

TEST(RefBCompare, ComparisonsBroadcastToBool) {
  Tensor a = make_tensor<int64_t>({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = make_tensor<int64_t>({3}, {2, 2, 7});
  auto check = [&](const char* op, std::vector<bool> want) {
    Tensor y = run1({op}, {&a, &b});
    EXPECT_EQ(y.dtype(), DType::kBool) << op;
    std::vector<bool> got;
    for (int64_t i = 0; i < y.numel(); ++i) got.push_back(y.data_as<bool>()[i]);
    EXPECT_EQ(got, want) << op;
  };
  check("Equal", {false, true, false, false, false, false});
  check("Less", {true, false, true, false, false, true});
  check("Greater", {false, false, false, true, true, false});
  check("LessOrEqual", {true, true, true, false, false, true});
  check("GreaterOrEqual", {false, true, false, true, true, false});
}

TEST(RefBCompare, EqualOnBoolAndFloatNaN) {
  Tensor a = make_tensor<bool>({3}, {true, false, true});
  Tensor b = make_tensor<bool>({}, {true});
  Tensor y = run1({"Equal"}, {&a, &b});
  EXPECT_EQ(y.data_as<bool>()[0], true);
  EXPECT_EQ(y.data_as<bool>()[1], false);
  Tensor n = make_tensor<float>({1}, {std::nanf("")});
  EXPECT_EQ(run1({"Equal"}, {&n, &n}).data_as<bool>()[0], false);
}

TEST(RefBLogic, AndOrXorNot) {
  Tensor a = make_tensor<bool>({2, 2}, {false, false, true, true});
  Tensor b = make_tensor<bool>({2}, {false, true});
  auto bools = [](const Tensor& t) {
    std::vector<bool> v;
    for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.data_as<bool>()[i]);
    return v;
  };
  EXPECT_EQ(bools(run1({"And"}, {&a, &b})), (std::vector<bool>{false, false, false, true}));
  EXPECT_EQ(bools(run1({"Or"}, {&a, &b})), (std::vector<bool>{false, true, true, true}));
  EXPECT_EQ(bools(run1({"Xor"}, {&a, &b})), (std::vector<bool>{false, true, true, false}));
  EXPECT_EQ(bools(run1({"Not"}, {&a})), (std::vector<bool>{true, true, false, false}));
  Tensor f = make_tensor<float>({1}, {1});
  EXPECT_FALSE(run_op({"And"}, {&f, &f}).is_ok());
  EXPECT_FALSE(run_op({"Not"}, {&f}).is_ok());
}

TEST(RefBWhere, ThreeWayBroadcast) {
  Tensor c = make_tensor<bool>({2, 1}, {true, false});
  Tensor x = make_tensor<int64_t>({3}, {1, 2, 3});
  Tensor y = make_tensor<int64_t>({}, {-1});
  Tensor out = run1({"Where"}, {&c, &x, &y});
  EXPECT_EQ(out.shape(), (Shape{2, 3}));
  EXPECT_EQ(to_vector<int64_t>(out), (std::vector<int64_t>{1, 2, 3, -1, -1, -1}));
  Tensor f = make_tensor<float>({3}, {1, 2, 3});
  EXPECT_FALSE(run_op({"Where"}, {&c, &x, &f}).is_ok());  // X and Y dtypes differ
  EXPECT_FALSE(run_op({"Where"}, {&x, &x, &x}).is_ok());  // condition not bool
}

TEST(RefBPRelu, SlopeBroadcastsToX) {
  // ort (PRelu opset 16): [-0.1, 2, -0.3, 4, -0.5, -3]
  Tensor x = make_tensor<float>({3, 2}, {-1, 2, -3, 4, -5, -6});
  Tensor s = make_tensor<float>({2}, {0.1f, 0.5f});
  expect_near(to_vector<float>(run1({"PRelu", {}, 16}, {&x, &s})), {-0.1f, 2, -0.3f, 4, -0.5f, -3});
  Tensor bad = make_tensor<float>({3, 2, 1}, {1, 1, 1, 1, 1, 1});
  EXPECT_FALSE(run_op({"PRelu"}, {&x, &bad}).is_ok());  // slope bigger than X
}

// ---- variadic ----

TEST(RefBVariadic, MaxMinSumMean) {
  Tensor a = make_tensor<float>({1, 3}, {1, 2, 3});
  Tensor b = make_tensor<float>({2, 1}, {4, 5});
  Tensor c = make_tensor<float>({}, {0.5f});
  EXPECT_EQ(to_vector<float>(run1({"Max"}, {&a, &b, &c})), (std::vector<float>{4, 4, 4, 5, 5, 5}));
  EXPECT_EQ(to_vector<float>(run1({"Min"}, {&a, &b, &c})), (std::vector<float>{0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f}));
  EXPECT_EQ(to_vector<float>(run1({"Sum"}, {&a, &b, &c})), (std::vector<float>{5.5f, 6.5f, 7.5f, 6.5f, 7.5f, 8.5f}));
  // ort (Mean opset 13): [1.8333334, 2.1666667, 2.5, 2.1666667, 2.5, 2.8333335]
  expect_near(to_vector<float>(run1({"Mean"}, {&a, &b, &c})),
              {1.8333333730697632f, 2.1666667461395264f, 2.5f, 2.1666667461395264f, 2.5f, 2.8333334922790527f});
  EXPECT_EQ(to_vector<float>(run1({"Sum"}, {&a})), (std::vector<float>{1, 2, 3}));
  Tensor i = make_tensor<int32_t>({3}, {5, -1, 2});
  Tensor j = make_tensor<int32_t>({3}, {3, 4, 2});
  EXPECT_EQ(to_vector<int32_t>(run1({"Max"}, {&i, &j})), (std::vector<int32_t>{5, 4, 2}));
  EXPECT_FALSE(run_op({"Mean"}, {&i, &j}).is_ok());  // Mean is float-only
  EXPECT_FALSE(run_op({"Sum"}, {}).is_ok());          // needs at least one input
}

// ---- unary ----

const std::vector<float> kX = {-2.5f, -1.0f, -0.1f, 0.0f, 0.3f, 1.0f, 2.7f};

void expect_unary(const OpSpec& spec, const std::vector<float>& want) {
  Tensor x = make_tensor<float>({7}, kX);
  Tensor y = run1(spec, {&x});
  SCOPED_TRACE(spec.op_type);
  expect_near(to_vector<float>(y), want, 2e-6f, 1e-7f);
}

TEST(RefBUnary, ActivationsMatchOnnxruntime) {
  // ort, x = kX, opsets as given in each spec.
  expect_unary({"Sigmoid", {}, 13}, {0.07585817575454712f, 0.2689414322376251f, 0.4750208258628845f, 0.5f, 0.5744425058364868f, 0.7310585975646973f, 0.9370266199111938f});
  expect_unary({"HardSigmoid", {}, 6}, {0.0f, 0.30000001192092896f, 0.47999998927116394f, 0.5f, 0.5600000023841858f, 0.699999988079071f, 1.0f});
  expect_unary({"HardSwish", {}, 14}, {-0.20833328366279602f, -0.3333333134651184f, -0.04833333194255829f, 0.0f, 0.16500000655651093f, 0.6666666865348816f, 2.565000057220459f});
  expect_unary({"Tanh", {}, 13}, {-0.9866143465042114f, -0.7615941762924194f, -0.099667988717556f, 0.0f, 0.2913126051425934f, 0.7615941762924194f, 0.9910074472427368f});
  expect_unary({"Softplus", {}, 1}, {0.07888973504304886f, 0.3132616877555847f, 0.6443966627120972f, 0.6931471824645996f, 0.8543552756309509f, 1.3132617473602295f, 2.7650434970855713f});
  expect_unary({"Softsign", {}, 1}, {-0.7142857313156128f, -0.5f, -0.09090908616781235f, 0.0f, 0.23076924681663513f, 0.5f, 0.7297297120094299f});
  expect_unary({"LeakyRelu", {attr_f("alpha", 0.1f)}, 16}, {-0.25f, -0.10000000149011612f, -0.010000000707805157f, 0.0f, 0.30000001192092896f, 1.0f, 2.700000047683716f});
  expect_unary({"Elu", {}, 6}, {-0.9179149866104126f, -0.6321205496788025f, -0.09516257047653198f, 0.0f, 0.30000001192092896f, 1.0f, 2.700000047683716f});
  expect_unary({"Selu", {}, 6}, {-1.613785743713379f, -1.1113307476043701f, -0.16730524599552155f, 0.0f, 0.3152103126049042f, 1.0507010221481323f, 2.83689284324646f});
  expect_unary({"Gelu", {}, 20}, {-0.015524104237556458f, -0.15865525603294373f, -0.04601721838116646f, 0.0f, 0.1853734403848648f, 0.8413447141647339f, 2.6906392574310303f});
  expect_unary({"Gelu", {attr_s("approximate", "tanh")}, 20}, {-0.015084296464920044f, -0.15880796313285828f, -0.046017251908779144f, 0.0f, 0.18537092208862305f, 0.8411920070648193f, 2.691112518310547f});
  expect_unary({"Erf", {}, 13}, {-0.9995930790901184f, -0.8427007794380188f, -0.11246291548013687f, 0.0f, 0.3286267817020416f, 0.8427007794380188f, 0.9998656511306763f});
  expect_unary({"Exp", {}, 13}, {0.08208499848842621f, 0.3678794503211975f, 0.904837429523468f, 1.0f, 1.3498587608337402f, 2.7182817459106445f, 14.879732131958008f});
  expect_unary({"Sin", {}, 7}, {-0.5984721779823303f, -0.8414709568023682f, -0.0998334214091301f, 0.0f, 0.29552021622657776f, 0.8414709568023682f, 0.427379846572876f});
  expect_unary({"Cos", {}, 7}, {-0.8011435866355896f, 0.5403022766113281f, 0.9950041770935059f, 1.0f, 0.9553365111351013f, 0.5403022766113281f, -0.9040721654891968f});
}

TEST(RefBUnary, SimpleMathByHand) {
  expect_unary({"Relu"}, {0, 0, 0, 0, 0.3f, 1, 2.7f});
  expect_unary({"Abs"}, {2.5f, 1, 0.1f, 0, 0.3f, 1, 2.7f});
  expect_unary({"Neg"}, {2.5f, 1, 0.1f, -0.0f, -0.3f, -1, -2.7f});
  expect_unary({"Floor"}, {-3, -1, -1, 0, 0, 1, 2});
  expect_unary({"Ceil"}, {-2, -1, -0.0f, 0, 1, 1, 3});
  expect_unary({"Sign"}, {-1, -1, -1, 0, 1, 1, 1});
  Tensor p = make_tensor<double>({3}, {4, 0.25, 2});
  EXPECT_EQ(to_vector<double>(run1({"Sqrt"}, {&p})), (std::vector<double>{2, 0.5, std::sqrt(2.0)}));
  EXPECT_EQ(to_vector<double>(run1({"Reciprocal"}, {&p})), (std::vector<double>{0.25, 4, 0.5}));
  EXPECT_NEAR(to_vector<double>(run1({"Log"}, {&p}))[0], std::log(4.0), 1e-15);
}

TEST(RefBUnary, RoundHalvesToEven) {
  // ort (Round opset 11): [-2, -2, -0, 0, 2, 2, 2, -3]
  Tensor x = make_tensor<float>({8}, {-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f, 2.4f, -2.6f});
  EXPECT_EQ(to_vector<float>(run1({"Round", {}, 11}, {&x})), (std::vector<float>{-2, -2, -0.0f, 0, 2, 2, 2, -3}));
}

TEST(RefBUnary, IntegerReluAbsNegSign) {
  Tensor x = make_tensor<int32_t>({4}, {-3, 0, 5, std::numeric_limits<int32_t>::min()});
  EXPECT_EQ(to_vector<int32_t>(run1({"Relu", {}, 14}, {&x})), (std::vector<int32_t>{0, 0, 5, 0}));
  EXPECT_EQ(to_vector<int32_t>(run1({"Abs"}, {&x})), (std::vector<int32_t>{3, 0, 5, std::numeric_limits<int32_t>::min()}));
  EXPECT_EQ(to_vector<int32_t>(run1({"Neg"}, {&x})), (std::vector<int32_t>{3, 0, -5, std::numeric_limits<int32_t>::min()}));
  EXPECT_EQ(to_vector<int32_t>(run1({"Sign"}, {&x})), (std::vector<int32_t>{-1, 0, 1, -1}));
}

TEST(RefBUnary, EmptyAndScalarAndErrors) {
  Tensor e = make_tensor<float>({0, 4}, {});
  Tensor y = run1({"Sigmoid"}, {&e});
  EXPECT_EQ(y.shape(), (Shape{0, 4}));
  Tensor s = make_tensor<float>({}, {0.0f});
  EXPECT_EQ(to_vector<float>(run1({"Exp"}, {&s})), (std::vector<float>{1.0f}));
  Tensor i = make_tensor<int64_t>({2}, {1, 2});
  auto r = run_op({"Exp"}, {&i});
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("int64"), std::string::npos);
  Tensor f = make_tensor<float>({1}, {1});
  EXPECT_FALSE(run_op({"Gelu", {attr_s("approximate", "fast")}, 20}, {&f}).is_ok());
}

// ---- Clip ----

TEST(RefBClip, Opset6Attributes) {
  Tensor x = make_tensor<float>({5}, {-3, -1, 0, 1, 3});
  EXPECT_EQ(to_vector<float>(run1({"Clip", {attr_f("min", -1.5f), attr_f("max", 2)}, 6}, {&x})),
            (std::vector<float>{-1.5f, -1, 0, 1, 2}));
  EXPECT_EQ(to_vector<float>(run1({"Clip", {attr_f("max", 0)}, 6}, {&x})), (std::vector<float>{-3, -1, 0, 0, 0}));
}

TEST(RefBClip, Opset11And12OptionalInputs) {
  Tensor x = make_tensor<float>({5}, {-3, -1, 0, 1, 3});
  Tensor lo = make_tensor<float>({}, {-1.5f});
  Tensor hi = make_tensor<float>({}, {2});
  EXPECT_EQ(to_vector<float>(run1({"Clip", {}, 11}, {&x, &lo, &hi})), (std::vector<float>{-1.5f, -1, 0, 1, 2}));
  EXPECT_EQ(to_vector<float>(run1({"Clip", {}, 12}, {&x, nullptr, &hi})), (std::vector<float>{-3, -1, 0, 1, 2}));
  EXPECT_EQ(to_vector<float>(run1({"Clip", {}, 12}, {&x})), (std::vector<float>{-3, -1, 0, 1, 3}));
  // ort (Clip opset 13, min 5 > max 2): every element is max.
  Tensor a = make_tensor<float>({}, {5});
  EXPECT_EQ(to_vector<float>(run1({"Clip", {}, 13}, {&x, &a, &hi})), (std::vector<float>{2, 2, 2, 2, 2}));
  // ort (Clip opset 13, int64): [-1, 0, 3, 4]
  Tensor xi = make_tensor<int64_t>({4}, {-5, 0, 3, 10});
  Tensor li = make_tensor<int64_t>({}, {-1});
  Tensor hi2 = make_tensor<int64_t>({}, {4});
  EXPECT_EQ(to_vector<int64_t>(run1({"Clip", {}, 13}, {&xi, &li, &hi2})), (std::vector<int64_t>{-1, 0, 3, 4}));
  Tensor bad = make_tensor<float>({2}, {0, 1});
  EXPECT_FALSE(run_op({"Clip", {}, 13}, {&x, &bad}).is_ok());  // min not a scalar
  EXPECT_FALSE(run_op({"Clip", {}, 13}, {&x, &li}).is_ok());   // min dtype differs
}

// ---- Cast ----

TEST(RefBCast, FloatToIntTruncates) {
  // ort (Cast opset 13, float -> int32): [-2, 0, 0, 2, 1000]
  Tensor x = make_tensor<float>({5}, {-2.7f, -0.5f, 0.5f, 2.9f, 1e3f});
  Tensor y = run1({"Cast", {attr_i("to", 6)}, 13}, {&x});
  EXPECT_EQ(to_vector<int32_t>(y), (std::vector<int32_t>{-2, 0, 0, 2, 1000}));
}

TEST(RefBCast, Int64FloatBoolRoundTrips) {
  Tensor i = make_tensor<int64_t>({4}, {0, 3, -2, int64_t{1} << 40});
  Tensor f = run1({"Cast", {attr_i("to", 1)}}, {&i});
  EXPECT_EQ(to_vector<float>(f), (std::vector<float>{0, 3, -2, 1099511627776.0f}));
  Tensor b = run1({"Cast", {attr_i("to", 9)}}, {&i});
  EXPECT_EQ(b.dtype(), DType::kBool);
  EXPECT_EQ(b.data_as<bool>()[0], false);
  EXPECT_EQ(b.data_as<bool>()[2], true);
  Tensor back = run1({"Cast", {attr_i("to", 7)}}, {&b});
  EXPECT_EQ(to_vector<int64_t>(back), (std::vector<int64_t>{0, 1, 1, 1}));
  Tensor fb = make_tensor<float>({3}, {0.0f, -0.0f, 0.25f});
  Tensor fbb = run1({"Cast", {attr_i("to", 9)}}, {&fb});
  EXPECT_EQ(fbb.data_as<bool>()[1], false);
  EXPECT_EQ(fbb.data_as<bool>()[2], true);
  Tensor same = run1({"Cast", {attr_i("to", 7)}}, {&i});
  EXPECT_EQ(to_vector<int64_t>(same), (std::vector<int64_t>{0, 3, -2, int64_t{1} << 40}));
}

TEST(RefBCast, NaNAndOverflowSaturate) {
  Tensor x = make_tensor<double>({3}, {std::nan(""), 1e30, -1e30});
  EXPECT_EQ(to_vector<int32_t>(run1({"Cast", {attr_i("to", 6)}}, {&x})),
            (std::vector<int32_t>{0, std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::min()}));
  Tensor w = make_tensor<int32_t>({2}, {300, -1});
  EXPECT_EQ(to_vector<uint8_t>(run1({"Cast", {attr_i("to", 2)}}, {&w})), (std::vector<uint8_t>{44, 255}));
}

TEST(RefBCast, BadTargetIsAnError) {
  Tensor x = make_tensor<float>({1}, {1});
  auto r = run_op({"Cast", {attr_i("to", 99)}}, {&x});
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("'to'"), std::string::npos);
  EXPECT_FALSE(run_op({"Cast"}, {&x}).is_ok());
  auto s = run_op({"Cast", {attr_i("to", 8)}}, {&x});  // string
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.status().code(), StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

// numpy.maximum(0, x) and onnxruntime keep NaN; a max written as x > 0 ? x : 0 drops it.
TEST(RefBRelu, KeepsNaNAndInfinities) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  Tensor x = testing::make_tensor<float>({5}, {-1.f, nan, 2.f, -inf, inf});
  auto r = testing::run_op({"Relu"}, {&x});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  std::vector<float> y = testing::to_vector<float>(r.value()[0]);
  EXPECT_EQ(y[0], 0.f);
  EXPECT_TRUE(std::isnan(y[1]));
  EXPECT_EQ(y[2], 2.f);
  EXPECT_EQ(y[3], 0.f);
  EXPECT_EQ(y[4], inf);
}

}  // namespace
}  // namespace tessera
