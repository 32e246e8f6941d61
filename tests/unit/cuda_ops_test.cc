// Every CUDA kernel against the CPU reference on random inputs: odd sizes, size 1,
// broadcasting, several attribute settings. Each check also asserts that the node really
// ran on CUDA (its placement), so a silent CPU fallback cannot pass. Tolerances: elementwise
// and row ops compute in double like the reference (1e-6 relative); MatMul / Gemm / Conv
// accumulate in float (cuBLAS / cuDNN, TF32 off): 1e-5 relative plus 1e-5 * sqrt(K) absolute
// for K products of inputs in [-2, 2].
// Without a CUDA device every test skips ("no CUDA device: ...").
#include <cmath>

#include "tests/unit/cuda_test_util.h"

namespace tessera {
namespace {

using namespace cuda_testing;

double gemm_atol(int64_t k) { return 1e-5 * std::sqrt(static_cast<double>(k)) * 4; }

TEST(CudaOps, BinaryWithBroadcast) {
  TSR_REQUIRE_CUDA();
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{3, 5, 7}, {3, 5, 7}}, {{3, 5, 7}, {7}}, {{3, 1, 7}, {5, 1}}, {{2, 3, 4, 5}, {3, 1, 1}}, {{1}, {4, 9}},
      {{}, {6}},              {{1, 1}, {1}},    {{1000003}, {1}},
      // Same shapes with n % 4 == 0: the 16-byte vector path.
      {{2, 6, 8}, {2, 6, 8}}, {{1000004}, {1000004}}};
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

TEST(CudaOps, UnaryAndActivations) {
  TSR_REQUIRE_CUDA();
  uint32_t seed = 100;
  // {4, 33}: n % 4 == 0, the 16-byte vector path.
  for (const Shape& s : std::vector<Shape>{{7, 129}, {1}, {2, 3, 17}, {4, 33}}) {
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

TEST(CudaOps, SoftmaxAndLogSoftmax) {
  TSR_REQUIRE_CUDA();
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

TEST(CudaOps, LayerNormalization) {
  TSR_REQUIRE_CUDA();
  uint32_t seed = 300;
  for (const Shape& s : std::vector<Shape>{{4, 7, 768}, {3, 5}, {1, 1}, {2, 3, 1001}}) {
    const int64_t last = s.back();
    check_node("LayerNormalization", {feed(random_tensor(s, seed++)), constant(random_tensor({last}, seed++)),
                                      constant(random_tensor({last}, seed++))},
               {attr_i("axis", -1), attr_f("epsilon", 1e-5f)}, 1e-5, 1e-5);
    check_node("LayerNormalization", {feed(random_tensor(s, seed++)), constant(random_tensor({last}, seed++))},
               {attr_i("axis", -1), attr_f("epsilon", 1e-12f)}, 1e-5, 1e-5);
  }
  // Over the last two axes, with the Mean and InvStdDev outputs.
  check_node("LayerNormalization", {feed(random_tensor({2, 3, 4, 5}, 390)), constant(random_tensor({4, 5}, 391)),
                                    constant(random_tensor({4, 5}, 392))},
             {attr_i("axis", 2)}, 1e-5, 1e-5, 17, 3);
}

TEST(CudaOps, ReduceMeanSumAndGlobalAveragePool) {
  TSR_REQUIRE_CUDA();
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

TEST(CudaOps, TransposeSliceExpandConcatSplitGather) {
  TSR_REQUIRE_CUDA();
  uint32_t seed = 500;
  for (const std::vector<int64_t>& perm : std::vector<std::vector<int64_t>>{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}})
    check_node("Transpose", {feed(random_tensor({5, 33, 65}, seed++))}, {attr_ints("perm", perm)}, 0, 0);
  check_node("Transpose", {feed(random_tensor({1, 128, 12, 64}, seed++))}, {attr_ints("perm", {0, 2, 1, 3})}, 0, 0);
  check_node("Transpose", {feed(random_tensor({1, 128, 12, 64}, seed++))}, {attr_ints("perm", {0, 2, 3, 1})}, 0, 0);
  // The last axis kept last: moved in 16-byte units when its row is a multiple of 16 bytes.
  check_node("Transpose", {feed(random_tensor({3, 5, 7, 4}, seed++))}, {attr_ints("perm", {2, 0, 1, 3})}, 0, 0);
  check_node("Transpose", {feed(random_tensor({3, 5, 7, 6}, seed++))}, {attr_ints("perm", {1, 0, 2, 3})}, 0, 0);
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

  check_node("Gather", {feed(random_tensor({100, 16}, seed++)), feed(int64_tensor({2, 5}, {0, 99, -1, 5, 7, 7, 42, -100, 3, 1}))},
             {attr_i("axis", 0)}, 0, 0, 13);
  check_node("Gather", {feed(random_tensor({3, 10, 4}, seed++)), constant(int64_tensor({3}, {9, 0, -2}))}, {attr_i("axis", 1)},
             0, 0, 13);
}

TEST(CudaOps, GatherOutOfRangeIsAnErrorNotACrash) {
  TSR_REQUIRE_CUDA();
  auto model = one_node_model("Gather", {feed(random_tensor({4, 3}, 1)), feed(int64_tensor({2}, {1, 4}))}, {attr_i("axis", 0)}, 13, 1);
  auto r = run_on(model, "cuda", {{"in0", random_tensor({4, 3}, 1)}, {"in1", int64_tensor({2}, {1, 4})}});
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("out of range"), std::string::npos) << r.status().to_string();
}

TEST(CudaOps, PoolingBatchNormResize) {
  TSR_REQUIRE_CUDA();
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
  for (const char* coord : {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"}) {
    check_node("Resize", {feed(img), omitted(), omitted(), sizes},
               {attr_s("mode", "linear"), attr_s("coordinate_transformation_mode", coord)}, 1e-6, 1e-6, 13);
    check_node("Resize", {feed(img), omitted(), scales},
               {attr_s("mode", "linear"), attr_s("coordinate_transformation_mode", coord)}, 1e-6, 1e-6, 13);
  }
  for (const char* nearest : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"})
    check_node("Resize", {feed(img), omitted(), omitted(), sizes},
               {attr_s("mode", "nearest"), attr_s("nearest_mode", nearest),
                attr_s("coordinate_transformation_mode", "asymmetric")}, 0, 0, 13);
  check_nearest_resize_ties_from_sizes(seed);
  check_node("Resize", {feed(img), omitted(), scales}, {attr_s("mode", "nearest")}, 0, 0, 13);
  check_node("Resize", {feed(img), omitted(), constant(float_tensor({4}, {1.f, 1.f, 0.5f, 0.5f}))}, {attr_s("mode", "linear")},
             1e-6, 1e-6, 13);
}

TEST(CudaOps, MatMulAndGemm) {
  TSR_REQUIRE_CUDA();
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

TEST(CudaOps, Conv) {
  TSR_REQUIRE_CUDA();
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

TEST(CudaOps, ShapeOpsAreDeviceCopies) {
  TSR_REQUIRE_CUDA();
  check_shape_ops_are_device_copies();
}

TEST(CudaOps, UnsupportedDtypesFallBackToTheCpu) {
  TSR_REQUIRE_CUDA();
  check_unsupported_dtypes_fall_back_to_the_cpu();
}

TEST(CudaGraph, CpuFallbackInTheMiddle) {
  TSR_REQUIRE_CUDA();
  check_cpu_fallback_in_the_middle();
}

/// A small graph of float nodes, built by name: inputs, constants, nodes (opset 13).
struct GraphBuilder {
  std::shared_ptr<Model> m = std::make_shared<Model>();
  int value(const std::string& name) {
    int id = m->graph.find_value(name);
    if (id >= 0) return id;
    Value v;
    v.name = name;
    return m->graph.add_value(v);
  }
  void input(const std::string& name, const Shape& shape) {
    Value v;
    v.name = name;
    v.dtype = DType::kFloat32;
    v.has_shape = true;
    for (int64_t d : shape) v.shape.push_back(Dim{d, ""});
    m->graph.inputs.push_back(m->graph.add_value(v));
  }
  void constant(const std::string& name, Tensor t) {
    Value v;
    v.name = name;
    v.dtype = t.dtype();
    v.initializer = std::make_shared<const Tensor>(std::move(t));
    m->graph.add_value(v);
  }
  void node(const std::string& op, const std::vector<std::string>& ins, const std::string& out,
            std::vector<Attribute> attrs = {}) {
    Node n;
    n.name = op + "_" + out;
    n.op_type = op;
    n.opset = 13;
    for (const auto& i : ins) n.inputs.push_back(value(i));
    n.outputs = {value(out)};
    n.attributes = std::move(attrs);
    m->graph.nodes.push_back(n);
  }
  void output(const std::string& name) { m->graph.outputs.push_back(value(name)); }
};

std::string joined(const std::vector<std::string>& lines) {
  std::string all;
  for (const auto& l : lines) all += l + "\n";
  return all;
}

/// Conv/MatMul/Gemm with the tails the planner fuses (bias, residual Add, activation): the
/// CUDA kernel applies them in one epilogue pass; the result matches the CPU's unfused nodes.
TEST(CudaFusion, ConvMatMulGemmTails) {
  TSR_REQUIRE_CUDA();
  GraphBuilder b;
  b.input("x", {2, 8, 9, 9});
  b.input("a", {3, 5, 16});
  b.input("g", {7, 16});
  b.constant("w", random_tensor({8, 8, 3, 3}, 1100, -0.3f, 0.3f));
  b.constant("bias", random_tensor({8}, 1101));
  b.constant("w2", random_tensor({8, 8, 1, 1}, 1102));
  b.constant("wm", random_tensor({16, 24}, 1103, -0.5f, 0.5f));
  b.constant("bm", random_tensor({24}, 1104));
  b.constant("wg", random_tensor({16, 10}, 1105, -0.5f, 0.5f));
  b.constant("bg", random_tensor({10}, 1106));
  // Residual block: Conv(+B) -> Add(x) -> Relu; then a Conv without B -> HardSigmoid.
  b.node("Conv", {"x", "w", "bias"}, "c1", {attr_ints("pads", {1, 1, 1, 1})});
  b.node("Add", {"c1", "x"}, "s1");
  b.node("Relu", {"s1"}, "r1");
  b.node("Conv", {"r1", "w2"}, "c2");
  b.node("HardSigmoid", {"c2"}, "y1");
  // MatMul -> Add(bias) -> Tanh; Gemm(+C) -> LeakyRelu.
  b.node("MatMul", {"a", "wm"}, "mm");
  b.node("Add", {"mm", "bm"}, "mb");
  b.node("Tanh", {"mb"}, "y2");
  b.node("Gemm", {"g", "wg", "bg"}, "gm");
  b.node("LeakyRelu", {"gm"}, "y3", {attr_f("alpha", 0.2f)});
  b.output("y1");
  b.output("y2");
  b.output("y3");
  std::vector<std::pair<std::string, Tensor>> feeds = {
      {"x", random_tensor({2, 8, 9, 9}, 1107)}, {"a", random_tensor({3, 5, 16}, 1108)}, {"g", random_tensor({7, 16}, 1109)}};
  auto cpu = run_on(b.m, "cpu", feeds);
  ASSERT_TRUE(cpu.is_ok()) << cpu.status().to_string();
  std::vector<std::string> placements;
  auto gpu = run_on(b.m, "cuda", feeds, &placements);
  ASSERT_TRUE(gpu.is_ok()) << gpu.status().to_string();
  const std::string all = joined(placements);
  if (!dry_run_on_cpu()) {
    EXPECT_NE(all.find("Conv node 'Conv_c1' + Add node 'Add_s1' + Relu node 'Relu_r1' -> cuda"), std::string::npos) << all;
    EXPECT_NE(all.find("Conv node 'Conv_c2' + HardSigmoid node 'HardSigmoid_y1' -> cuda"), std::string::npos) << all;
    EXPECT_NE(all.find("MatMul node 'MatMul_mm' + Add node 'Add_mb' + Tanh node 'Tanh_y2' -> cuda"), std::string::npos) << all;
    EXPECT_NE(all.find("Gemm node 'Gemm_gm' + LeakyRelu node 'LeakyRelu_y3' -> cuda"), std::string::npos) << all;
  }
  ASSERT_EQ(gpu.value().size(), 3u);
  for (size_t k = 0; k < 3; ++k) expect_close(gpu.value()[k], cpu.value()[k], 1e-5, 1e-5, "fused output " + std::to_string(k));
}

/// One session run five times on new inputs: the first run goes step by step, the second is
/// captured into a CUDA graph, the later ones replay it. Every run must match the CPU on its
/// own input (a replay that kept the captured input would not).
TEST(CudaGraph, ReplayedRunsMatchTheCpu) {
  TSR_REQUIRE_CUDA();
  GraphBuilder b;
  b.input("x", {1, 6, 10, 10});
  b.constant("w", random_tensor({6, 6, 3, 3}, 1200, -0.3f, 0.3f));
  b.constant("bias", random_tensor({6}, 1201));
  b.constant("k", random_tensor({6, 1, 1}, 1202));
  b.node("Conv", {"x", "w", "bias"}, "c", {attr_ints("pads", {1, 1, 1, 1})});
  b.node("Relu", {"c"}, "r");
  b.node("Mul", {"r", "k"}, "m");
  b.node("Transpose", {"m"}, "t", {attr_ints("perm", {0, 2, 3, 1})});
  b.node("Softmax", {"t"}, "y", {attr_i("axis", -1)});
  b.output("y");
  SessionOptions co, go;
  co.backends = {"cpu"};
  go.backends = {dry_run_on_cpu() ? std::string("cpu") : std::string("cuda")};
  auto cpu = Session::create(b.m, co);
  auto gpu = Session::create(b.m, go);
  ASSERT_TRUE(cpu.is_ok() && gpu.is_ok());
  for (uint32_t run = 0; run < 5; ++run) {
    std::vector<std::pair<std::string, Tensor>> feeds = {{"x", random_tensor({1, 6, 10, 10}, 1210 + run)}};
    auto want = cpu.value()->run(feeds);
    auto got = gpu.value()->run(feeds);
    ASSERT_TRUE(want.is_ok()) << want.status().to_string();
    ASSERT_TRUE(got.is_ok()) << got.status().to_string();
    expect_close(got.value()[0], want.value()[0], 1e-6, 1e-5, "run " + std::to_string(run));
  }
}

}  // namespace
}  // namespace tessera
