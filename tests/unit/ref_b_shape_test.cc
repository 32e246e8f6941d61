// Section B reference kernels: shape and indexing ops (Reshape, Flatten, Squeeze,
// Unsqueeze, Transpose, Slice, Concat, Split, Gather, Shape, Size, ConstantOfShape, Expand,
// Tile, Range, Pad). Expected values marked "numpy" were computed with numpy 1.x/2.x from
// the stated expression; the rest by hand.
#include <gtest/gtest.h>

#include <limits>
#include <numeric>

#include "op_test_util.h"

namespace tessera {
namespace {

using testing::attr_i;
using testing::attr_ints;
using testing::attr_s;
using testing::attr_f;
using testing::make_tensor;
using testing::OpSpec;
using testing::run_op;
using testing::to_vector;

using testing::run1;

Tensor iota_f(const Shape& s) {
  std::vector<float> v(static_cast<size_t>(shape_numel(s).value()));
  std::iota(v.begin(), v.end(), 0.f);
  return make_tensor<float>(s, v);
}
Tensor iota_i(const Shape& s) {
  std::vector<int64_t> v(static_cast<size_t>(shape_numel(s).value()));
  std::iota(v.begin(), v.end(), 0);
  return make_tensor<int64_t>(s, v);
}
Tensor ints(std::vector<int64_t> v) { return make_tensor<int64_t>({static_cast<int64_t>(v.size())}, v); }

// ---- Reshape, Flatten, Squeeze, Unsqueeze ----

TEST(RefBReshape, ZeroCopiesAndMinusOneInfers) {
  Tensor x = iota_f({2, 3, 4});
  Tensor s = ints({0, -1, 2});
  Tensor y = run1({"Reshape", {}, 13}, {&x, &s}, {1});
  EXPECT_EQ(y.shape(), (Shape{2, 6, 2}));
  EXPECT_EQ(to_vector<float>(y), to_vector<float>(x));
  Tensor all = ints({-1});
  EXPECT_EQ(run1({"Reshape"}, {&x, &all}, {1}).shape(), (Shape{24}));
}

TEST(RefBReshape, AllowZeroAndEmpty) {
  Tensor e = iota_f({0, 3});
  Tensor s = ints({3, 0});
  EXPECT_EQ(run1({"Reshape", {attr_i("allowzero", 1)}, 14}, {&e, &s}, {1}).shape(), (Shape{3, 0}));
  // allowzero=0: the 0 copies dim 1 (3), giving [3, 3] = 9 elements != 0.
  EXPECT_FALSE(run_op({"Reshape", {}, 14}, {&e, &s}, {1}).is_ok());
  Tensor bad = ints({0, -1});
  EXPECT_FALSE(run_op({"Reshape", {attr_i("allowzero", 1)}, 14}, {&e, &bad}, {1}).is_ok());
}

TEST(RefBReshape, Errors) {
  Tensor x = iota_f({2, 3});
  Tensor two = ints({-1, -1});
  auto r = run_op({"Reshape"}, {&x, &two}, {1});
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("more than one -1"), std::string::npos);
  Tensor wrong = ints({4, 2});
  EXPECT_FALSE(run_op({"Reshape"}, {&x, &wrong}, {1}).is_ok());
  Tensor neg = ints({-2, 3});
  EXPECT_FALSE(run_op({"Reshape"}, {&x, &neg}, {1}).is_ok());
  Tensor ok = ints({6});
  auto nc = run_op({"Reshape"}, {&x, &ok});  // shape not known at plan time
  ASSERT_FALSE(nc.is_ok());
  EXPECT_EQ(nc.status().code(), StatusCode::kUnimplemented);
}

TEST(RefBFlatten, AxisVariants) {
  Tensor x = iota_f({2, 3, 4});
  EXPECT_EQ(run1({"Flatten"}, {&x}).shape(), (Shape{2, 12}));
  EXPECT_EQ(run1({"Flatten", {attr_i("axis", 0)}}, {&x}).shape(), (Shape{1, 24}));
  EXPECT_EQ(run1({"Flatten", {attr_i("axis", 3)}}, {&x}).shape(), (Shape{24, 1}));
  EXPECT_EQ(run1({"Flatten", {attr_i("axis", -1)}}, {&x}).shape(), (Shape{6, 4}));
  EXPECT_FALSE(run_op({"Flatten", {attr_i("axis", 4)}}, {&x}).is_ok());
}

TEST(RefBSqueeze, AttributeAndInputForms) {
  Tensor x = iota_f({1, 3, 1, 2});
  EXPECT_EQ(run1({"Squeeze", {attr_ints("axes", {0, -2})}, 11}, {&x}).shape(), (Shape{3, 2}));
  EXPECT_EQ(run1({"Squeeze", {}, 11}, {&x}).shape(), (Shape{3, 2}));
  Tensor axes = ints({2});
  Tensor y = run1({"Squeeze", {}, 13}, {&x, &axes}, {1});
  EXPECT_EQ(y.shape(), (Shape{1, 3, 2}));
  EXPECT_EQ(to_vector<float>(y), to_vector<float>(x));
  EXPECT_EQ(run1({"Squeeze", {}, 13}, {&x}).shape(), (Shape{3, 2}));
  auto r = run_op({"Squeeze", {attr_ints("axes", {1})}, 11}, {&x});
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("not 1"), std::string::npos);
  EXPECT_FALSE(run_op({"Squeeze", {attr_ints("axes", {4})}, 11}, {&x}).is_ok());
}

TEST(RefBUnsqueeze, AttributeAndInputForms) {
  Tensor x = iota_f({3, 2});
  EXPECT_EQ(run1({"Unsqueeze", {attr_ints("axes", {0, 3})}, 11}, {&x}).shape(), (Shape{1, 3, 2, 1}));
  EXPECT_EQ(run1({"Unsqueeze", {attr_ints("axes", {-1})}, 11}, {&x}).shape(), (Shape{3, 2, 1}));
  Tensor axes = ints({1, -1});
  EXPECT_EQ(run1({"Unsqueeze", {}, 13}, {&x, &axes}, {1}).shape(), (Shape{3, 1, 2, 1}));
  Tensor s = make_tensor<int64_t>({}, {7});
  Tensor zero = ints({0});
  Tensor y = run1({"Unsqueeze", {}, 13}, {&s, &zero}, {1});
  EXPECT_EQ(y.shape(), (Shape{1}));
  EXPECT_EQ(to_vector<int64_t>(y), (std::vector<int64_t>{7}));
  EXPECT_FALSE(run_op({"Unsqueeze", {attr_ints("axes", {1, 1})}, 11}, {&x}).is_ok());
  EXPECT_FALSE(run_op({"Unsqueeze", {attr_ints("axes", {3})}, 11}, {&x}).is_ok());
  EXPECT_FALSE(run_op({"Unsqueeze", {}, 11}, {&x}).is_ok());
}

// ---- Transpose ----

TEST(RefBTranspose, PermAndDefault) {
  Tensor x = iota_i({2, 3, 4});
  Tensor y = run1({"Transpose", {attr_ints("perm", {1, 0, 2})}}, {&x});
  EXPECT_EQ(y.shape(), (Shape{3, 2, 4}));
  // numpy: np.transpose(np.arange(24).reshape(2,3,4), (1,0,2))
  EXPECT_EQ(to_vector<int64_t>(y), (std::vector<int64_t>{0, 1, 2, 3, 12, 13, 14, 15, 4, 5, 6, 7, 16, 17, 18, 19, 8, 9,
                                                          10, 11, 20, 21, 22, 23}));
  Tensor m = iota_f({2, 3});
  Tensor t = run1({"Transpose"}, {&m});
  EXPECT_EQ(t.shape(), (Shape{3, 2}));
  EXPECT_EQ(to_vector<float>(t), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  EXPECT_FALSE(run_op({"Transpose", {attr_ints("perm", {0, 0, 1})}}, {&x}).is_ok());
  EXPECT_FALSE(run_op({"Transpose", {attr_ints("perm", {0, 1})}}, {&x}).is_ok());
}

// ---- Slice ----

TEST(RefBSlice, NegativeStepsAndAxes) {
  Tensor x = iota_i({2, 3, 4});
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  Tensor starts = ints({-1, 3}), ends = ints({kMin, 0}), axes = ints({1, -1}), steps = ints({-2, -2});
  Tensor y = run1({"Slice", {}, 13}, {&x, &starts, &ends, &axes, &steps}, {1, 2, 3, 4});
  // numpy: x[:, ::-2, 3:0:-2]
  EXPECT_EQ(y.shape(), (Shape{2, 2, 2}));
  EXPECT_EQ(to_vector<int64_t>(y), (std::vector<int64_t>{11, 9, 3, 1, 23, 21, 15, 13}));
}

TEST(RefBSlice, ClampsOutOfRange) {
  Tensor x = iota_i({2, 3, 4});
  Tensor starts = ints({1, -100, -1}), ends = ints({100, 2, std::numeric_limits<int64_t>::max()});
  Tensor y = run1({"Slice", {}, 10}, {&x, &starts, &ends}, {1, 2});
  // numpy: x[1:100, -100:2, -1:]
  EXPECT_EQ(y.shape(), (Shape{1, 2, 1}));
  EXPECT_EQ(to_vector<int64_t>(y), (std::vector<int64_t>{15, 19}));
  Tensor s2 = ints({3}), e2 = ints({1});
  EXPECT_EQ(run1({"Slice", {}, 13}, {&x, &s2, &e2}, {1, 2}).shape(), (Shape{0, 3, 4}));  // empty
}

// Trailing axes taken whole merge into the axis before them (longer rows); checked against
// the coordinates computed here, for a merge of one and of two axes, a step on the axis
// before them (no merge), and a whole tensor (everything merges into one row).
TEST(RefBSlice, WholeTrailingAxesMerge) {
  Tensor x = iota_i({3, 5, 4, 2});
  struct C {
    std::vector<int64_t> starts, ends, axes, steps;
  } cases[] = {{{1}, {4}, {1}, {1}},                 // x[:, 1:4]: axes 2 and 3 merge into 1
               {{1, 0}, {3, 4}, {0, 2}, {1, 1}},     // x[1:3, :, :] with axis 2 named whole
               {{0}, {5}, {1}, {2}},                 // x[:, 0:5:2]: step 2, no merge
               {{0}, {3}, {0}, {1}}};                // the whole tensor
  for (const C& c : cases) {
    const int64_t n = static_cast<int64_t>(c.axes.size());
    Tensor st = ints(c.starts), en = ints(c.ends), ax = ints(c.axes), sp = ints(c.steps);
    Tensor y = run1({"Slice", {}, 13}, {&x, &st, &en, &ax, &sp}, {1, 2, 3, 4});
    int64_t lo[4] = {0, 0, 0, 0}, hi[4] = {3, 5, 4, 2}, step[4] = {1, 1, 1, 1};
    for (int64_t i = 0; i < n; ++i) lo[c.axes[i]] = c.starts[i], hi[c.axes[i]] = c.ends[i], step[c.axes[i]] = c.steps[i];
    std::vector<int64_t> want;
    for (int64_t a = lo[0]; a < hi[0]; a += step[0])
      for (int64_t b = lo[1]; b < hi[1]; b += step[1])
        for (int64_t d = lo[2]; d < hi[2]; d += step[2])
          for (int64_t e = lo[3]; e < hi[3]; e += step[3]) want.push_back(((a * 5 + b) * 4 + d) * 2 + e);
    EXPECT_EQ(to_vector<int64_t>(y), want);
    EXPECT_EQ(y.shape()[3], 2);
  }
}

TEST(RefBSlice, Opset1Attributes) {
  Tensor x = iota_f({3, 4});
  Tensor y = run1({"Slice", {attr_ints("starts", {1}), attr_ints("ends", {-1}), attr_ints("axes", {1})}, 1}, {&x});
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_EQ(to_vector<float>(y), (std::vector<float>{1, 2, 5, 6, 9, 10}));
}

TEST(RefBSlice, Errors) {
  Tensor x = iota_f({3, 4});
  Tensor s = ints({0}), e = ints({2}), a = ints({2}), zero = ints({0}), two = ints({0, 1});
  EXPECT_FALSE(run_op({"Slice"}, {&x, &s, &e, &a}, {1, 2, 3}).is_ok());            // axis out of range
  EXPECT_FALSE(run_op({"Slice"}, {&x, &s, &e, nullptr, &zero}, {1, 2, 4}).is_ok()); // step 0
  EXPECT_FALSE(run_op({"Slice"}, {&x, &two, &e}, {1, 2}).is_ok());                  // count mismatch
  Tensor dup = ints({0, 0});
  EXPECT_FALSE(run_op({"Slice"}, {&x, &two, &two, &dup}, {1, 2, 3}).is_ok());       // repeated axis
}

// ---- Concat, Split ----

TEST(RefBConcat, AxisNegativeAndEmptyInputs) {
  Tensor a = iota_f({2, 2});
  Tensor b = make_tensor<float>({2, 1}, {10, 11});
  Tensor e = make_tensor<float>({2, 0}, {});
  Tensor y = run1({"Concat", {attr_i("axis", -1)}}, {&a, &e, &b});
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(to_vector<float>(y), (std::vector<float>{0, 1, 10, 2, 3, 11}));
  Tensor c = ints({1, 2}), d = ints({3});
  EXPECT_EQ(to_vector<int64_t>(run1({"Concat", {attr_i("axis", 0)}}, {&c, &d})), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_FALSE(run_op({"Concat", {attr_i("axis", 0)}}, {&a, &b}).is_ok());  // dim 1 differs
  EXPECT_FALSE(run_op({"Concat"}, {&a, &a}).is_ok());                       // axis required
  EXPECT_FALSE(run_op({"Concat", {attr_i("axis", 2)}}, {&a, &a}).is_ok());
}

TEST(RefBSplit, AttributeInputAndEqualForms) {
  Tensor x = iota_f({2, 5});
  auto r = run_op({"Split", {attr_i("axis", 1), attr_ints("split", {2, 3})}, 11, 2}, {&x});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(to_vector<float>(r.value()[0]), (std::vector<float>{0, 1, 5, 6}));
  EXPECT_EQ(to_vector<float>(r.value()[1]), (std::vector<float>{2, 3, 4, 7, 8, 9}));
  Tensor sp = ints({1, 0, 4});
  auto r2 = run_op({"Split", {attr_i("axis", -1)}, 13, 3}, {&x, &sp}, {1});
  ASSERT_TRUE(r2.is_ok()) << r2.status().to_string();
  EXPECT_EQ(r2.value()[1].shape(), (Shape{2, 0}));
  EXPECT_EQ(to_vector<float>(r2.value()[2]), (std::vector<float>{1, 2, 3, 4, 6, 7, 8, 9}));
  auto r3 = run_op({"Split", {}, 13, 2}, {&x});
  ASSERT_TRUE(r3.is_ok());
  EXPECT_EQ(to_vector<float>(r3.value()[1]), (std::vector<float>{5, 6, 7, 8, 9}));
  // opset 18 num_outputs=3 on 5: ceil(5/3)=2 -> [2, 2, 1]
  auto r4 = run_op({"Split", {attr_i("axis", 1), attr_i("num_outputs", 3)}, 18, 3}, {&x});
  ASSERT_TRUE(r4.is_ok()) << r4.status().to_string();
  EXPECT_EQ(to_vector<float>(r4.value()[2]), (std::vector<float>{4, 9}));
  EXPECT_FALSE(run_op({"Split", {attr_i("axis", 1)}, 13, 2}, {&x}).is_ok());  // 5 not divisible by 2
  Tensor bad = ints({2, 2});
  EXPECT_FALSE(run_op({"Split", {attr_i("axis", 1)}, 13, 2}, {&x, &bad}, {1}).is_ok());  // sum != 5
}

// ---- Gather ----

TEST(RefBGather, AxisAndNegativeIndices) {
  Tensor a = iota_f({3, 4});
  Tensor idx = make_tensor<int64_t>({2, 2}, {0, -1, 2, 1});
  Tensor y = run1({"Gather", {attr_i("axis", 1)}}, {&a, &idx});
  // numpy: np.take(np.arange(12.).reshape(3,4), [[0,-1],[2,1]], axis=1)
  EXPECT_EQ(y.shape(), (Shape{3, 2, 2}));
  EXPECT_EQ(to_vector<float>(y), (std::vector<float>{0, 3, 2, 1, 4, 7, 6, 5, 8, 11, 10, 9}));
  Tensor s = make_tensor<int32_t>({}, {-1});
  Tensor row = run1({"Gather"}, {&a, &s});
  EXPECT_EQ(row.shape(), (Shape{4}));
  EXPECT_EQ(to_vector<float>(row), (std::vector<float>{8, 9, 10, 11}));
  Tensor shp = ints({1, 3, 224, 224});
  Tensor i0 = make_tensor<int64_t>({}, {0});
  EXPECT_EQ(to_vector<int64_t>(run1({"Gather"}, {&shp, &i0})), (std::vector<int64_t>{1}));
  Tensor e = make_tensor<int64_t>({0}, {});
  EXPECT_EQ(run1({"Gather", {attr_i("axis", 0)}}, {&a, &e}).shape(), (Shape{0, 4}));
}

TEST(RefBGather, OutOfRangeIndexIsAnError) {
  Tensor a = iota_f({3, 4});
  Tensor idx = make_tensor<int64_t>({1}, {3});
  auto r = run_op({"Gather"}, {&a, &idx});
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("out of range"), std::string::npos);
  Tensor f = make_tensor<float>({1}, {0});
  EXPECT_FALSE(run_op({"Gather"}, {&a, &f}).is_ok());
  EXPECT_FALSE(run_op({"Gather", {attr_i("axis", 2)}}, {&a, &idx}).is_ok());
}

// ---- Shape, Size ----

TEST(RefBShape, ValuesAndStartEnd) {
  Tensor x = iota_f({2, 3, 5, 1});
  EXPECT_EQ(to_vector<int64_t>(run1({"Shape", {}, 13}, {&x})), (std::vector<int64_t>{2, 3, 5, 1}));
  EXPECT_EQ(to_vector<int64_t>(run1({"Shape", {attr_i("start", 1), attr_i("end", -1)}, 15}, {&x})),
            (std::vector<int64_t>{3, 5}));
  EXPECT_EQ(to_vector<int64_t>(run1({"Shape", {attr_i("start", -10), attr_i("end", 100)}, 15}, {&x})),
            (std::vector<int64_t>{2, 3, 5, 1}));
  EXPECT_EQ(run1({"Shape", {attr_i("start", 3), attr_i("end", 1)}, 15}, {&x}).shape(), (Shape{0}));
  Tensor s = make_tensor<float>({}, {1});
  EXPECT_EQ(run1({"Shape"}, {&s}).shape(), (Shape{0}));
  Tensor sz = run1({"Size"}, {&x});
  EXPECT_EQ(sz.shape(), (Shape{}));
  EXPECT_EQ(to_vector<int64_t>(sz), (std::vector<int64_t>{30}));
}

TEST(RefBShape, InferenceSetsPlanTimeConstant) {
  Node node;
  node.name = "s";
  node.op_type = "Shape";
  node.opset = 15;
  node.inputs = {0};
  node.outputs = {1};
  ValueInfo in{DType::kFloat32, {4, 7}, nullptr};
  std::vector<ValueInfo> outs(1);
  InferContext ctx(node, {&in}, &outs);
  ASSERT_TRUE(infer_node(*find_op_schema("", "Shape"), ctx).is_ok());
  ASSERT_TRUE(outs[0].constant);
  EXPECT_EQ(to_vector<int64_t>(*outs[0].constant), (std::vector<int64_t>{4, 7}));
  node.op_type = "Size";
  std::vector<ValueInfo> outs2(1);
  InferContext ctx2(node, {&in}, &outs2);
  ASSERT_TRUE(infer_node(*find_op_schema("", "Size"), ctx2).is_ok());
  ASSERT_TRUE(outs2[0].constant);
  EXPECT_EQ(to_vector<int64_t>(*outs2[0].constant), (std::vector<int64_t>{28}));
}

// ---- ConstantOfShape, Expand, Tile, Range ----

TEST(RefBConstantOfShape, DefaultAndValue) {
  Tensor s = ints({2, 3});
  Tensor y = run1({"ConstantOfShape", {}, 9}, {&s}, {0});
  EXPECT_EQ(y.dtype(), DType::kFloat32);
  EXPECT_EQ(to_vector<float>(y), (std::vector<float>(6, 0.f)));
  testing::OpSpec spec{"ConstantOfShape", {}, 9};
  Attribute v;
  v.name = "value";
  v.type = AttrType::kTensor;
  v.t = std::make_shared<const Tensor>(make_tensor<int64_t>({1}, {7}));
  spec.attrs.push_back(v);
  Tensor yi = run1(spec, {&s}, {0});
  EXPECT_EQ(to_vector<int64_t>(yi), (std::vector<int64_t>(6, 7)));
  Tensor empty = make_tensor<int64_t>({0}, {});
  EXPECT_EQ(run1(spec, {&empty}, {0}).shape(), (Shape{}));
  Tensor neg = ints({2, -1});
  EXPECT_FALSE(run_op(spec, {&neg}, {0}).is_ok());
}

TEST(RefBExpand, BidirectionalBroadcast) {
  Tensor x = make_tensor<float>({3, 1}, {1, 2, 3});
  Tensor s = ints({2, 1, 2});
  Tensor y = run1({"Expand"}, {&x, &s}, {1});
  EXPECT_EQ(y.shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(to_vector<float>(y), (std::vector<float>{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}));
  Tensor one = ints({1});
  EXPECT_EQ(run1({"Expand"}, {&x, &one}, {1}).shape(), (Shape{3, 1}));
  Tensor bad = ints({2, 2});
  EXPECT_FALSE(run_op({"Expand"}, {&x, &bad}, {1}).is_ok());
}

TEST(RefBTile, RepeatsPerAxis) {
  Tensor x = make_tensor<int64_t>({2, 2}, {1, 2, 3, 4});
  Tensor r = ints({2, 3});
  Tensor y = run1({"Tile"}, {&x, &r}, {1});
  // numpy: np.tile([[1,2],[3,4]], (2,3))
  EXPECT_EQ(y.shape(), (Shape{4, 6}));
  EXPECT_EQ(to_vector<int64_t>(y), (std::vector<int64_t>{1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4, 1, 2, 1, 2, 1, 2, 3, 4, 3,
                                                          4, 3, 4}));
  Tensor z = ints({0, 1});
  EXPECT_EQ(run1({"Tile"}, {&x, &z}, {1}).shape(), (Shape{0, 2}));
  Tensor bad = ints({2});
  EXPECT_FALSE(run_op({"Tile"}, {&x, &bad}, {1}).is_ok());
}

TEST(RefBRange, IntAndFloat) {
  Tensor s = make_tensor<int64_t>({}, {10}), l = make_tensor<int64_t>({}, {1}), d = make_tensor<int64_t>({}, {-3});
  EXPECT_EQ(to_vector<int64_t>(run1({"Range", {}, 11}, {&s, &l, &d}, {0, 1, 2})), (std::vector<int64_t>{10, 7, 4}));
  Tensor fs = make_tensor<float>({}, {0.5f}), fl = make_tensor<float>({}, {2.0f}), fd = make_tensor<float>({}, {0.5f});
  EXPECT_EQ(to_vector<float>(run1({"Range", {}, 11}, {&fs, &fl, &fd}, {0, 1, 2})), (std::vector<float>{0.5f, 1.0f, 1.5f}));
  EXPECT_EQ(run1({"Range", {}, 11}, {&l, &s, &d}, {0, 1, 2}).shape(), (Shape{0}));  // wrong direction: empty
  Tensor zero = make_tensor<int64_t>({}, {0});
  EXPECT_FALSE(run_op({"Range", {}, 11}, {&s, &l, &zero}, {0, 1, 2}).is_ok());
}

// ---- Pad ----

TEST(RefBPad, ConstantOpset11WithValueAndNegativePads) {
  Tensor x = iota_f({2, 3});
  Tensor pads = ints({1, 0, 0, -1});
  Tensor v = make_tensor<float>({}, {9});
  Tensor y = run1({"Pad", {}, 11}, {&x, &pads, &v}, {1});
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_EQ(to_vector<float>(y), (std::vector<float>{9, 9, 0, 1, 3, 4}));
  Tensor y0 = run1({"Pad", {}, 13}, {&x, &pads}, {1});
  EXPECT_EQ(to_vector<float>(y0), (std::vector<float>{0, 0, 0, 1, 3, 4}));
}

TEST(RefBPad, ReflectEdgeWrap) {
  Tensor x = iota_f({3, 4});
  Tensor p1 = ints({1, 2, 1, 2});
  // numpy: np.pad(np.arange(12.).reshape(3,4), ((1,1),(2,2)), mode='reflect')
  EXPECT_EQ(to_vector<float>(run1({"Pad", {attr_s("mode", "reflect")}, 11}, {&x, &p1}, {1})),
            (std::vector<float>{6, 5, 4, 5, 6, 7, 6, 5, 2, 1, 0, 1, 2, 3, 2, 1, 6, 5, 4, 5, 6, 7, 6, 5,
                                10, 9, 8, 9, 10, 11, 10, 9, 6, 5, 4, 5, 6, 7, 6, 5}));
  Tensor p2 = ints({0, 1, 1, 0});
  // numpy: np.pad(..., ((0,1),(1,0)), mode='edge')
  EXPECT_EQ(to_vector<float>(run1({"Pad", {attr_s("mode", "edge")}, 13}, {&x, &p2}, {1})),
            (std::vector<float>{0, 0, 1, 2, 3, 4, 4, 5, 6, 7, 8, 8, 9, 10, 11, 8, 8, 9, 10, 11}));
  Tensor p3 = ints({1, 2});
  Tensor axes = ints({-1});
  // numpy: np.pad(..., ((0,0),(1,2)), mode='wrap'), opset 19 with axes
  EXPECT_EQ(to_vector<float>(run1({"Pad", {attr_s("mode", "wrap")}, 19}, {&x, &p3, nullptr, &axes}, {1, 3})),
            (std::vector<float>{3, 0, 1, 2, 3, 0, 1, 7, 4, 5, 6, 7, 4, 5, 11, 8, 9, 10, 11, 8, 9}));
}

TEST(RefBPad, Opset2AttributesAndErrors) {
  Tensor x = iota_f({1, 2});
  Tensor y = run1({"Pad", {attr_ints("pads", {0, 1, 0, 1}), attr_f("value", -1)}, 2}, {&x});
  EXPECT_EQ(to_vector<float>(y), (std::vector<float>{-1, 0, 1, -1}));
  EXPECT_FALSE(run_op({"Pad", {attr_ints("pads", {0, 1})}, 2}, {&x}).is_ok());             // wrong count
  EXPECT_FALSE(run_op({"Pad", {attr_ints("pads", {0, -3, 0, 0})}, 2}, {&x}).is_ok());      // removes too much
  EXPECT_FALSE(run_op({"Pad", {attr_ints("pads", {0, 1, 0, 1}), attr_s("mode", "mirror")}, 2}, {&x}).is_ok());
  Tensor e = make_tensor<float>({0, 2}, {});
  Tensor p = ints({1, 0, 0, 0});
  EXPECT_FALSE(run_op({"Pad", {attr_s("mode", "edge")}, 11}, {&e, &p}, {1}).is_ok());      // edge of empty
  EXPECT_EQ(run1({"Pad", {}, 11}, {&e, &p}, {1}).shape(), (Shape{1, 2}));                 // constant is fine
}

}  // namespace
}  // namespace tessera
