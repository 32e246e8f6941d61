// OptionalHasElement and OptionalGetElement reference kernels, tensor forms only: an absent
// input has no element, a plain tensor has one and OptionalGetElement returns it unchanged.
#include "ref_a_util.h"

namespace tessera {
namespace {

using testing::expect_error;
using testing::make_tensor;
using testing::run_ok;
using testing::to_vector;

TEST(RefOptional, HasElementAndGetElementOnTensors) {
  Tensor x = make_tensor<float>({2}, {1.5f, -2.f});
  auto has = run_ok({"OptionalHasElement", {}, 18}, {&x});
  ASSERT_EQ(has.size(), 1u);
  EXPECT_EQ(has[0].shape(), Shape{});
  EXPECT_EQ(to_vector<bool>(has[0]), (std::vector<bool>{true}));
  EXPECT_EQ(to_vector<bool>(run_ok({"OptionalHasElement", {}, 18}, {nullptr})[0]), (std::vector<bool>{false}));
  EXPECT_EQ(to_vector<bool>(run_ok({"OptionalHasElement", {}, 18}, {})[0]), (std::vector<bool>{false}));
  EXPECT_EQ(to_vector<float>(run_ok({"OptionalGetElement", {}, 18}, {&x})[0]), (std::vector<float>{1.5f, -2.f}));
  expect_error({"OptionalGetElement", {}, 18}, {nullptr}, StatusCode::kInvalidArgument, "inputs");
}

}  // namespace
}  // namespace tessera
