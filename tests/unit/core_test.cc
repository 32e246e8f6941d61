#include <gtest/gtest.h>

#include "op_test_util.h"

namespace tessera {
namespace {

using testing::make_tensor;
using testing::run_op;
using testing::to_vector;

TEST(Shape, NumelChecksOverflowAndNegative) {
  EXPECT_EQ(shape_numel({2, 3, 4}).value(), 24);
  EXPECT_EQ(shape_numel({}).value(), 1);
  EXPECT_EQ(shape_numel({5, 0}).value(), 0);
  EXPECT_FALSE(shape_numel({-1, 3}).is_ok());
  EXPECT_FALSE(shape_numel({int64_t{1} << 40, int64_t{1} << 40}).is_ok());
}

TEST(Broadcast, NumpyRules) {
  EXPECT_EQ(broadcast_shapes({2, 1, 4}, {3, 1}).value(), (Shape{2, 3, 4}));
  EXPECT_EQ(broadcast_shapes({}, {5}).value(), (Shape{5}));
  EXPECT_FALSE(broadcast_shapes({2, 3}, {4}).is_ok());
}

TEST(OpList, EveryKernelOpHasSchemaAndReferenceKernel) {
  for (const OpSchema* s : all_op_schemas()) {
    ASSERT_NE(s, nullptr);
    ASSERT_NE(s->infer, nullptr) << s->op_type;
    if (s->kind == OpKind::kKernel) {
      EXPECT_NE(ref::find_ref_kernel(s->op_type), nullptr) << s->op_type;
    }
  }
  EXPECT_EQ(find_op_schema("", "NoSuchOp"), nullptr);
  EXPECT_EQ(find_op_schema("com.microsoft", "Identity"), nullptr);
}

TEST(RefIdentity, CopiesInput) {
  Tensor x = make_tensor<float>({2, 2}, {1.f, -2.f, 3.5f, 4.f});
  auto r = run_op({"Identity"}, {&x});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r.value()[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(to_vector<float>(r.value()[0]), (std::vector<float>{1.f, -2.f, 3.5f, 4.f}));
}

TEST(RefConstant, ValueInts) {
  auto r = run_op({"Constant", {testing::attr_ints("value_ints", {3, -1, 7})}}, {});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(to_vector<int64_t>(r.value()[0]), (std::vector<int64_t>{3, -1, 7}));
}

TEST(RefConstant, MissingValueIsAnError) {
  auto r = run_op({"Constant"}, {});
  EXPECT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("Constant"), std::string::npos);
}

}  // namespace
}  // namespace tessera
