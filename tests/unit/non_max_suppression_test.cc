#include <gtest/gtest.h>

#include "op_test_util.h"

namespace tessera {
namespace {

using testing::attr_i;
using testing::make_tensor;
using testing::run_op;
using testing::to_vector;

// Six unit-height boxes [y1, x1, y2, x2]: 0..2 overlap each other (IoU 0.9 / 1.1 = 0.82),
// 3 and 4 overlap (IoU 0.82), 5 stands alone. By score: 3 (.95), 0 (.9), 1, 2, 4, 5 (.3).
// Greedy NMS with IoU threshold 0.5 keeps 3, 0, 5 (the ONNX test "suppress_by_IOU").
struct Boxes {
  Tensor boxes = make_tensor<float>({1, 6, 4}, {0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, -0.1f, 1, 0.9f,
                                                0, 10, 1, 11, 0, 10.1f, 1, 11.1f, 0, 100, 1, 101});
  Tensor scores = make_tensor<float>({1, 1, 6}, {0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f});
  Tensor max_out = make_tensor<int64_t>({1}, {3});
  Tensor iou = make_tensor<float>({1}, {0.5f});
  Tensor score = make_tensor<float>({1}, {0.0f});
};

Result<std::vector<Tensor>> nms(const std::vector<const Tensor*>& in, std::vector<Attribute> attrs = {}) {
  std::vector<int> consts;
  for (size_t i = 0; i < in.size(); ++i) consts.push_back(static_cast<int>(i));
  return run_op({"NonMaxSuppression", std::move(attrs), 11}, in, consts);
}

TEST(RefNonMaxSuppression, SuppressesByIouInScoreOrder) {
  Boxes b;
  auto r = nms({&b.boxes, &b.scores, &b.max_out, &b.iou, &b.score});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r.value()[0].shape(), (Shape{3, 3}));
  EXPECT_EQ(to_vector<int64_t>(r.value()[0]), (std::vector<int64_t>{0, 0, 3, 0, 0, 0, 0, 0, 5}));
}

TEST(RefNonMaxSuppression, ScoreThresholdAndLimitAndTwoClasses) {
  Boxes b;
  Tensor high = make_tensor<float>({1}, {0.4f});  // drops box 5 (0.3)
  auto r = nms({&b.boxes, &b.scores, &b.max_out, &b.iou, &high});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(to_vector<int64_t>(r.value()[0]), (std::vector<int64_t>{0, 0, 3, 0, 0, 0}));
  // Two classes, the second scoring in reverse; at most 2 per class.
  Tensor scores2 = make_tensor<float>({1, 2, 6}, {0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f, 0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f});
  Tensor two = make_tensor<int64_t>({1}, {2});
  r = nms({&b.boxes, &scores2, &two, &b.iou, &b.score});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  // Class 1 by score: 5 (.6), 4 (.5), 3 (suppressed by 4), 2, ... -> 5, 4.
  EXPECT_EQ(to_vector<int64_t>(r.value()[0]), (std::vector<int64_t>{0, 0, 3, 0, 0, 0, 0, 1, 5, 0, 1, 4}));
}

// center_point_box 1: [x_center, y_center, width, height]; boxes 0 and 1 overlap with
// IoU 0.9 / 1.1, box 2 is far away. Equal scores: the lower index goes first.
TEST(RefNonMaxSuppression, CenterPointBoxAndTies) {
  Tensor boxes = make_tensor<float>({1, 3, 4}, {0.5f, 0.5f, 1, 1, 0.5f, 0.6f, 1, 1, 5, 5, 1, 1});
  Tensor scores = make_tensor<float>({1, 1, 3}, {0.8f, 0.8f, 0.8f});
  Tensor max_out = make_tensor<int64_t>({1}, {10});
  Tensor iou = make_tensor<float>({1}, {0.5f});
  auto r = nms({&boxes, &scores, &max_out, &iou}, {attr_i("center_point_box", 1)});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(to_vector<int64_t>(r.value()[0]), (std::vector<int64_t>{0, 0, 0, 0, 0, 2}));
  // IoU threshold 0.9: 0.82 does not suppress, all three are kept.
  Tensor loose = make_tensor<float>({1}, {0.9f});
  r = nms({&boxes, &scores, &max_out, &loose}, {attr_i("center_point_box", 1)});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r.value()[0].shape(), (Shape{3, 3}));
}

TEST(RefNonMaxSuppression, OmittedOrEmptyOptionalInputsTakeDefaults) {
  Boxes b;
  // max_output_boxes_per_class defaults to 0: nothing selected.
  auto r = nms({&b.boxes, &b.scores});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r.value()[0].shape(), (Shape{0, 3}));
  // Empty max_output (default 0), omitted iou (0, so any overlap suppresses).
  Tensor empty = make_tensor<int64_t>({0}, {});
  r = nms({&b.boxes, &b.scores, &empty});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r.value()[0].shape(), (Shape{0, 3}));
  r = run_op({"NonMaxSuppression", {}, 11}, {&b.boxes, &b.scores, &b.max_out, nullptr, nullptr}, {0, 1, 2});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(to_vector<int64_t>(r.value()[0]), (std::vector<int64_t>{0, 0, 3, 0, 0, 0, 0, 0, 5}));
}

TEST(RefNonMaxSuppression, BadInputsAreErrorsNamingTheNode) {
  Boxes b;
  auto expect_error = [](const Result<std::vector<Tensor>>& r, const char* what) {
    ASSERT_FALSE(r.is_ok()) << what;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().to_string();
    EXPECT_NE(r.status().message().find("test_NonMaxSuppression"), std::string::npos) << r.status().to_string();
    EXPECT_NE(r.status().message().find(what), std::string::npos) << r.status().to_string();
  };
  expect_error(nms({&b.boxes, &b.scores}, {attr_i("center_point_box", 2)}), "center_point_box");
  Tensor flat = make_tensor<float>({6, 4}, std::vector<float>(24, 0.f));
  expect_error(nms({&flat, &b.scores}), "boxes");
  Tensor wrong = make_tensor<float>({1, 1, 5}, {1, 2, 3, 4, 5});
  expect_error(nms({&b.boxes, &wrong}), "do not match");
  Tensor big_iou = make_tensor<float>({1}, {1.5f});
  expect_error(nms({&b.boxes, &b.scores, &b.max_out, &big_iou}), "iou_threshold");
  Tensor two = make_tensor<int64_t>({2}, {1, 2});
  expect_error(nms({&b.boxes, &b.scores, &two}), "max_output_boxes_per_class");
}

TEST(RefNonMaxSuppression, UnknownInputValuesAskForPlanningByValue) {
  Boxes b;
  auto r = run_op({"NonMaxSuppression", {}, 11}, {&b.boxes, &b.scores, &b.max_out});
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(r.status().message().find("before the run"), std::string::npos);
}

}  // namespace
}  // namespace tessera
