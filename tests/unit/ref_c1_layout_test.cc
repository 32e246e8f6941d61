// Section C1 layout ops: DepthToSpace, SpaceToDepth, EyeLike, ReverseSequence, and the
// normalizations LRN and MeanVarianceNormalization. Expected values were computed with numpy
// 1.26 from the ONNX spec's reshape/transpose and formula definitions, as stated per check.
#include <gtest/gtest.h>

#include <numeric>

#include "op_test_util.h"

namespace tessera {
namespace {

using testing::attr_f;
using testing::attr_i;
using testing::attr_ints;
using testing::attr_s;
using testing::expect_near;
using testing::make_tensor;
using testing::run1;
using testing::run_op;
using testing::to_vector;

std::vector<float> iota(int n) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), 0.0f);
  return v;
}

TEST(RefC1DepthToSpace, DcrAndCrd) {
  Tensor x = make_tensor<float>({1, 8, 1, 2}, iota(16));
  // numpy: x.reshape(1, 2, 2, 2, 1, 2).transpose(0, 3, 4, 1, 5, 2).reshape(1, 2, 2, 4)
  Tensor y = run1({"DepthToSpace", {attr_i("blocksize", 2)}, 13}, {&x});
  EXPECT_EQ(y.shape(), (Shape{1, 2, 2, 4}));
  EXPECT_EQ(to_vector<float>(y), (std::vector<float>{0, 4, 1, 5, 8, 12, 9, 13, 2, 6, 3, 7, 10, 14, 11, 15}));
  // numpy: x.reshape(1, 2, 2, 2, 1, 2).transpose(0, 1, 4, 2, 5, 3).reshape(1, 2, 2, 4)
  EXPECT_EQ(to_vector<float>(run1({"DepthToSpace", {attr_i("blocksize", 2), attr_s("mode", "CRD")}, 11}, {&x})),
            (std::vector<float>{0, 2, 1, 3, 4, 6, 5, 7, 8, 10, 9, 11, 12, 14, 13, 15}));
  EXPECT_FALSE(run_op({"DepthToSpace", {attr_i("blocksize", 3)}, 13}, {&x}).is_ok());  // 8 % 9
  EXPECT_FALSE(run_op({"DepthToSpace", {}, 13}, {&x}).is_ok());                        // no blocksize
  EXPECT_FALSE(run_op({"DepthToSpace", {attr_i("blocksize", 2), attr_s("mode", "XYZ")}, 13}, {&x}).is_ok());
}

TEST(RefC1SpaceToDepth, InverseOfDcr) {
  Tensor x = make_tensor<int32_t>({1, 1, 4, 4}, std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15});
  // numpy: x.reshape(1, 1, 2, 2, 2, 2).transpose(0, 3, 5, 1, 2, 4).reshape(1, 4, 2, 2)
  Tensor y = run1({"SpaceToDepth", {attr_i("blocksize", 2)}, 13}, {&x});
  EXPECT_EQ(y.shape(), (Shape{1, 4, 2, 2}));
  EXPECT_EQ(to_vector<int32_t>(y), (std::vector<int32_t>{0, 2, 8, 10, 1, 3, 9, 11, 4, 6, 12, 14, 5, 7, 13, 15}));
  Tensor back = run1({"DepthToSpace", {attr_i("blocksize", 2)}, 13}, {&y});
  EXPECT_EQ(to_vector<int32_t>(back), to_vector<int32_t>(x));
  EXPECT_FALSE(run_op({"SpaceToDepth", {attr_i("blocksize", 3)}, 13}, {&x}).is_ok());
  EXPECT_FALSE(run_op({"SpaceToDepth", {attr_i("blocksize", 0)}, 13}, {&x}).is_ok());
}

TEST(RefC1EyeLike, DiagonalShiftAndDtype) {
  Tensor x = make_tensor<int32_t>({3, 4}, std::vector<int32_t>(12, 7));
  EXPECT_EQ(to_vector<int32_t>(run1({"EyeLike", {}, 9}, {&x})), (std::vector<int32_t>{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0}));
  Tensor y = run1({"EyeLike", {attr_i("k", -1), attr_i("dtype", 1)}, 9}, {&x});
  EXPECT_EQ(y.dtype(), DType::kFloat32);
  EXPECT_EQ(to_vector<float>(y), (std::vector<float>{0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0}));
  EXPECT_EQ(to_vector<int32_t>(run1({"EyeLike", {attr_i("k", 10)}, 9}, {&x})), std::vector<int32_t>(12, 0));
  Tensor v = make_tensor<float>({3}, {1, 2, 3});
  EXPECT_FALSE(run_op({"EyeLike", {}, 9}, {&v}).is_ok());
  EXPECT_FALSE(run_op({"EyeLike", {attr_i("dtype", 99)}, 9}, {&x}).is_ok());
}

TEST(RefC1ReverseSequence, TimeAndBatchMajor) {
  // onnx spec examples: time-major [4, 4] with lens [4, 3, 2, 1]; batch-major with [1, 2, 3, 4].
  Tensor x = make_tensor<float>({4, 4}, {0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15});
  Tensor lens = make_tensor<int64_t>({4}, {4, 3, 2, 1});
  EXPECT_EQ(to_vector<float>(run1({"ReverseSequence", {}, 10}, {&x, &lens})),
            (std::vector<float>{3, 6, 9, 12, 2, 5, 8, 13, 1, 4, 10, 14, 0, 7, 11, 15}));
  Tensor xb = make_tensor<float>({4, 4}, iota(16));
  Tensor lb = make_tensor<int64_t>({4}, {1, 2, 3, 4});
  EXPECT_EQ(to_vector<float>(run1({"ReverseSequence", {attr_i("time_axis", 1), attr_i("batch_axis", 0)}, 10}, {&xb, &lb})),
            (std::vector<float>{0, 1, 2, 3, 5, 4, 6, 7, 10, 9, 8, 11, 15, 14, 13, 12}));
  Tensor bad = make_tensor<int64_t>({4}, {5, 0, 0, 0});
  EXPECT_FALSE(run_op({"ReverseSequence", {}, 10}, {&x, &bad}).is_ok());
  EXPECT_FALSE(run_op({"ReverseSequence", {attr_i("time_axis", 1)}, 10}, {&x, &lens}).is_ok());  // same axes
}

TEST(RefC1LRN, MatchesFormula) {
  std::vector<float> v(12);
  for (int i = 0; i < 12; ++i) v[i] = 0.5f * (i + 1);
  Tensor x = make_tensor<float>({1, 3, 2, 2}, v);
  // numpy: x / (2 + 0.1 / 3 * square_sum)^0.75, channel windows [c-1, c+1] clipped.
  expect_near(to_vector<float>(run1({"LRN", {attr_i("size", 3), attr_f("alpha", 0.1f), attr_f("bias", 2.0f)}, 13}, {&x})),
              {0.2752293348312378f, 0.5296846628189087f, 0.7582545280456543f, 0.9584146738052368f, 1.1274020671844482f,
               1.2637742757797241f, 1.370229959487915f, 1.4506325721740723f, 2.0337209701538086f, 2.1230735778808594f,
               2.1885714530944824f, 2.2339768409729004f});
  EXPECT_FALSE(run_op({"LRN", {}, 13}, {&x}).is_ok());                    // size required
  EXPECT_FALSE(run_op({"LRN", {attr_i("size", 0)}, 13}, {&x}).is_ok());
}

TEST(RefC1MeanVarianceNormalization, AxesMatchNumpy) {
  Tensor x = make_tensor<float>({2, 3, 2}, {1, -2, 3, 4, -5, 6, 7, -8, 0.5f, 2, 1, 3});
  // numpy: m = x.mean((0, 2)); (x - m) / (sqrt(((x - m)^2).mean((0, 2))) + 1e-9)
  expect_near(to_vector<float>(run1({"MeanVarianceNormalization", {attr_ints("axes", {0, -1})}, 13}, {&x})),
              {0.2773500978946686f, -0.2773500978946686f, 0.48336827754974365f, 1.2567574977874756f, -1.55342435836792f,
               1.1806025505065918f, 1.3867504596710205f, -1.3867504596710205f, -1.450104832649231f, -0.29002097249031067f,
               -0.062136974185705185f, 0.434958815574646f});
  EXPECT_FALSE(run_op({"MeanVarianceNormalization", {}, 13}, {&x}).is_ok());  // default axes [0, 2, 3] need rank 4
  EXPECT_FALSE(run_op({"MeanVarianceNormalization", {attr_ints("axes", {1, 1})}, 13}, {&x}).is_ok());
}

}  // namespace
}  // namespace tessera
