// Section C1 elementwise ops: CastLike, Mod, BitwiseAnd/Or/Xor, BitShift, Dropout (and the
// unary ops further down). Expected values were computed with numpy 1.26 (np.mod, np.fmod,
// np.bitwise_*, np.left_shift/right_shift) as stated at each check; the rest by hand.
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

}  // namespace
}  // namespace tessera
