// Every Vulkan kernel against the CPU reference on random inputs: odd sizes, size 1,
// broadcasting, several attribute settings. Each check also asserts that the node really
// ran on Vulkan (its placement), so a silent CPU fallback cannot pass. Tolerances: the shaders
// compute in float32 (GPUs need not have doubles); elementwise and row ops stay within 1e-6
// relative of the reference (which uses double where it matters) except where noted
// (LogSoftmax, linear Resize); MatMul / Gemm / Conv accumulate in float: 1e-5 relative plus
// 1e-5 * sqrt(K) absolute for K products of inputs in [-2, 2].
// Without a Vulkan device every test skips ("no Vulkan device: ...").
#include <cmath>

#include "tests/unit/vulkan_test_util.h"

namespace tessera {
namespace {

using namespace vulkan_testing;

double gemm_atol(int64_t k) { return 1e-5 * std::sqrt(static_cast<double>(k)) * 4; }

TEST(VulkanOps, BinaryWithBroadcast) {
  TSR_REQUIRE_VULKAN();
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{3, 5, 7}, {3, 5, 7}}, {{3, 5, 7}, {7}}, {{3, 1, 7}, {5, 1}}, {{2, 3, 4, 5}, {3, 1, 1}}, {{1}, {4, 9}},
      {{}, {6}},              {{1, 1}, {1}},    {{1000003}, {1}}};
  uint32_t seed = 1;
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow"}) {
    for (const auto& [a, b] : shapes) {
      const bool pow = std::string(op) == "Pow";
      // Pow: positive bases (negative bases with fractional exponents give NaN on both sides).
      Tensor ta = random_tensor(a, seed++, pow ? 0.1f : -2.f, 2.f);
      Tensor tb = random_tensor(b, seed++, pow ? -2.f : 0.5f, 2.f);
      check_node(op, {feed(ta), feed(tb)}, {}, 1e-6, 1e-6);
      check_node(op, {feed(tb), constant(ta)}, {}, 1e-6, 1e-6);
    }
  }
  check_node("PRelu", {feed(random_tensor({2, 3, 4, 5}, 90)), constant(random_tensor({3, 1, 1}, 91))}, {});
}

TEST(VulkanOps, UnaryAndActivations) {
  TSR_REQUIRE_VULKAN();
  uint32_t seed = 100;
  for (const Shape& s : std::vector<Shape>{{7, 129}, {1}, {2, 3, 17}}) {
    for (const char* op : {"Relu", "Sigmoid", "Tanh", "Erf", "Exp", "Neg", "Abs", "HardSwish", "Softplus", "Softsign",
                           "Floor", "Ceil", "Sin", "Cos", "Mish", "Elu", "Selu"})
      check_node(op, {feed(random_tensor(s, seed++, -4.f, 4.f))}, {});
    check_node("LeakyRelu", {feed(random_tensor(s, seed++))}, {attr_f("alpha", 0.2f)});
    check_node("HardSigmoid", {feed(random_tensor(s, seed++, -4.f, 4.f))}, {attr_f("alpha", 0.25f), attr_f("beta", 0.4f)});
    check_node("Sqrt", {feed(random_tensor(s, seed++, 0.f, 9.f))}, {});
    check_node("Log", {feed(random_tensor(s, seed++, 0.01f, 9.f))}, {});
    check_node("Reciprocal", {feed(random_tensor(s, seed++, 0.5f, 9.f))}, {});
    check_node("Gelu", {feed(random_tensor(s, seed++, -4.f, 4.f))}, {}, 1e-6, 1e-6, 20);
    check_node("Gelu", {feed(random_tensor(s, seed++, -4.f, 4.f))}, {attr_s("approximate", "tanh")}, 1e-6, 1e-6, 20);
    check_node("Clip", {feed(random_tensor(s, seed++, -8.f, 8.f)), constant(float_tensor({}, {0.f})),
                        constant(float_tensor({}, {6.f}))}, {});
    check_node("Clip", {feed(random_tensor(s, seed++, -8.f, 8.f)), omitted(), constant(float_tensor({}, {1.5f}))}, {});
    check_node("Clip", {feed(random_tensor(s, seed++, -8.f, 8.f))}, {attr_f("min", -1.f), attr_f("max", 1.f)}, 1e-6, 1e-6, 6);
  }
}

TEST(VulkanOps, SoftmaxAndLogSoftmax) {
  TSR_REQUIRE_VULKAN();
  uint32_t seed = 200;
  for (const Shape& s : std::vector<Shape>{{3, 7}, {2, 12, 33, 128}, {1, 1}, {4, 3000}, {2, 5, 3}})
    for (const char* op : {"Softmax", "LogSoftmax"}) {
      // LogSoftmax = (x - max) - log(sum exp(x - max)) subtracts terms of up to ~20 in
      // magnitude (|x - max| <= 12, log(3000) = 8), so an output near 0 carries the float32
      // rounding of those terms: about 1e-6 absolute, whatever its own size.
      const double atol = std::string(op) == "LogSoftmax" ? 2e-6 : 1e-7;
      check_node(op, {feed(random_tensor(s, seed++, -6.f, 6.f))}, {attr_i("axis", -1)}, atol, 1e-6, 13);
      check_node(op, {feed(random_tensor(s, seed++, -6.f, 6.f))}, {attr_i("axis", 0)}, atol, 1e-6, 13);
      check_node(op, {feed(random_tensor(s, seed++, -6.f, 6.f))}, {attr_i("axis", 1)}, atol, 1e-6, 11);  // coerced to 2-D
    }
}

TEST(VulkanOps, LayerNormalization) {
  TSR_REQUIRE_VULKAN();
  uint32_t seed = 300;
  for (const Shape& s : std::vector<Shape>{{4, 7, 768}, {3, 5}, {1, 1}, {2, 3, 1001}}) {
    const int64_t last = s.back();
    check_node("LayerNormalization", {feed(random_tensor(s, seed++)), constant(random_tensor({last}, seed++)),
                                      constant(random_tensor({last}, seed++))},
               {attr_i("axis", -1), attr_f("epsilon", 1e-5f)}, 1e-5, 1e-5);
    check_node("LayerNormalization", {feed(random_tensor(s, seed++)), constant(random_tensor({last}, seed++))},
               {attr_i("axis", -1), attr_f("epsilon", 1e-12f)}, 1e-5, 1e-5);
  }
  // Over the last two axes.
  check_node("LayerNormalization", {feed(random_tensor({2, 3, 4, 5}, 390)), constant(random_tensor({4, 5}, 391)),
                                    constant(random_tensor({4, 5}, 392))},
             {attr_i("axis", 2)}, 1e-5, 1e-5, 17, 1);
  // With the Mean and InvStdDev outputs: not a Vulkan kernel yet; the CPU runs it.
  check_node("LayerNormalization", {feed(random_tensor({2, 3, 4, 5}, 393)), constant(random_tensor({4, 5}, 394)),
                                    constant(random_tensor({4, 5}, 395))},
             {attr_i("axis", 2)}, 1e-5, 1e-5, 17, 3, /*expect_on_vulkan=*/false);
}

TEST(VulkanOps, ReduceMeanSumAndGlobalAveragePool) {
  TSR_REQUIRE_VULKAN();
  uint32_t seed = 400;
  const Shape s = {2, 3, 40, 7};
  for (const std::vector<int64_t>& axes : std::vector<std::vector<int64_t>>{{3}, {-1}, {2, 3}, {1}, {1, 2}, {0}, {0, 1, 2, 3}})
    for (int keep : {0, 1}) {
      check_node("ReduceMean", {feed(random_tensor(s, seed++))}, {attr_ints("axes", axes), attr_i("keepdims", keep)}, 1e-6,
                 1e-5, 13);
      check_node("ReduceSum", {feed(random_tensor(s, seed++)), constant(int64_tensor({static_cast<int64_t>(axes.size())}, axes))},
                 {attr_i("keepdims", keep)}, 1e-5, 1e-5, 13);
    }
  check_node("ReduceMean", {feed(random_tensor({5, 1, 3}, seed++))}, {attr_ints("axes", {1})}, 1e-6, 1e-6, 13);
  check_node("GlobalAveragePool", {feed(random_tensor({2, 5, 7, 7}, seed++))}, {}, 1e-6, 1e-5);
  check_node("GlobalAveragePool", {feed(random_tensor({1, 2048, 7, 7}, seed++))}, {}, 1e-6, 1e-5);
}

TEST(VulkanOps, TransposeSliceExpandConcatSplitGather) {
  TSR_REQUIRE_VULKAN();
  uint32_t seed = 500;
  for (const std::vector<int64_t>& perm : std::vector<std::vector<int64_t>>{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}})
    check_node("Transpose", {feed(random_tensor({5, 33, 65}, seed++))}, {attr_ints("perm", perm)}, 0, 0);
  check_node("Transpose", {feed(random_tensor({1, 128, 12, 64}, seed++))}, {attr_ints("perm", {0, 2, 1, 3})}, 0, 0);
  check_node("Transpose", {feed(random_tensor({1, 128, 12, 64}, seed++))}, {attr_ints("perm", {0, 2, 3, 1})}, 0, 0);
  check_node("Transpose", {feed(random_tensor({31, 67}, seed++))}, {}, 0, 0);
  check_node("Transpose", {feed(random_tensor({1, 1, 1}, seed++))}, {attr_ints("perm", {2, 0, 1})}, 0, 0);

  Tensor x = random_tensor({6, 9, 11}, seed++);
  check_node("Slice", {feed(x), constant(int64_tensor({2}, {1, -2})), constant(int64_tensor({2}, {5, 0})),
                       constant(int64_tensor({2}, {0, 2})), constant(int64_tensor({2}, {2, -3}))}, {}, 0, 0, 13);
  check_node("Slice", {feed(x), constant(int64_tensor({1}, {0})), constant(int64_tensor({1}, {INT64_MAX})),
                       constant(int64_tensor({1}, {-1}))}, {}, 0, 0, 13);
  check_node("Expand", {feed(random_tensor({3, 1, 5}, seed++)), constant(int64_tensor({4}, {2, 3, 4, 5}))}, {}, 0, 0, 13);

  for (int64_t axis : {0, 1, -1})
    check_node("Concat", {feed(random_tensor({2, 3, 5}, seed++)), feed(random_tensor({2, 3, 5}, seed++)),
                          constant(random_tensor({2, 3, 5}, seed++))}, {attr_i("axis", axis)}, 0, 0, 13);
  check_node("Concat", {feed(random_tensor({2, 1, 5}, seed++)), feed(random_tensor({2, 4, 5}, seed++))}, {attr_i("axis", 1)},
             0, 0, 13);
  check_node("Split", {feed(random_tensor({4, 10, 3}, seed++)), constant(int64_tensor({3}, {2, 5, 3}))}, {attr_i("axis", 1)}, 0,
             0, 13, 3);

  // Indices known when planning (checked then) run on Vulkan; indices fed at run time go to
  // the CPU, which checks them.
  check_node("Gather", {feed(random_tensor({100, 16}, seed++)), constant(int64_tensor({2, 5}, {0, 99, -1, 5, 7, 7, 42, -100, 3, 1}))},
             {attr_i("axis", 0)}, 0, 0, 13);
  check_node("Gather", {feed(random_tensor({100, 16}, seed++)), feed(int64_tensor({2, 5}, {0, 99, -1, 5, 7, 7, 42, -100, 3, 1}))},
             {attr_i("axis", 0)}, 0, 0, 13, 1, /*expect_on_vulkan=*/false);
  check_node("Gather", {feed(random_tensor({5, 7, 3}, seed++)), constant(int64_tensor({4}, {6, 0, -7, 3}))}, {attr_i("axis", 1)},
             0, 0, 13);
  check_node("Gather", {feed(random_tensor({3, 10, 4}, seed++)), constant(int64_tensor({3}, {9, 0, -2}))}, {attr_i("axis", 1)},
             0, 0, 13);
}

TEST(VulkanOps, GatherOutOfRangeIsAnErrorNotACrash) {
  TSR_REQUIRE_VULKAN();
  auto model = one_node_model("Gather", {feed(random_tensor({4, 3}, 1)), feed(int64_tensor({2}, {1, 4}))}, {attr_i("axis", 0)}, 13, 1);
  auto r = run_on(model, "vulkan", {{"in0", random_tensor({4, 3}, 1)}, {"in1", int64_tensor({2}, {1, 4})}});
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("out of range"), std::string::npos) << r.status().to_string();
}

TEST(VulkanOps, PoolingBatchNormResize) {
  TSR_REQUIRE_VULKAN();
  uint32_t seed = 600;
  const Shape s = {2, 3, 17, 19};
  check_node("MaxPool", {feed(random_tensor(s, seed++))}, {attr_ints("kernel_shape", {3, 3}), attr_ints("strides", {2, 2}),
                                                           attr_ints("pads", {1, 1, 1, 1})}, 0, 0, 12);
  check_node("MaxPool", {feed(random_tensor(s, seed++))}, {attr_ints("kernel_shape", {2, 3}), attr_i("ceil_mode", 1),
                                                           attr_ints("strides", {2, 2}), attr_ints("dilations", {2, 1})}, 0, 0, 12);
  for (int cip : {0, 1}) {
    check_node("AveragePool", {feed(random_tensor(s, seed++))}, {attr_ints("kernel_shape", {3, 3}), attr_ints("pads", {1, 1, 1, 1}),
                                                                 attr_i("count_include_pad", cip)}, 1e-6, 1e-6, 11);
    check_node("AveragePool", {feed(random_tensor(s, seed++))}, {attr_ints("kernel_shape", {2, 2}), attr_ints("strides", {2, 2}),
                                                                 attr_i("ceil_mode", 1), attr_i("count_include_pad", cip)},
               1e-6, 1e-6, 11);
  }
  const int64_t c = 4;
  check_node("BatchNormalization", {feed(random_tensor({2, c, 5, 7}, seed++)), constant(random_tensor({c}, seed++)),
                                    constant(random_tensor({c}, seed++)), constant(random_tensor({c}, seed++)),
                                    constant(random_tensor({c}, seed++, 0.5f, 2.f))},
             {attr_f("epsilon", 1e-5f)}, 1e-6, 1e-6, 15);
  check_node("BatchNormalization", {feed(random_tensor({3, c}, seed++)), constant(random_tensor({c}, seed++)),
                                    constant(random_tensor({c}, seed++)), constant(random_tensor({c}, seed++)),
                                    constant(random_tensor({c}, seed++, 0.5f, 2.f))}, {}, 1e-6, 1e-6, 15);

  Tensor img = random_tensor({2, 3, 9, 13}, seed++);
  auto scales = constant(float_tensor({4}, {1.f, 1.f, 2.f, 2.f}));
  auto sizes = constant(int64_tensor({4}, {2, 3, 17, 29}));
  // Linear: the shader interpolates in float32 (the reference in double): a few ulp of the
  // inputs' magnitude (2), about 2e-7 each, through the coordinate and the two lerps.
  const double lin_atol = 4e-6;
  for (const char* coord : {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"}) {
    check_node("Resize", {feed(img), omitted(), omitted(), sizes},
               {attr_s("mode", "linear"), attr_s("coordinate_transformation_mode", coord)}, lin_atol, 1e-6, 13);
    check_node("Resize", {feed(img), omitted(), scales},
               {attr_s("mode", "linear"), attr_s("coordinate_transformation_mode", coord)}, lin_atol, 1e-6, 13);
  }
  for (const char* nearest : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"})
    check_node("Resize", {feed(img), omitted(), omitted(), sizes},
               {attr_s("mode", "nearest"), attr_s("nearest_mode", nearest),
                attr_s("coordinate_transformation_mode", "asymmetric")}, 0, 0, 13);
  check_nearest_resize_ties_from_sizes(seed);
  check_node("Resize", {feed(img), omitted(), scales}, {attr_s("mode", "nearest")}, 0, 0, 13);
  check_node("Resize", {feed(img), omitted(), constant(float_tensor({4}, {1.f, 1.f, 0.5f, 0.5f}))}, {attr_s("mode", "linear")},
             lin_atol, 1e-6, 13);
}

TEST(VulkanOps, MatMulAndGemm) {
  TSR_REQUIRE_VULKAN();
  uint32_t seed = 700;
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{5, 7}, {7, 3}},        {{2, 3, 5, 7}, {7, 4}},     {{2, 1, 5, 7}, {3, 7, 4}}, {{7}, {7, 3}},  {{4, 7}, {7}},
      {{12, 128, 64}, {12, 64, 128}}, {{5, 7}, {2, 7, 3}}, {{1, 1}, {1, 1}},         {{1, 128, 768}, {768, 3072}}};
  for (const auto& [a, b] : shapes) {
    const int64_t k = a.back();
    check_node("MatMul", {feed(random_tensor(a, seed++)), constant(random_tensor(b, seed++))}, {}, gemm_atol(k), 1e-5, 13);
    check_node("MatMul", {feed(random_tensor(a, seed++)), feed(random_tensor(b, seed++))}, {}, gemm_atol(k), 1e-5, 13);
  }
  for (int ta : {0, 1})
    for (int tb : {0, 1})
      for (const Shape& cs : std::vector<Shape>{{6}, {5, 1}, {}, {5, 6}}) {
        const Shape as = ta ? Shape{9, 5} : Shape{5, 9}, bs = tb ? Shape{6, 9} : Shape{9, 6};
        check_node("Gemm", {feed(random_tensor(as, seed++)), constant(random_tensor(bs, seed++)), constant(random_tensor(cs, seed++))},
                   {attr_i("transA", ta), attr_i("transB", tb), attr_f("alpha", 0.75f), attr_f("beta", 1.5f)}, gemm_atol(9),
                   1e-5, 13);
      }
  check_node("Gemm", {feed(random_tensor({1, 2048}, seed++)), constant(random_tensor({1000, 2048}, seed++))},
             {attr_i("transB", 1)}, gemm_atol(2048), 1e-5, 13);
}

TEST(VulkanOps, Conv) {
  TSR_REQUIRE_VULKAN();
  uint32_t seed = 800;
  struct Case {
    Shape x, w;
    int64_t group, stride, pad, dilation;
    bool bias;
  };
  const std::vector<Case> cases = {
      {{1, 3, 17, 19}, {8, 3, 3, 3}, 1, 2, 1, 1, true},   {{2, 4, 9, 9}, {6, 2, 3, 3}, 2, 1, 1, 1, false},
      {{1, 8, 15, 15}, {8, 1, 3, 3}, 8, 1, 1, 1, true},   {{1, 8, 15, 15}, {8, 1, 3, 3}, 8, 2, 1, 1, false},
      {{1, 5, 11, 13}, {7, 5, 1, 1}, 1, 1, 0, 1, true},   {{1, 3, 16, 16}, {4, 3, 3, 3}, 1, 1, 2, 2, true},
      {{1, 3, 32, 32}, {16, 3, 7, 7}, 1, 2, 3, 1, false}, {{1, 1, 1, 1}, {1, 1, 1, 1}, 1, 1, 0, 1, true}};
  for (const Case& c : cases) {
    std::vector<TestInput> in = {feed(random_tensor(c.x, seed++)), constant(random_tensor(c.w, seed++))};
    if (c.bias) in.push_back(constant(random_tensor({c.w[0]}, seed++)));
    const int64_t k = c.w[1] * c.w[2] * c.w[3];
    check_node("Conv", in,
               {attr_i("group", c.group), attr_ints("strides", {c.stride, c.stride}),
                attr_ints("pads", {c.pad, c.pad, c.pad, c.pad}), attr_ints("dilations", {c.dilation, c.dilation}),
                attr_ints("kernel_shape", {c.w[2], c.w[3]})},
               gemm_atol(k), 1e-5, 11);
  }
}

/// Ops and paths beyond the CUDA suite's list: Max/Min, ReduceMax, the tiled implicit-GEMM
/// convolution (>= 16 output channels per group, grouped too), 1-D convolution (Silero VAD),
/// ConvTranspose (PP-OCR det), and pooling over 1-D inputs.
TEST(VulkanOps, MoreOpsAndConvPaths) {
  TSR_REQUIRE_VULKAN();
  uint32_t seed = 1100;
  for (const char* op : {"Max", "Min"})
    for (const auto& [a, b] : std::vector<std::pair<Shape, Shape>>{{{3, 5, 7}, {7}}, {{2, 1, 4}, {3, 1}}, {{1}, {1}}})
      check_node(op, {feed(random_tensor(a, seed++)), feed(random_tensor(b, seed++))}, {}, 0, 0, 13);
  for (const std::vector<int64_t>& axes : std::vector<std::vector<int64_t>>{{3}, {1, 2}, {0}})
    check_node("ReduceMax", {feed(random_tensor({2, 3, 40, 7}, seed++))}, {attr_ints("axes", axes), attr_i("keepdims", 1)}, 0,
               0, 13);

  struct Case {
    Shape x, w;
    int64_t group, stride, pad, dilation;
    bool bias;
  };
  const std::vector<Case> convs = {
      {{1, 64, 28, 28}, {128, 64, 3, 3}, 1, 1, 1, 1, true},  {{2, 32, 13, 11}, {64, 16, 3, 3}, 2, 2, 1, 1, true},
      {{1, 96, 20, 20}, {24, 96, 1, 1}, 1, 1, 0, 1, false},  {{1, 3, 65, 67}, {17, 3, 3, 3}, 1, 1, 1, 2, true},
      {{1, 40, 9, 9}, {40, 1, 5, 5}, 40, 2, 2, 1, true},     {{3, 16, 5, 70}, {33, 16, 1, 1}, 1, 1, 0, 1, true}};
  for (const Case& c : convs) {
    std::vector<TestInput> in = {feed(random_tensor(c.x, seed++)), constant(random_tensor(c.w, seed++))};
    if (c.bias) in.push_back(constant(random_tensor({c.w[0]}, seed++)));
    const int64_t k = c.w[1] * c.w[2] * c.w[3];
    check_node("Conv", in,
               {attr_i("group", c.group), attr_ints("strides", {c.stride, c.stride}),
                attr_ints("pads", {c.pad, c.pad, c.pad, c.pad}), attr_ints("dilations", {c.dilation, c.dilation})},
               gemm_atol(k), 1e-5, 11);
  }
  // 1-D: [N, C, L] (Silero VAD's STFT and encoder convolutions).
  check_node("Conv", {feed(random_tensor({1, 1, 576}, seed++)), constant(random_tensor({258, 1, 256}, seed++))},
             {attr_ints("strides", {128})}, gemm_atol(256), 1e-5, 11);
  check_node("Conv", {feed(random_tensor({2, 129, 4}, seed++)), constant(random_tensor({128, 129, 3}, seed++)),
                      constant(random_tensor({128}, seed++))},
             {attr_ints("pads", {1, 1})}, gemm_atol(129 * 3), 1e-5, 11);

  // ConvTranspose: PP-OCR det's 2x2 stride-2 upsampling, and odd geometry with groups.
  check_node("ConvTranspose", {feed(random_tensor({1, 24, 10, 12}, seed++)), constant(random_tensor({24, 6, 2, 2}, seed++)),
                               constant(random_tensor({6}, seed++))},
             {attr_ints("strides", {2, 2})}, gemm_atol(24 * 4), 1e-5, 11);
  check_node("ConvTranspose", {feed(random_tensor({2, 4, 5, 7}, seed++)), constant(random_tensor({4, 3, 3, 3}, seed++))},
             {attr_i("group", 2), attr_ints("strides", {2, 3}), attr_ints("pads", {1, 0, 1, 2}),
              attr_ints("output_padding", {1, 0})},
             gemm_atol(2 * 9), 1e-5, 11);
  check_node("ConvTranspose", {feed(random_tensor({1, 3, 9}, seed++)), constant(random_tensor({3, 2, 4}, seed++))},
             {attr_ints("strides", {2}), attr_ints("dilations", {2})}, gemm_atol(12), 1e-5, 11);

  check_node("MaxPool", {feed(random_tensor({2, 3, 17}, seed++))}, {attr_ints("kernel_shape", {3}), attr_ints("strides", {2})},
             0, 0, 12);
  check_node("AveragePool", {feed(random_tensor({1, 8, 6, 40}, seed++))},
             {attr_ints("kernel_shape", {2, 2}), attr_ints("strides", {2, 2})}, 1e-6, 1e-6, 11);
}

TEST(VulkanOps, ShapeOpsAreDeviceCopies) {
  TSR_REQUIRE_VULKAN();
  check_shape_ops_are_device_copies();
}

TEST(VulkanOps, UnsupportedDtypesFallBackToTheCpu) {
  TSR_REQUIRE_VULKAN();
  check_unsupported_dtypes_fall_back_to_the_cpu();
}

TEST(VulkanGraph, CpuFallbackInTheMiddle) {
  TSR_REQUIRE_VULKAN();
  check_cpu_fallback_in_the_middle();
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {
using namespace vulkan_testing;

/// The backend's own memory path: allocate, upload at offsets, download, across the
/// staging buffer's size (chunked copies) and after a free (reused memory).
TEST(VulkanBackend, CopiesRoundTrip) {
  TSR_REQUIRE_VULKAN();
  if (dry_run_on_cpu()) GTEST_SKIP() << "no device memory in the dry run";
  auto b = make_backend("vulkan");
  ASSERT_TRUE(b.is_ok()) << b.status().to_string();
  Backend& be = *b.value();
  for (uint64_t bytes : {uint64_t{4}, uint64_t{3612}, uint64_t{1} << 20, (uint64_t{9} << 20) + 12, uint64_t{70} << 20}) {
    auto mem = be.allocate(bytes + 512);
    ASSERT_TRUE(mem.is_ok()) << mem.status().to_string();
    std::vector<uint8_t> src(bytes), dst(bytes, 0);
    for (uint64_t i = 0; i < bytes; ++i) src[i] = static_cast<uint8_t>(i * 7 + (i >> 8));
    uint8_t* d = static_cast<uint8_t*>(mem.value()) + 256;
    ASSERT_TRUE(be.copy_to_device(d, src.data(), bytes).is_ok());
    ASSERT_TRUE(be.copy_to_host(dst.data(), d, bytes).is_ok());
    EXPECT_TRUE(src == dst) << bytes << " bytes";
    be.deallocate(mem.value());
  }
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {
using namespace vulkan_testing;

/// A small graph built value by value for the fusion tests.
struct GraphBuilder {
  std::shared_ptr<Model> m = std::make_shared<Model>();
  int input(const std::string& name, const Shape& shape) {
    Value v;
    v.name = name;
    v.dtype = DType::kFloat32;
    v.has_shape = true;
    for (int64_t d : shape) v.shape.push_back(Dim{d, ""});
    int id = m->graph.add_value(v);
    m->graph.inputs.push_back(id);
    return id;
  }
  int constant(const std::string& name, Tensor t) {
    Value v;
    v.name = name;
    v.dtype = t.dtype();
    v.initializer = std::make_shared<const Tensor>(std::move(t));
    return m->graph.add_value(v);
  }
  int node(const std::string& op, std::vector<int> ins, std::vector<Attribute> attrs = {}, int opset = 17) {
    Value v;
    v.name = op + "_out" + std::to_string(m->graph.nodes.size());
    int out = m->graph.add_value(v);
    Node n;
    n.name = op + std::to_string(m->graph.nodes.size());
    n.op_type = op;
    n.opset = opset;
    n.inputs = std::move(ins);
    n.outputs = {out};
    n.attributes = std::move(attrs);
    m->graph.nodes.push_back(std::move(n));
    return out;
  }
};

/// Conv/MatMul/Gemm with a fused tail (bias Add, residual Add, activation): one kernel on
/// Vulkan (the placement names the fused nodes), the same numbers as the CPU.
TEST(VulkanGraph, FusedEpilogues) {
  TSR_REQUIRE_VULKAN();
  uint32_t seed = 1300;
  // Conv -> Add(residual) -> Relu, as a ResNet block ends.
  {
    GraphBuilder g;
    int x = g.input("x", {1, 16, 9, 11});
    int r = g.input("r", {1, 16, 9, 11});
    int w = g.constant("w", random_tensor({16, 16, 3, 3}, seed++));
    int b = g.constant("b", random_tensor({16}, seed++));
    int c = g.node("Conv", {x, w, b}, {attr_ints("pads", {1, 1, 1, 1})}, 11);
    int a = g.node("Add", {c, r});
    int y = g.node("Relu", {a});
    g.m->graph.outputs.push_back(y);
    std::vector<std::pair<std::string, Tensor>> feeds = {{"x", random_tensor({1, 16, 9, 11}, seed++)},
                                                         {"r", random_tensor({1, 16, 9, 11}, seed++)}};
    auto cpu = run_on(g.m, "cpu", feeds);
    ASSERT_TRUE(cpu.is_ok()) << cpu.status().to_string();
    std::vector<std::string> placements;
    auto vk = run_on(g.m, "vulkan", feeds, &placements);
    ASSERT_TRUE(vk.is_ok()) << vk.status().to_string();
    std::string all;
    for (const auto& p : placements) all += p + "\n";
    if (!dry_run_on_cpu()) {
      EXPECT_NE(all.find("+ Relu node 'Relu2' -> vulkan"), std::string::npos) << all;
    }
    expect_close(vk.value()[0], cpu.value()[0], gemm_atol(16 * 9), 1e-5, "Conv+Add+Relu");
  }
  // MatMul -> Add(bias [N]) -> Gelu, and Gemm -> Clip (ReLU6), as in BERT and MobileNet.
  for (const char* act : {"Gelu", "Clip", "Sigmoid", "HardSwish"}) {
    GraphBuilder g;
    int x = g.input("x", {2, 7, 33});
    int w = g.constant("w", random_tensor({33, 20}, seed++));
    int bias = g.constant("bias", random_tensor({20}, seed++));
    int mm = g.node("MatMul", {x, w});
    int a = g.node("Add", {mm, bias});
    int y;
    if (std::string(act) == "Clip")
      y = g.node("Clip", {a, g.constant("lo", float_tensor({}, {0.f})), g.constant("hi", float_tensor({}, {6.f}))});
    else
      y = g.node(act, {a}, {}, 20);
    g.m->graph.outputs.push_back(y);
    std::vector<std::pair<std::string, Tensor>> feeds = {{"x", random_tensor({2, 7, 33}, seed++)}};
    auto cpu = run_on(g.m, "cpu", feeds);
    ASSERT_TRUE(cpu.is_ok()) << cpu.status().to_string();
    std::vector<std::string> placements;
    auto vk = run_on(g.m, "vulkan", feeds, &placements);
    ASSERT_TRUE(vk.is_ok()) << vk.status().to_string();
    std::string all;
    for (const auto& p : placements) all += p + "\n";
    if (!dry_run_on_cpu()) {
      EXPECT_NE(all.find(std::string("+ ") + act + " node"), std::string::npos) << act << " not fused:\n" << all;
    }
    for (const auto& p : placements) {  // every node on Vulkan (the copies of the input and output aside)
      if (!dry_run_on_cpu() && p.find(" node ") != std::string::npos) {
        EXPECT_NE(p.find("-> vulkan"), std::string::npos) << p;
      }
    }
    expect_close(vk.value()[0], cpu.value()[0], gemm_atol(33), 1e-5, std::string("MatMul+Add+") + act);
  }
}

}  // namespace
}  // namespace tessera
