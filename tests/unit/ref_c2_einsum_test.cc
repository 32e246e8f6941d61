// Reference kernel Einsum. Expected values were computed with numpy.einsum (numpy 1.26) on
// seq() inputs (ref_a_util.h).
#include "ref_a_util.h"

namespace tessera {
namespace {

using testing::attr_s;
using testing::expect_error;
using testing::expect_near;
using testing::make_tensor;
using testing::run_ok;
using testing::seq;
using testing::to_vector;

Tensor einsum1(const std::string& eq, const std::vector<const Tensor*>& in) {
  auto out = run_ok({"Einsum", {attr_s("equation", eq)}, 12}, in);
  return out.empty() ? Tensor() : std::move(out[0]);
}

TEST(RefEinsum, BatchMatMulAndImplicitOutput) {
  Tensor a = seq({2, 3, 4}), b = seq({2, 4, 5}, 5, 13);
  Tensor y = einsum1("bij, bjk -> bik", {&a, &b});
  EXPECT_EQ(y.shape(), (Shape{2, 3, 5}));
  // np.einsum('bij,bjk->bik')
  expect_near(to_vector<float>(y), {3.25f, -0.8125f, -0.8125f, 3.25f, -0.8125f, -0.25f, -0.4375f, 0.1875f, -0.8125f, -0.1875f,
                                    1.0625f, 1.3125f, -0.875f, -1.4375f, 0.4375f, 0.4375f, 2.3125f, -0.6875f, 1.1875f, -1.8125f,
                                    -0.0625f, -1.8125f, 0.5f, -0.4375f, 1.0625f, 0.125f, -1.8125f, 0.3125f, 0.f, 0.5f});
  Tensor a0 = seq({3, 4}), b0 = seq({4, 5}, 5, 13);
  Tensor yi = einsum1("ij,jk", {&a0, &b0});
  EXPECT_EQ(yi.shape(), (Shape{3, 5}));
  // np.einsum('ij,jk') (implicit output 'ik')
  expect_near(to_vector<float>(yi), {3.25f, -0.8125f, -0.8125f, 3.25f, -0.8125f, -0.25f, -0.4375f, 0.1875f, -0.8125f,
                                     -0.1875f, 1.0625f, 1.3125f, -0.875f, -1.4375f, 0.4375f});
  Tensor p = seq({2, 3}), q = seq({3, 2}, 5, 13);
  Tensor yu = einsum1("Ba,aB", {&p, &q});
  EXPECT_EQ(yu.shape(), Shape{});
  expect_near(to_vector<float>(yu), {0.5625f});  // np.einsum('Ba,aB')
}

TEST(RefEinsum, TraceDiagonalEllipsis) {
  Tensor x = seq({3, 3}, 3, 7);
  expect_near(to_vector<float>(einsum1("ii", {&x})), {-0.25f});  // np.einsum('ii')
  Tensor d = seq({2, 3, 3});
  Tensor yd = einsum1("...ii ->...i", {&d});
  EXPECT_EQ(yd.shape(), (Shape{2, 3}));
  expect_near(to_vector<float>(yd), {-1.25f, 0.25f, -1.f, 0.75f, -0.5f, 1.f});  // np.einsum('...ii->...i')
  Tensor e = seq({2, 1, 3, 3}), f = seq({3, 2}, 5, 13);
  Tensor ye = einsum1("...ij,jk->...ik", {&e, &f});
  EXPECT_EQ(ye.shape(), (Shape{2, 1, 3, 2}));
  // np.einsum('...ij,jk->...ik')
  expect_near(to_vector<float>(ye), {2.25f, -0.9375f, -1.8125f, -1.6875f, -1.75f, -1.75f, -1.6875f, -1.8125f, -0.9375f,
                                     2.25f, -0.875f, 2.1875f});
  Tensor g = seq({2, 3, 4}), h = seq({1, 4}, 5, 13);
  Tensor yb = einsum1("b...i,...i->b...", {&g, &h});
  EXPECT_EQ(yb.shape(), (Shape{2, 3}));
  // np.einsum('b...i,...i->b...'): the ellipsis dims [3] and [1] broadcast
  expect_near(to_vector<float>(yb), {0.f, 0.8125f, 2.3125f, 0.375f, 1.875f, -2.8125f});
}

TEST(RefEinsum, IntegersAndTranspose) {
  Tensor x = make_tensor<int64_t>({2, 3}, {0, 1, 2, 3, 4, 5});
  EXPECT_EQ(to_vector<int64_t>(einsum1("ij->j", {&x})), (std::vector<int64_t>{3, 5, 7}));  // np.einsum('ij->j')
  EXPECT_EQ(to_vector<int64_t>(einsum1("ij,ij->", {&x, &x})), (std::vector<int64_t>{55}));  // np.einsum('ij,ij->')
  Tensor t = einsum1("ij->ji", {&x});
  EXPECT_EQ(t.shape(), (Shape{3, 2}));
  EXPECT_EQ(to_vector<int64_t>(t), (std::vector<int64_t>{0, 3, 1, 4, 2, 5}));
}

TEST(RefEinsum, Errors) {
  Tensor a = seq({2, 3}), b = seq({4, 5});
  expect_error({"Einsum", {attr_s("equation", "ij,jk->ik")}, 12}, {&a, &b}, StatusCode::kInvalidArgument, "label 'j'");
  expect_error({"Einsum", {attr_s("equation", "ij->ik")}, 12}, {&a}, StatusCode::kInvalidArgument, "in no input");
  expect_error({"Einsum", {attr_s("equation", "ijk->i")}, 12}, {&a}, StatusCode::kInvalidArgument, "does not match");
  expect_error({"Einsum", {attr_s("equation", "ij,j")}, 12}, {&a}, StatusCode::kInvalidArgument, "input terms");
  expect_error({"Einsum", {attr_s("equation", "i1->i")}, 12}, {&a}, StatusCode::kInvalidArgument, "character");
  expect_error({"Einsum", {attr_s("equation", "ij->ii")}, 12}, {&a}, StatusCode::kInvalidArgument, "repeats");
  expect_error({"Einsum", {attr_s("equation", "......->")}, 12}, {&a}, StatusCode::kInvalidArgument, "'...'");
  expect_error({"Einsum", {}, 12}, {&a}, StatusCode::kInvalidArgument, "equation");
  Tensor c = seq({2, 3, 4}), d = seq({3, 3, 4});
  expect_error({"Einsum", {attr_s("equation", "...i,...i")}, 12}, {&c, &d}, StatusCode::kInvalidArgument, "broadcast");
}

}  // namespace
}  // namespace tessera
