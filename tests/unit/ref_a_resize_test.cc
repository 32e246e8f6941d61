// Reference kernels Resize and Upsample. Expected values were computed with onnxruntime
// 1.20 on single-node models whose scales / sizes / roi were initializers, fed the same
// seq() inputs (expression above each table).
#include "ref_a_util.h"

namespace tessera {
namespace {

using testing::attr_f;
using testing::attr_floats;
using testing::attr_i;
using testing::attr_ints;
using testing::attr_s;
using testing::expect_error;
using testing::expect_near;
using testing::make_tensor;
using testing::run_ok;
using testing::seq;
using testing::to_vector;

Tensor floats(std::vector<float> v) { return make_tensor<float>({static_cast<int64_t>(v.size())}, v); }
Tensor ints(std::vector<int64_t> v) { return make_tensor<int64_t>({static_cast<int64_t>(v.size())}, v); }

TEST(RefResize, Opset12NearestScalesLikePaddleOcr) {
  Tensor x = seq({1, 2, 3, 3}), roi = floats({}), scales = floats({1, 1, 2, 2});
  auto def = run_ok({"Resize", {attr_s("mode", "nearest")}, 12}, {&x, &roi, &scales}, {1, 2});
  auto asym = run_ok({"Resize", {attr_s("mode", "nearest"), attr_s("coordinate_transformation_mode", "asymmetric"),
                                 attr_s("nearest_mode", "floor")}, 12},
                     {&x, &roi, &scales}, {1, 2});
  ASSERT_EQ(def.size(), 1u);
  ASSERT_EQ(asym.size(), 1u);
  EXPECT_EQ(def[0].shape(), (Shape{1, 2, 6, 6}));
  // ort(Resize, opset 12, mode=nearest, scales [1,1,2,2]); the asymmetric + floor variant
  // gives the same values for an exact 2x upsample.
  const std::vector<float> want = {
      -1.25f, -1.25f, 0.5f, 0.5f, -0.5f, -0.5f, -1.25f, -1.25f, 0.5f, 0.5f, -0.5f, -0.5f, 1.25f, 1.25f, 0.25f,
      0.25f, -0.75f, -0.75f, 1.25f, 1.25f, 0.25f, 0.25f, -0.75f, -0.75f, 1.f, 1.f, 0.f, 0.f, -1.f, -1.f,
      1.f, 1.f, 0.f, 0.f, -1.f, -1.f, 0.75f, 0.75f, -0.25f, -0.25f, -1.25f, -1.25f, 0.75f, 0.75f, -0.25f,
      -0.25f, -1.25f, -1.25f, 0.5f, 0.5f, -0.5f, -0.5f, 1.25f, 1.25f, 0.5f, 0.5f, -0.5f, -0.5f, 1.25f, 1.25f,
      0.25f, 0.25f, -0.75f, -0.75f, 1.f, 1.f, 0.25f, 0.25f, -0.75f, -0.75f, 1.f, 1.f};
  EXPECT_EQ(to_vector<float>(def[0]), want);
  EXPECT_EQ(to_vector<float>(asym[0]), want);
}

TEST(RefResize, LinearHalfPixelDownsample) {
  Tensor x = seq({1, 1, 4, 6}), roi = floats({}), scales = floats({1, 1, 0.5f, 0.6f});
  auto out = run_ok({"Resize", {attr_s("mode", "linear")}, 13}, {&x, &roi, &scales}, {1, 2});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{1, 1, 2, 3}));
  // ort(Resize, opset 13, mode=linear, scales [1,1,0.5,0.6])
  expect_near(to_vector<float>(out[0]), {-2.980232e-08f, -0.75f, 0.3333335f, -0.08333331f, 1.f, -0.6666665f}, 1e-5f, 1e-6f);
}

TEST(RefResize, LinearAlignCornersFromSizes) {
  Tensor x = seq({1, 1, 3, 4}), roi = floats({}), scales = floats({}), sizes = ints({1, 1, 5, 7});
  auto out = run_ok({"Resize", {attr_s("mode", "linear"), attr_s("coordinate_transformation_mode", "align_corners")}, 13},
                    {&x, &roi, &scales, &sizes}, {1, 2, 3});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{1, 1, 5, 7}));
  // ort(Resize, opset 13, mode=linear, coordinate_transformation_mode=align_corners, sizes [1,1,5,7])
  expect_near(to_vector<float>(out[0]),
              {-1.25f, -0.375f, 0.5f, 0.f, -0.5f, 0.375f, 1.25f, -0.5f, -0.3125f, -0.125f, 0.0625f, 0.25f, 0.4375f,
               0.625f, 0.25f, -0.25f, -0.75f, 0.125f, 1.f, 0.5f, 0.f, -0.375f, -0.1875f, 0.f, 0.1875f, 0.375f,
               -0.125f, -0.625f, -1.f, -0.125f, 0.75f, 0.25f, -0.25f, -0.75f, -1.25f},
              1e-5f, 1e-6f);
}

// Nearest from `sizes` at exact ties: the source coordinate is computed with out / in in
// double, as the ONNX reference does (the float scale 52 / 28 = 1.8571428 put row 6's exact
// 3.0 at 3.0000001, and ceil took row 4). Expected rows from onnx.reference (found by a
// fuzzer against onnxruntime, which agrees).
TEST(RefResize, NearestFromSizesAtExactTies) {
  std::vector<float> rows(28);
  for (int i = 0; i < 28; ++i) rows[static_cast<size_t>(i)] = static_cast<float>(i);
  Tensor x = make_tensor<float>({1, 1, 28, 1}, rows), roi = floats({}), scales = floats({}), sizes = ints({1, 1, 52, 1});
  auto out = run_ok({"Resize", {attr_s("mode", "nearest"), attr_s("nearest_mode", "ceil")}, 13},
                    {&x, &roi, &scales, &sizes}, {1, 2, 3});
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].shape(), (Shape{1, 1, 52, 1}));
  const std::vector<float> y = to_vector<float>(out[0]);
  EXPECT_EQ(y[6], 3.f);  // (6 + 0.5) * 28 / 52 - 0.5 = 3 exactly
  EXPECT_EQ(y[19], 10.f);
  EXPECT_EQ(y[32], 17.f);
  // Asymmetric, round_prefer_ceil, 11 -> 10 columns: column 5 sits at 5.5 exactly.
  std::vector<float> cols(11);
  for (int i = 0; i < 11; ++i) cols[static_cast<size_t>(i)] = static_cast<float>(i);
  Tensor x2 = make_tensor<float>({1, 1, 1, 11}, cols), sizes2 = ints({1, 1, 1, 10});
  auto out2 = run_ok({"Resize", {attr_s("mode", "nearest"), attr_s("coordinate_transformation_mode", "asymmetric"),
                                  attr_s("nearest_mode", "round_prefer_ceil")}, 13},
                     {&x2, &roi, &scales, &sizes2}, {1, 2, 3});
  ASSERT_EQ(out2.size(), 1u);
  EXPECT_EQ(to_vector<float>(out2[0])[5], 6.f);
}

// Nearest from `sizes`, every output index of many lengths, against the exact answer: the
// source coordinate x = a / b from the ONNX formula with scale = out / in (b > 0), and the
// rounding found by search over the integers j (j b compared with a, no division), not the
// kernel's floor-and-remainder arithmetic. Floating point had missed 6 of 500 such random
// Resizes (each a tie that rounded the wrong way); ties are common here: 21 -> 51
// asymmetric puts output 17 at 7 exactly.
TEST(RefResize, NearestFromSizesIsExactAtEveryIndex) {
  struct Coord {
    const char* name;
    int opset;
  };
  const Coord coords[] = {{"half_pixel", 13},         {"asymmetric", 13},          {"align_corners", 13},
                          {"pytorch_half_pixel", 13}, {"tf_half_pixel_for_nn", 13}, {"half_pixel_symmetric", 19}};
  const char* modes[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
  // x = a / b for output o (the ONNX formulas multiplied through by 2 out or out - 1).
  auto fraction = [](const std::string& c, int64_t o, int64_t in, int64_t out, int64_t* a, int64_t* b) {
    if (c == "asymmetric") *a = o * in, *b = out;
    else if (c == "align_corners") *a = out == 1 ? 0 : o * (in - 1), *b = out == 1 ? 1 : out - 1;
    else if (c == "tf_half_pixel_for_nn") *a = (2 * o + 1) * in, *b = 2 * out;
    else if (c == "pytorch_half_pixel" && out == 1) *a = 0, *b = 1;
    else *a = (2 * o + 1) * in - out, *b = 2 * out;  // half_pixel, _symmetric (adjustment 1)
  };
  auto expected = [](const std::string& m, int64_t a, int64_t b, int64_t in) {
    int64_t lo = -1;  // the largest j with j b <= a (floor)
    for (int64_t j = -1; j <= in; ++j)
      if (j * b <= a) lo = j;
    const bool exact = lo * b == a;
    const int64_t twice_rem = 2 * (a - lo * b);  // 2 (x - floor x) b
    int64_t r = lo;
    if (m == "ceil") r = exact ? lo : lo + 1;
    else if (m == "round_prefer_floor") r = twice_rem <= b ? lo : lo + 1;
    else if (m == "round_prefer_ceil") r = twice_rem < b ? lo : lo + 1;
    return std::min(std::max<int64_t>(r, 0), in - 1);
  };
  const std::pair<int64_t, int64_t> lengths[] = {{21, 51}, {28, 52}, {52, 120}, {11, 10}, {45, 63}, {55, 119},
                                                 {48, 112}, {56, 75}, {30, 92}, {35, 85}, {7, 3}, {1, 5},
                                                 {5, 1}, {16, 16}, {40, 25}, {3, 7}};
  Tensor roi = floats({}), scales = floats({});
  for (const Coord& c : coords)
    for (const char* m : modes)
      for (auto [in, out] : lengths) {
        std::vector<float> v(static_cast<size_t>(in));
        for (int64_t i = 0; i < in; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i);
        Tensor x = make_tensor<float>({1, 1, in, 1}, v), sizes = ints({1, 1, out, 1});
        auto y = run_ok({"Resize", {attr_s("mode", "nearest"), attr_s("nearest_mode", m),
                                    attr_s("coordinate_transformation_mode", c.name)}, c.opset},
                        {&x, &roi, &scales, &sizes}, {1, 2, 3});
        ASSERT_EQ(y.size(), 1u);
        const std::vector<float> got = to_vector<float>(y[0]);
        ASSERT_EQ(got.size(), static_cast<size_t>(out));
        for (int64_t o = 0; o < out; ++o) {
          int64_t a = 0, b = 1;
          fraction(c.name, o, in, out, &a, &b);
          EXPECT_EQ(got[static_cast<size_t>(o)], static_cast<float>(expected(m, a, b, in)))
              << c.name << " " << m << " " << in << " -> " << out << " at " << o;
        }
      }
}

TEST(RefResize, CubicDefaultAndExcludeOutside) {
  Tensor x = seq({1, 1, 4, 4}), roi = floats({}), up = floats({1, 1, 2, 2}), mixed = floats({1, 1, 0.75f, 1.5f});
  auto a = run_ok({"Resize", {attr_s("mode", "cubic")}, 13}, {&x, &roi, &up}, {1, 2});
  auto b = run_ok({"Resize", {attr_s("mode", "cubic"), attr_f("cubic_coeff_a", -0.5f), attr_i("exclude_outside", 1),
                              attr_s("coordinate_transformation_mode", "pytorch_half_pixel")}, 13},
                  {&x, &roi, &mixed}, {1, 2});
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(b.size(), 1u);
  // ort(Resize, opset 13, mode=cubic, scales [1,1,2,2])
  expect_near(to_vector<float>(a[0]),
              {-1.623363f, -0.9006538f, 0.3056984f, 0.4830017f, -0.5093689f, -0.3320656f, 0.8742867f, 1.596996f,
               -0.9748726f, -0.6229362f, -0.03979874f, 0.1696053f, -0.1353493f, 0.1095543f, 0.7455635f, 1.129601f,
               0.112339f, -0.1589394f, -0.623333f, -0.3610573f, 0.4872627f, 0.8560371f, 0.5502586f, 0.3752823f,
               0.1324158f, -0.103363f, -0.5080872f, -0.2137108f, 0.6391411f, 0.6692429f, -0.1290817f, -0.6038322f,
               -0.9615173f, -0.5030823f, 0.2590637f, 0.5466423f, 0.2190285f, -0.3808823f, -0.9405289f, -1.284611f,
               -0.9414406f, -0.447506f, 0.3743095f, 0.6584892f, 0.2644081f, -0.3389015f, -0.8388786f, -1.147461f,
               0.145771f, 0.01649094f, -0.2092247f, 0.07495499f, 0.728405f, 0.7483101f, 0.128994f, -0.2392578f,
               0.7942619f, 0.2942085f, -0.5547218f, -0.2705421f, 1.006123f, 1.396801f, 0.7064857f, 0.3027344f},
              1e-5f, 1e-5f);
  EXPECT_EQ(b[0].shape(), (Shape{1, 1, 3, 6}));
  // ort(Resize, opset 13, mode=cubic, cubic_coeff_a=-0.5, exclude_outside=1,
  //     coordinate_transformation_mode=pytorch_half_pixel, scales [1,1,0.75,1.5])
  expect_near(to_vector<float>(b[0]),
              {-1.158211f, -0.3648797f, 0.3270633f, -0.3034419f, 0.4065198f, 1.21599f, -0.399671f, -0.2205882f,
               0.08040369f, 0.4020184f, -0.2233456f, -0.873972f, 0.358869f, -0.07629678f, -0.198442f, 0.9465503f,
               0.6189985f, -0.0001440793f},
              1e-5f, 1e-5f);
}

TEST(RefResize, Nearest3dRoundPreferCeilAsymmetric) {
  Tensor x = seq({2, 5, 7}), roi = floats({}), scales = floats({1, 0.6f, 1.5f});
  auto out = run_ok({"Resize", {attr_s("mode", "nearest"), attr_s("coordinate_transformation_mode", "asymmetric"),
                                attr_s("nearest_mode", "round_prefer_ceil")}, 13},
                    {&x, &roi, &scales}, {1, 2});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{2, 3, 10}));
  // ort(Resize, opset 13, mode=nearest, asymmetric, round_prefer_ceil, scales [1,0.6,1.5])
  EXPECT_EQ(to_vector<float>(out[0]),
            (std::vector<float>{-1.25f, 0.5f, 0.5f, -0.5f, 1.25f, 1.25f, 0.25f, -0.75f, -0.75f, 1.f, 1.25f, 0.25f,
                                0.25f, -0.75f, 1.f, 1.f, 0.f, -1.f, -1.f, 0.75f, -0.25f, -1.25f, -1.25f, 0.5f, -0.5f,
                                -0.5f, 1.25f, 0.25f, 0.25f, -0.75f, -0.5f, 1.25f, 1.25f, 0.25f, -0.75f, -0.75f, 1.f,
                                0.f, 0.f, -1.f, -0.75f, 1.f, 1.f, 0.f, -1.f, -1.f, 0.75f, -0.25f, -0.25f, -1.25f,
                                0.5f, -0.5f, -0.5f, 1.25f, 0.25f, 0.25f, -0.75f, 1.f, 1.f, 0.f}));
}

TEST(RefResize, TfCropAndResizeExtrapolation) {
  Tensor x = seq({1, 1, 4, 5}), roi = floats({0, 0, 0.2f, 0.1f, 1, 1, 0.9f, 1.2f}), scales = floats({1, 1, 1.5f, 1.2f});
  auto out = run_ok({"Resize", {attr_s("mode", "linear"), attr_s("coordinate_transformation_mode", "tf_crop_and_resize"),
                                attr_f("extrapolation_value", -9.f)}, 13},
                    {&x, &roi, &scales}, {1, 2});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{1, 1, 6, 6}));
  // ort(Resize, opset 13, mode=linear, tf_crop_and_resize, roi [0,0,.2,.1,1,1,.9,1.2],
  //     extrapolation_value=-9, scales [1,1,1.5,1.2])
  expect_near(to_vector<float>(out[0]),
              {-0.25f, 0.52f, -0.184f, -0.07399998f, 0.4980001f, -9.f, -0.06200001f, 0.6904f, -0.1500001f, -0.9199997f,
               0.6200001f, -9.f, -0.314f, 0.06879988f, 0.05999994f, -0.7099996f, 0.8300002f, -9.f, -0.566f, -0.5528001f,
               0.2699999f, -0.4999996f, 1.04f, -9.f, -0.51f, -0.62f, 0.4799999f, -0.3207998f, 0.5416001f, -9.f,
               -0.3000001f, -0.4100001f, 0.6899998f, -0.1570001f, -0.3109996f, -9.f},
              1e-4f, 1e-5f);
}

TEST(RefResize, Opset10NearestAndLinear) {
  Tensor x = seq({1, 1, 2, 3}), scales = floats({1, 1, 2, 1.5f});
  auto nn = run_ok({"Resize", {attr_s("mode", "nearest")}, 10}, {&x, &scales}, {1});
  auto lin = run_ok({"Resize", {attr_s("mode", "linear")}, 10}, {&x, &scales}, {1});
  ASSERT_EQ(nn.size(), 1u);
  ASSERT_EQ(lin.size(), 1u);
  EXPECT_EQ(nn[0].shape(), (Shape{1, 1, 4, 4}));
  // ort(Resize, opset 10, mode=nearest / linear, scales [1,1,2,1.5])
  EXPECT_EQ(to_vector<float>(nn[0]), (std::vector<float>{-1.25f, -1.25f, 0.5f, -0.5f, -1.25f, -1.25f, 0.5f, -0.5f, 1.25f,
                                                         1.25f, 0.25f, -0.75f, 1.25f, 1.25f, 0.25f, -0.75f}));
  expect_near(to_vector<float>(lin[0]), {-1.25f, -0.08333328f, 0.1666666f, -0.5f, 0.f, 0.25f, 0.04166663f, -0.625f, 1.25f,
                                         0.5833333f, -0.08333337f, -0.75f, 1.25f, 0.5833333f, -0.08333337f, -0.75f},
              1e-5f, 1e-6f);
}

TEST(RefResize, Opset18AxesKeepAspectRatio) {
  Tensor x = seq({1, 1, 4, 6}), sizes = ints({6, 6});
  auto out = run_ok({"Resize", {attr_s("mode", "nearest"), attr_ints("axes", {2, 3}),
                                attr_s("keep_aspect_ratio_policy", "not_larger")}, 18},
                    {&x, nullptr, nullptr, &sizes}, {3});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{1, 1, 4, 6}));  // scale min(6/4, 6/6) = 1
  // ort(Resize, opset 18, nearest, axes [2,3], not_larger, sizes [6,6])
  EXPECT_EQ(to_vector<float>(out[0]), to_vector<float>(x));
}

TEST(RefResize, Opset19HalfPixelSymmetric) {
  Tensor x = seq({1, 1, 3, 4}), scales = floats({1, 1, 1.7f, 0.6f});
  auto out = run_ok({"Resize", {attr_s("mode", "linear"), attr_s("coordinate_transformation_mode", "half_pixel_symmetric")}, 19},
                    {&x, nullptr, &scales}, {2});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{1, 1, 5, 2}));
  // ort(Resize, opset 19, linear, half_pixel_symmetric, scales [1,1,1.7,0.6])
  expect_near(to_vector<float>(out[0]), {-0.08333328f, 0.08333319f, -0.2205883f, 0.3235294f, -0.4166667f, 0.6666667f,
                                         -0.07352936f, -0.06862748f, 0.1666667f, -0.5833333f},
              1e-5f, 1e-6f);
}

TEST(RefResize, SizeOne) {
  Tensor x = make_tensor<float>({1, 1, 1, 1}, {2.5f}), roi = floats({}), scales = floats({1, 1, 3, 2});
  auto out = run_ok({"Resize", {attr_s("mode", "cubic")}, 13}, {&x, &roi, &scales}, {1, 2});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{1, 1, 3, 2}));
  // Every tap clamps to the one pixel and the cubic weights sum to 1.
  expect_near(to_vector<float>(out[0]), std::vector<float>(6, 2.5f));
}

TEST(RefResize, Errors) {
  Tensor x = seq({1, 1, 2, 2}), roi = floats({}), scales = floats({1, 1, 2, 2}), sizes = ints({1, 1, 4, 4});
  expect_error({"Resize", {}, 13}, {&x, &roi, &scales, &sizes}, StatusCode::kInvalidArgument, "both", {1, 2, 3});
  Tensor neg = floats({1, 1, -2, 2});
  expect_error({"Resize", {}, 13}, {&x, &roi, &neg}, StatusCode::kInvalidArgument, "positive", {1, 2});
  Tensor short_scales = floats({2, 2});
  expect_error({"Resize", {}, 13}, {&x, &roi, &short_scales}, StatusCode::kInvalidArgument, "scales", {1, 2});
  expect_error({"Resize", {attr_s("mode", "area")}, 13}, {&x, &roi, &scales}, StatusCode::kInvalidArgument, "mode", {1, 2});
  expect_error({"Resize", {attr_s("coordinate_transformation_mode", "corners")}, 13}, {&x, &roi, &scales},
               StatusCode::kInvalidArgument, "coordinate_transformation_mode", {1, 2});
  expect_error({"Resize", {}, 13}, {&x, &roi, &scales}, StatusCode::kUnimplemented, "scales", {1});  // not a constant
  Tensor huge_sizes = ints({1, 1, int64_t{1} << 62, 4});
  expect_error({"Resize", {}, 13}, {&x, &roi, nullptr, &huge_sizes}, StatusCode::kInvalidArgument, "sizes", {1, 3});
  Tensor huge_scales = floats({1, 1, 1e30f, 1});
  expect_error({"Resize", {}, 13}, {&x, &roi, &huge_scales}, StatusCode::kInvalidArgument, "too large", {1, 2});
  Tensor tiny = floats({1, 1, 0.1f, 1});
  expect_error({"Resize", {}, 13}, {&x, &roi, &tiny}, StatusCode::kInvalidArgument, "output dim", {1, 2});
  // antialias is implemented (ref_e_resize_antialias_test.cc); only 0 and 1 are valid.
  expect_error({"Resize", {attr_i("antialias", 3)}, 18}, {&x, &roi, &scales}, StatusCode::kInvalidArgument, "antialias", {1, 2});
}

TEST(RefUpsample, Opset9NearestAndOpset7Linear) {
  Tensor x = seq({1, 1, 2, 3}), scales = floats({1, 1, 2, 2});
  auto nn = run_ok({"Upsample", {attr_s("mode", "nearest")}, 9}, {&x, &scales}, {1});
  auto lin = run_ok({"Upsample", {attr_s("mode", "linear"), attr_floats("scales", {1, 1, 2, 2})}, 7}, {&x});
  ASSERT_EQ(nn.size(), 1u);
  ASSERT_EQ(lin.size(), 1u);
  EXPECT_EQ(nn[0].shape(), (Shape{1, 1, 4, 6}));
  // ort(Upsample, opset 9, nearest, scales [1,1,2,2]) and ort(Upsample, opset 7, linear, scales=[1,1,2,2])
  EXPECT_EQ(to_vector<float>(nn[0]), (std::vector<float>{-1.25f, -1.25f, 0.5f, 0.5f, -0.5f, -0.5f, -1.25f, -1.25f, 0.5f,
                                                         0.5f, -0.5f, -0.5f, 1.25f, 1.25f, 0.25f, 0.25f, -0.75f, -0.75f,
                                                         1.25f, 1.25f, 0.25f, 0.25f, -0.75f, -0.75f}));
  expect_near(to_vector<float>(lin[0]), {-1.25f, -0.375f, 0.5f, 0.f, -0.5f, -0.5f, 0.f, 0.1875f, 0.375f, -0.125f, -0.625f,
                                         -0.625f, 1.25f, 0.75f, 0.25f, -0.25f, -0.75f, -0.75f, 1.25f, 0.75f, 0.25f, -0.25f,
                                         -0.75f, -0.75f});
  Tensor down = floats({1, 1, 0.5f, 1});
  expect_error({"Upsample", {}, 9}, {&x, &down}, StatusCode::kInvalidArgument, "scales", {1});
}

}  // namespace
}  // namespace tessera
