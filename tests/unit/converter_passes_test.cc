// The converter's graph passes (converter/passes.cc) that rewrite what models compute:
// Conv + constant Mul/Div/Add/Sub folding and the decomposed-HardSwish fusion. Each case
// builds a small graph, runs optimize_model on a copy, checks which nodes remain, and
// compares the optimized model's output with the original's on random inputs (both run
// by the reference-backed CPU backend with fusion off, so only the passes differ).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "converter/converter.h"
#include "tessera/session.h"

namespace tessera {
namespace {

Value val(const std::string& name, DType dt = DType::kUndefined) {
  Value v;
  v.name = name;
  v.dtype = dt;
  return v;
}

Tensor filled(const Shape& s, std::mt19937& rng, float lo = -1.f, float hi = 1.f) {
  Tensor t = Tensor::allocate(DType::kFloat32, s).value();
  std::uniform_real_distribution<float> d(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = d(rng);
  return t;
}

Tensor scalar(float v) {
  Tensor t = Tensor::allocate(DType::kFloat32, {}).value();
  t.data_as<float>()[0] = v;
  return t;
}

int add_const(Graph& g, const std::string& name, Tensor t) {
  Value v = val(name, DType::kFloat32);
  v.initializer = std::make_shared<const Tensor>(std::move(t));
  return g.add_value(std::move(v));
}

void add_node(Graph& g, const std::string& op, std::vector<int> ins, int out, int opset = 13) {
  Node n;
  n.name = op + "_" + std::to_string(g.nodes.size());
  n.op_type = op;
  n.opset = opset;
  n.inputs = std::move(ins);
  n.outputs = {out};
  g.nodes.push_back(std::move(n));
}

std::vector<std::string> ops(const Graph& g) {
  std::vector<std::string> v;
  for (const Node& n : g.nodes) v.push_back(n.op_type);
  return v;
}

Tensor run_model(const Model& m, const Tensor& x) {
  SessionOptions o;
  o.fusion = false;
  o.threads = 1;
  auto s = Session::create(std::make_shared<Model>(m), o);
  EXPECT_TRUE(s.is_ok()) << s.status().to_string();
  auto out = s.value()->run({{"x", x}});
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  return std::move(out.value()[0]);
}

void expect_same_outputs(const Model& a, const Model& b, const Tensor& x, float tol) {
  Tensor ya = run_model(a, x), yb = run_model(b, x);
  ASSERT_EQ(ya.shape(), yb.shape());
  for (int64_t i = 0; i < ya.numel(); ++i)
    ASSERT_NEAR(ya.data_as<float>()[i], yb.data_as<float>()[i], tol * (1.f + std::fabs(ya.data_as<float>()[i]))) << i;
}

/// x [1, 3, 8, 8] -> Conv(W [6, 3, 3, 3], B?) -> tail... -> y
Model conv_model(bool bias, std::mt19937& rng, int* conv_out) {
  Model m;
  m.meta.opset_imports = {{"", 17}};
  Graph& g = m.graph;
  const int x = g.add_value(val("x", DType::kFloat32));
  g.values[x].has_shape = true;
  g.values[x].shape = {{1, ""}, {3, ""}, {8, ""}, {8, ""}};
  g.inputs.push_back(x);
  std::vector<int> ins = {x, add_const(g, "W", filled({6, 3, 3, 3}, rng))};
  if (bias) ins.push_back(add_const(g, "B", filled({6}, rng)));
  *conv_out = g.add_value(val("c"));
  add_node(g, "Conv", ins, *conv_out);
  return m;
}

TEST(ConverterPasses, ConvFoldsConstantMulAddSubDivPerChannelAndScalar) {
  std::mt19937 rng(3);
  for (bool bias : {false, true}) {
    int cur = -1;
    Model m = conv_model(bias, rng, &cur);
    Graph& g = m.graph;
    const int a = g.add_value(val("a")), b = g.add_value(val("b")), c = g.add_value(val("c2")), d = g.add_value(val("y"));
    add_node(g, "Mul", {add_const(g, "s", scalar(1.5f)), cur}, a);                    // scalar, conv second
    add_node(g, "Add", {a, add_const(g, "t", filled({1, 6, 1, 1}, rng))}, b);         // per channel
    add_node(g, "Sub", {b, add_const(g, "u", filled({6, 1, 1}, rng))}, c);            // per channel, rank 3
    add_node(g, "Div", {c, add_const(g, "v", filled({1, 6, 1, 1}, rng, 0.5f, 2.f))}, d);
    g.outputs.push_back(d);
    Model opt = m;
    ConvertReport rep;
    ASSERT_TRUE(optimize_model(opt, ConvertOptions{}, &rep).is_ok());
    EXPECT_EQ(ops(opt.graph), std::vector<std::string>{"Conv"});
    EXPECT_EQ(rep.conv_affine_folded, 4);
    expect_same_outputs(m, opt, filled({1, 3, 8, 8}, rng), 1e-5f);
  }
}

TEST(ConverterPasses, ConvAffineFoldingLeavesWhatItCannotFold) {
  std::mt19937 rng(4);
  int cur = -1;
  Model m = conv_model(true, rng, &cur);
  Graph& g = m.graph;
  // A constant of shape [6] broadcasts along W, not the channels; constant - conv has the
  // Conv second; the Conv output read twice cannot be folded into either reader.
  const int a = g.add_value(val("a")), b = g.add_value(val("b")), c = g.add_value(val("y")), e = g.add_value(val("y2"));
  add_node(g, "Add", {cur, add_const(g, "row", filled({8}, rng))}, a);
  add_node(g, "Sub", {add_const(g, "k", scalar(2.f)), a}, b);
  add_node(g, "Mul", {b, b}, c);
  add_node(g, "Relu", {b}, e);
  g.outputs = {c, e};
  Model opt = m;
  ConvertReport rep;
  ASSERT_TRUE(optimize_model(opt, ConvertOptions{}, &rep).is_ok());
  EXPECT_EQ(rep.conv_affine_folded, 0);
  EXPECT_EQ(ops(opt.graph), (std::vector<std::string>{"Conv", "Add", "Sub", "Mul", "Relu"}));
}

/// x -> [Add 3 -> Clip 0..6 -> Mul x -> Div 6] in its exported variants -> y = HardSwish(x).
TEST(ConverterPasses, DecomposedHardSwishBecomesHardSwish) {
  std::mt19937 rng(5);
  for (int variant = 0; variant < 3; ++variant) {
    int cur = -1;
    Model m = conv_model(true, rng, &cur);
    Graph& g = m.graph;
    const int t = g.add_value(val("t")), r = g.add_value(val("r")), p = g.add_value(val("p")), y = g.add_value(val("y"));
    add_node(g, "Add", {cur, add_const(g, "three", scalar(3.f))}, t);
    add_node(g, "Clip", {t, add_const(g, "zero", scalar(0.f)), add_const(g, "six", scalar(6.f))}, r);
    if (variant == 0) {  // (x * relu6) / 6
      add_node(g, "Mul", {cur, r}, p);
      add_node(g, "Div", {p, add_const(g, "six2", scalar(6.f))}, y);
    } else if (variant == 1) {  // (relu6 * x) * (1/6)
      add_node(g, "Mul", {r, cur}, p);
      add_node(g, "Mul", {add_const(g, "sixth", scalar(1.f / 6.f)), p}, y);
    } else {  // x * (relu6 / 6)
      add_node(g, "Div", {r, add_const(g, "six2", scalar(6.f))}, p);
      add_node(g, "Mul", {cur, p}, y);
    }
    g.outputs.push_back(y);
    Model opt = m;
    ConvertReport rep;
    ASSERT_TRUE(optimize_model(opt, ConvertOptions{}, &rep).is_ok());
    EXPECT_EQ(rep.hardswish_fused, 1) << "variant " << variant;
    EXPECT_EQ(ops(opt.graph), (std::vector<std::string>{"Conv", "HardSwish"})) << "variant " << variant;
    // x * clip(x + 3, 0, 6) / 6 and x * clip(x / 6 + 1/2, 0, 1) differ by rounding only.
    expect_same_outputs(m, opt, filled({1, 3, 8, 8}, rng, -4.f, 4.f), 1e-6f);
  }
}

TEST(ConverterPasses, HardSwishPatternWithOtherConstantsIsLeftAlone) {
  std::mt19937 rng(6);
  int cur = -1;
  Model m = conv_model(true, rng, &cur);
  Graph& g = m.graph;
  const int t = g.add_value(val("t")), r = g.add_value(val("r")), p = g.add_value(val("p")), y = g.add_value(val("y"));
  add_node(g, "Add", {cur, add_const(g, "three", scalar(3.f))}, t);
  add_node(g, "Clip", {t, add_const(g, "zero", scalar(0.f)), add_const(g, "five", scalar(5.f))}, r);  // not 6
  add_node(g, "Mul", {cur, r}, p);
  add_node(g, "Div", {p, add_const(g, "six", scalar(6.f))}, y);
  g.outputs.push_back(y);
  Model opt = m;
  ConvertReport rep;
  ASSERT_TRUE(optimize_model(opt, ConvertOptions{}, &rep).is_ok());
  EXPECT_EQ(rep.hardswish_fused, 0);
  EXPECT_EQ(opt.graph.nodes.size(), 5u);
}

/// x -> [Mul 1/sqrt(2) or Div sqrt(2) -> Erf -> Add 1 -> Mul x -> Mul 0.5] in the groupings
/// exporters write -> y = Gelu(x).
TEST(ConverterPasses, DecomposedGeluBecomesGelu) {
  std::mt19937 rng(7);
  for (int variant = 0; variant < 3; ++variant) {
    int cur = -1;
    Model m = conv_model(true, rng, &cur);
    Graph& g = m.graph;
    const int d = g.add_value(val("d")), e = g.add_value(val("e")), s1 = g.add_value(val("s")), p = g.add_value(val("p")),
              y = g.add_value(val("y"));
    if (variant == 1) add_node(g, "Div", {cur, add_const(g, "sqrt2", scalar(1.41421356f))}, d);
    else add_node(g, "Mul", {add_const(g, "isqrt2", scalar(0.70710678f)), cur}, d);
    add_node(g, "Erf", {d}, e);
    add_node(g, "Add", {variant == 2 ? add_const(g, "one", scalar(1.f)) : e, variant == 2 ? e : add_const(g, "one", scalar(1.f))}, s1);
    if (variant == 0) {  // (x * 0.5) * s
      add_node(g, "Mul", {cur, add_const(g, "half", scalar(0.5f))}, p);
      add_node(g, "Mul", {p, s1}, y);
    } else if (variant == 1) {  // (s * x) * 0.5
      add_node(g, "Mul", {s1, cur}, p);
      add_node(g, "Mul", {p, add_const(g, "half", scalar(0.5f))}, y);
    } else {  // x * (s * 0.5)
      add_node(g, "Mul", {add_const(g, "half", scalar(0.5f)), s1}, p);
      add_node(g, "Mul", {cur, p}, y);
    }
    g.outputs.push_back(y);
    Model opt = m;
    ConvertReport rep;
    ASSERT_TRUE(optimize_model(opt, ConvertOptions{}, &rep).is_ok());
    EXPECT_EQ(rep.gelu_fused, 1) << "variant " << variant;
    EXPECT_EQ(ops(opt.graph), (std::vector<std::string>{"Conv", "Gelu"})) << "variant " << variant;
    expect_same_outputs(m, opt, filled({1, 3, 8, 8}, rng, -4.f, 4.f), 1e-6f);
  }
}

TEST(ConverterPasses, GeluPatternWithOtherConstantsOrReadersIsLeftAlone) {
  std::mt19937 rng(8);
  for (int variant = 0; variant < 2; ++variant) {
    int cur = -1;
    Model m = conv_model(true, rng, &cur);
    Graph& g = m.graph;
    const int d = g.add_value(val("d")), e = g.add_value(val("e")), s1 = g.add_value(val("s")), p = g.add_value(val("p")),
              y = g.add_value(val("y"));
    // variant 0: Erf(x / 2), not x / sqrt(2); variant 1: the Erf's output is also a graph output.
    add_node(g, "Div", {cur, add_const(g, "k", scalar(variant == 0 ? 2.f : 1.41421356f))}, d);
    add_node(g, "Erf", {d}, e);
    add_node(g, "Add", {e, add_const(g, "one", scalar(1.f))}, s1);
    add_node(g, "Mul", {cur, add_const(g, "half", scalar(0.5f))}, p);
    add_node(g, "Mul", {p, s1}, y);
    g.outputs.push_back(y);
    if (variant == 1) g.outputs.push_back(e);
    Model opt = m;
    ConvertReport rep;
    ASSERT_TRUE(optimize_model(opt, ConvertOptions{}, &rep).is_ok());
    EXPECT_EQ(rep.gelu_fused, 0) << "variant " << variant;
    EXPECT_EQ(opt.graph.nodes.size(), 6u) << "variant " << variant;
  }
}

/// A [1,1,...]-shaped "scalar" constant of higher rank than x broadcasts x up to its rank
/// (0.5 of shape [1,1,1,1,1] makes a [1,6,6,6] x [1,1,6,6,6]); the fused one-input op would
/// drop that, so such a pattern is left alone. Found by the helper-break tester: a Gelu or
/// HardSwish of x [50] with a [1,1,1] constant gave [50] where onnxruntime gives [1,1,50].
/// A constant of x's rank (known) or of rank <= 1 (x's rank unknown) still fuses.
TEST(ConverterPasses, GeluAndHardSwishWithRankRaisingConstantsAreLeftAlone) {
  std::mt19937 rng(9);
  for (int variant = 0; variant < 4; ++variant) {
    const bool gelu = variant < 2, raises = variant % 2 == 0;
    int cur = -1;
    Model m = conv_model(true, rng, &cur);
    Graph& g = m.graph;
    if (!raises) {  // x's rank known (4) and the constant of that rank: fuses
      g.values[cur].has_shape = true;
      g.values[cur].shape = {{1, ""}, {6, ""}, {6, ""}, {6, ""}};
    }
    auto k = [&](const char* name, float v) {
      Tensor t = Tensor::allocate(DType::kFloat32, raises ? Shape{1, 1, 1, 1, 1} : Shape{1, 1, 1, 1}).value();
      t.data_as<float>()[0] = v;
      return add_const(g, name, std::move(t));
    };
    const int y = g.add_value(val("y"));
    if (gelu) {
      const int d = g.add_value(val("d")), e = g.add_value(val("e")), s1 = g.add_value(val("s")), p = g.add_value(val("p"));
      add_node(g, "Div", {cur, add_const(g, "sqrt2", scalar(1.41421356f))}, d);
      add_node(g, "Erf", {d}, e);
      add_node(g, "Add", {e, add_const(g, "one", scalar(1.f))}, s1);
      add_node(g, "Mul", {cur, k("half", 0.5f)}, p);
      add_node(g, "Mul", {p, s1}, y);
    } else {
      const int a = g.add_value(val("a")), c = g.add_value(val("c2")), p = g.add_value(val("p"));
      add_node(g, "Add", {cur, add_const(g, "three", scalar(3.f))}, a);
      add_node(g, "Clip", {a, add_const(g, "lo", scalar(0.f)), add_const(g, "hi", scalar(6.f))}, c);
      add_node(g, "Mul", {cur, c}, p);
      add_node(g, "Div", {p, k("six", 6.f)}, y);
    }
    g.outputs.push_back(y);
    Model opt = m;
    ConvertReport rep;
    ASSERT_TRUE(optimize_model(opt, ConvertOptions{}, &rep).is_ok());
    EXPECT_EQ(gelu ? rep.gelu_fused : rep.hardswish_fused, raises ? 0 : 1) << "variant " << variant;
    expect_same_outputs(m, opt, filled({1, 3, 8, 8}, rng, -4.f, 4.f), 1e-6f);
  }
}

}  // namespace
}  // namespace tessera
