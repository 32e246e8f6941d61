// Plan-time fusion (runtime/plan/planner.cc, PlanOptions::fuse): a Conv (or MatMul, Gemm)
// followed by a residual Add and/or an activation becomes one step whose kernel applies the
// tail (Epilogue), and the result equals the unfused plan's. Checked here: which nodes fuse
// (placements), which must not (an intermediate that is a graph output or read twice, an
// Add that broadcasts, an Add whose other operand is computed later), and the outputs of
// the fused and unfused plans on random inputs, for every fusable activation, on the GEMM
// (3x3 im2col, 1x1 pointwise), Winograd (3x3, AVX-512) and direct (depthwise) Conv paths,
// with 1 and 2 threads.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "backends/backend.h"
#include "backends/cpu/thread_pool.h"
#include "runtime/plan/plan.h"
#include "graph_test_util.h"

namespace tessera {
namespace {

using namespace graph_test;

Tensor random(const Shape& s, std::mt19937& rng) {
  Tensor t = Tensor::allocate(DType::kFloat32, s).value();
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = d(rng);
  return t;
}

int add_const(Graph& g, const std::string& name, Tensor t) {
  Value v = val(name, t.dtype());
  v.initializer = std::make_shared<const Tensor>(std::move(t));
  return g.add_value(std::move(v));
}

struct Built {
  Graph g;
  std::vector<Shape> shapes;
  std::vector<Tensor> inputs;
};

/// x [1, C, H, W] -> Conv(k x k, group) -> [Add(z)] -> [act] -> y, and z as a second input.
/// `act`: "", "Relu", "LeakyRelu", "Clip", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Gelu".
Built conv_graph(int64_t c, int64_t m, int64_t hw, int64_t k, int64_t group, bool add, const std::string& act,
                 std::mt19937& rng, bool conv_out_is_output = false, int64_t batch = 1) {
  Built b;
  Graph& g = b.g;
  const int x = g.add_value(val("x", DType::kFloat32));
  g.inputs.push_back(x);
  b.shapes.push_back({batch, c, hw, hw});
  b.inputs.push_back(random({batch, c, hw, hw}, rng));
  const int w = add_const(g, "w", random({m, c / group, k, k}, rng));
  const int bias = add_const(g, "b", random({m}, rng));
  const int y0 = g.add_value(val("conv_out"));
  Node conv = node("Conv", {x, w, bias}, {y0}, "conv");
  conv.attributes = {ints("pads", {k / 2, k / 2, k / 2, k / 2}), int1("group", group)};
  g.nodes.push_back(conv);
  int cur = y0;
  if (add) {
    const int z = g.add_value(val("z", DType::kFloat32));
    g.inputs.push_back(z);
    b.shapes.push_back({batch, m, hw, hw});
    b.inputs.push_back(random({batch, m, hw, hw}, rng));
    const int s = g.add_value(val("sum"));
    g.nodes.push_back(node("Add", {z, cur}, {s}, "add"));
    cur = s;
  }
  if (!act.empty()) {
    const int a = g.add_value(val("act_out"));
    std::vector<int> ins = {cur};
    if (act == "Clip") {
      Tensor lo = Tensor::allocate(DType::kFloat32, {}).value(), hi = Tensor::allocate(DType::kFloat32, {}).value();
      lo.data_as<float>()[0] = -0.25f;
      hi.data_as<float>()[0] = 0.5f;
      ins.push_back(add_const(g, "lo", lo));
      ins.push_back(add_const(g, "hi", hi));
    }
    Node n = node(act, ins, {a}, "act", act == "Gelu" ? 20 : 17);
    if (act == "LeakyRelu") {
      Attribute al;
      al.name = "alpha";
      al.type = AttrType::kFloat;
      al.f = 0.3f;
      n.attributes.push_back(al);
    }
    g.nodes.push_back(n);
    cur = a;
  }
  g.outputs.push_back(cur);
  if (conv_out_is_output && cur != y0) g.outputs.push_back(y0);
  return b;
}

struct Ran {
  std::vector<Tensor> outputs;
  std::vector<std::string> placements;
};

Ran run(const Built& b, bool fuse, int threads) {
  // The plain paths (NCHW16c: nchwc_test.cc).
  Planned got = plan_and_run(b.g, b.shapes, b.inputs, threads, fuse, /*nchwc=*/false);
  return Ran{std::move(got.outputs), std::move(got.placements)};
}

bool placement_has(const Ran& r, const std::string& text) {
  for (const std::string& p : r.placements)
    if (p.find(text) != std::string::npos) return true;
  return false;
}

void expect_close(const Ran& fused, const Ran& plain, const std::string& what) {
  ASSERT_EQ(fused.outputs.size(), plain.outputs.size()) << what;
  for (size_t o = 0; o < fused.outputs.size(); ++o) {
    const Tensor& a = fused.outputs[o];
    const Tensor& b = plain.outputs[o];
    ASSERT_EQ(a.shape(), b.shape()) << what;
    int bad = 0;
    for (int64_t i = 0; i < a.numel(); ++i) {
      const float x = a.data_as<float>()[i], y = b.data_as<float>()[i];
      // The same products in the same order; only the activation is evaluated in float
      // (fused) instead of double (reference): a few ulp.
      if (!(std::fabs(x - y) <= 1e-6f * (1.f + std::fabs(y))) && ++bad < 4)
        ADD_FAILURE() << what << " output " << o << " element " << i << ": fused " << x << " unfused " << y;
    }
  }
}

TEST(Fusion, ConvAddActivationEveryActivationEveryPath) {
  std::mt19937 rng(7);
  const char* acts[] = {"", "Relu", "LeakyRelu", "Clip", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Gelu"};
  struct Shape_ {
    int64_t c, m, hw, k, group, batch = 1;
  } shapes[] = {{5, 16, 9, 3, 1},  {8, 20, 7, 1, 1}, {12, 12, 11, 3, 12}, {6, 33, 5, 3, 3}, {8, 40, 4, 3, 1},
                {8, 40, 4, 3, 1, 5},  // narrow outputs, 5 images in one product
                {32, 64, 7, 3, 1},    // 49 positions: the transposed product tiles better
                {32, 64, 7, 3, 1, 2}, // ... with 2 images in one product
                {16, 24, 17, 3, 1},   // Winograd on AVX-512 (16+ channels, 16+ tiles)
                {6, 6, 37, 3, 6}};    // depthwise over three 16-column blocks
  for (const auto& sh : shapes)
    for (const char* act : acts)
      for (bool add : {false, true}) {
        if (!add && std::string(act).empty()) continue;
        Built b = conv_graph(sh.c, sh.m, sh.hw, sh.k, sh.group, add, act, rng, false, sh.batch);
        for (int threads : {1, 2}) {
          const std::string what = "N=" + std::to_string(sh.batch) + " C=" + std::to_string(sh.c) + " M=" + std::to_string(sh.m) + " k=" +
                                   std::to_string(sh.k) + " group=" + std::to_string(sh.group) + (add ? " +Add" : "") +
                                   " " + act + " threads=" + std::to_string(threads);
          Ran fused = run(b, true, threads), plain = run(b, false, threads);
          EXPECT_EQ(fused.placements.size(), 1u) << what << ": the tail should be fused into the Conv";
          if (add) {
            EXPECT_TRUE(placement_has(fused, "+ Add node 'add'")) << what;
          }
          if (!std::string(act).empty()) {
            EXPECT_TRUE(placement_has(fused, "node 'act'")) << what;
          }
          EXPECT_EQ(plain.placements.size(), 1u + (add ? 1 : 0) + (std::string(act).empty() ? 0 : 1)) << what;
          expect_close(fused, plain, what);
        }
      }
}

TEST(Fusion, IntermediateThatIsAGraphOutputIsNotFused) {
  std::mt19937 rng(8);
  Built b = conv_graph(4, 8, 6, 3, 1, true, "Relu", rng, /*conv_out_is_output=*/true);
  Ran fused = run(b, true, 1), plain = run(b, false, 1);
  // The Conv output is needed as is: Add and Relu stay their own steps (Add+Relu cannot fuse
  // onto anything else).
  EXPECT_EQ(fused.placements.size(), 3u);
  expect_close(fused, plain, "conv output also a graph output");
}

TEST(Fusion, IntermediateReadTwiceIsNotFused) {
  std::mt19937 rng(9);
  Built b = conv_graph(4, 8, 6, 3, 1, false, "Relu", rng);
  // A second reader of the Conv output: y2 = Sigmoid(conv_out).
  const int y0 = b.g.find_value("conv_out");
  const int y2 = b.g.add_value(val("y2"));
  b.g.nodes.push_back(node("Sigmoid", {y0}, {y2}, "second_reader"));
  b.g.outputs.push_back(y2);
  Ran fused = run(b, true, 1), plain = run(b, false, 1);
  EXPECT_EQ(fused.placements.size(), 3u);
  expect_close(fused, plain, "conv output read twice");
}

TEST(Fusion, BroadcastingAddIsNotFusedButTheActivationAfterItStillRuns) {
  // conv_out + z where z is [1, M, 1, 1]: not an addend of the output's shape.
  std::mt19937 rng(10);
  Built b = conv_graph(4, 8, 6, 3, 1, true, "Relu", rng);
  b.shapes[1] = {1, 8, 1, 1};
  b.inputs[1] = random({1, 8, 1, 1}, rng);
  Ran fused = run(b, true, 1), plain = run(b, false, 1);
  EXPECT_FALSE(placement_has(fused, "+ Add"));
  expect_close(fused, plain, "broadcasting Add");
}

TEST(Fusion, AddWhoseOtherOperandComesLaterFusesTheOtherWay) {
  // a = Conv1(x); b = Conv2(x); s = Add(a, b); y = Relu(s): when Conv1 is planned, b does
  // not exist yet, so Conv2 takes the Add (with a as its addend) and the Relu.
  std::mt19937 rng(11);
  Graph g;
  const int x = g.add_value(val("x", DType::kFloat32));
  g.inputs.push_back(x);
  const int w1 = add_const(g, "w1", random({6, 3, 3, 3}, rng)), w2 = add_const(g, "w2", random({6, 3, 1, 1}, rng));
  const int a = g.add_value(val("a")), bb = g.add_value(val("b")), s = g.add_value(val("s")), y = g.add_value(val("y"));
  Node c1 = node("Conv", {x, w1}, {a}, "conv1");
  c1.attributes = {ints("pads", {1, 1, 1, 1})};
  g.nodes.push_back(c1);
  g.nodes.push_back(node("Conv", {x, w2}, {bb}, "conv2"));
  g.nodes.push_back(node("Add", {a, bb}, {s}, "add"));
  g.nodes.push_back(node("Relu", {s}, {y}, "relu"));
  g.outputs.push_back(y);
  Built b;
  b.g = g;
  b.shapes = {{2, 3, 8, 8}};
  b.inputs.push_back(random({2, 3, 8, 8}, rng));
  Ran fused = run(b, true, 2), plain = run(b, false, 2);
  ASSERT_EQ(fused.placements.size(), 2u) << fused.placements[0] << " / " << fused.placements[1];
  EXPECT_NE(fused.placements[1].find("Conv node 'conv2' + Add node 'add' + Relu node 'relu'"), std::string::npos)
      << fused.placements[1];
  expect_close(fused, plain, "two convs and an add");
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

/// x [b, s, k] -> MatMul(W [k, n]) -> Add(bias [n]) -> Add(r [b, s, n]) -> act -> y.
Built matmul_graph(int64_t b, int64_t s, int64_t k, int64_t n, bool bias_first, const std::string& act, std::mt19937& rng,
                   bool gemm = false) {
  Built out;
  Graph& g = out.g;
  const int x = g.add_value(val("x", DType::kFloat32));
  g.inputs.push_back(x);
  const Shape xs = gemm ? Shape{s, k} : Shape{b, s, k};
  const Shape ys = gemm ? Shape{s, n} : Shape{b, s, n};
  out.shapes.push_back(xs);
  out.inputs.push_back(random(xs, rng));
  const int w = add_const(g, "w", random({k, n}, rng));
  const int bias = add_const(g, "bias", random({n}, rng));
  const int r = g.add_value(val("r", DType::kFloat32));
  g.inputs.push_back(r);
  out.shapes.push_back(ys);
  out.inputs.push_back(random(ys, rng));
  const int y0 = g.add_value(val("mm")), y1 = g.add_value(val("add1")), y2 = g.add_value(val("add2"));
  g.nodes.push_back(node(gemm ? "Gemm" : "MatMul", {x, w}, {y0}, "mm"));
  g.nodes.push_back(node("Add", {y0, bias_first ? bias : r}, {y1}, "add1"));
  g.nodes.push_back(node("Add", {bias_first ? r : bias, y1}, {y2}, "add2"));
  int cur = y2;
  if (!act.empty()) {
    const int a = g.add_value(val("act_out"));
    g.nodes.push_back(node(act, {cur}, {a}, "act", act == "Gelu" ? 20 : 17));
    cur = a;
  }
  g.outputs.push_back(cur);
  return out;
}

TEST(Fusion, MatMulAndGemmWithBiasResidualAndActivation) {
  std::mt19937 rng(12);
  for (bool gemm : {false, true})
    for (bool bias_first : {true, false})
      for (const char* act : {"", "Relu", "Tanh", "HardSwish", "Gelu"})
        for (int threads : {1, 2}) {
          // k = 300 > the SGEMM's KC (256): the bias is added on the first KC pass, so the
          // sums differ from the unfused order by rounding (tolerance below).
          Built b = matmul_graph(2, 17, 300, 45, bias_first, act, rng, gemm);
          const std::string what = std::string(gemm ? "Gemm" : "MatMul") + (bias_first ? " bias first " : " residual first ") +
                                   act + " threads=" + std::to_string(threads);
          Ran fused = run(b, true, threads), plain = run(b, false, threads);
          EXPECT_EQ(fused.placements.size(), 1u) << what;
          ASSERT_EQ(fused.outputs.size(), 1u);
          ASSERT_EQ(plain.outputs.size(), 1u);
          const Tensor& f = fused.outputs[0];
          const Tensor& p = plain.outputs[0];
          ASSERT_EQ(f.shape(), p.shape());
          int bad = 0;
          for (int64_t i = 0; i < f.numel(); ++i) {
            const float u = f.data_as<float>()[i], v = p.data_as<float>()[i];
            // sum of 300 products of values in [-1, 1]: magnitude <= 300; float rounding
            // of a reassociated sum is far below 1e-4 absolute.
            if (!(std::fabs(u - v) <= 1e-4f) && ++bad < 4) ADD_FAILURE() << what << " element " << i << ": " << u << " vs " << v;
          }
        }
}

TEST(Fusion, GemmWithItsOwnCTakesNoBiasRowButTakesTheResidual) {
  std::mt19937 rng(13);
  Built b = matmul_graph(1, 9, 20, 12, /*bias_first=*/false, "Relu", rng, /*gemm=*/true);
  // Give the Gemm its own C = bias: then the bias Add cannot fuse.
  b.g.nodes[0].inputs.push_back(b.g.find_value("bias"));
  Ran fused = run(b, true, 1), plain = run(b, false, 1);
  EXPECT_EQ(fused.placements.size(), 3u) << fused.placements[0];  // Gemm + residual Add, bias Add, Relu
  ASSERT_EQ(fused.outputs.size(), 1u);
  for (int64_t i = 0; i < fused.outputs[0].numel(); ++i)
    EXPECT_NEAR(fused.outputs[0].data_as<float>()[i], plain.outputs[0].data_as<float>()[i], 1e-5f);
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

TEST(Fusion, ActivationThenScalarMulAndAddFuse) {
  // Conv -> HardSwish -> Mul(scale) -> Add(shift): PP-OCR's learnable affine block.
  std::mt19937 rng(14);
  for (int variant = 0; variant < 3; ++variant) {
    Built b = conv_graph(6, 16, 9, 3, 1, false, "HardSwish", rng);
    Graph& g = b.g;
    int cur = g.outputs[0];
    auto scalar_const = [&](const std::string& name, float v) {
      Tensor t = Tensor::allocate(DType::kFloat32, {1}).value();
      t.data_as<float>()[0] = v;
      return add_const(g, name, t);
    };
    const int m = g.add_value(val("scaled"));
    g.nodes.push_back(node("Mul", {variant == 1 ? scalar_const("s", 1.7f) : cur, variant == 1 ? cur : scalar_const("s", 1.7f)},
                           {m}, "mul"));
    cur = m;
    if (variant != 2) {
      const int a = g.add_value(val("shifted"));
      g.nodes.push_back(node("Add", {cur, scalar_const("t", -0.3f)}, {a}, "add_shift"));
      cur = a;
    }
    g.outputs = {cur};
    for (int threads : {1, 2}) {
      Ran fused = run(b, true, threads), plain = run(b, false, threads);
      EXPECT_EQ(fused.placements.size(), 1u) << "variant " << variant << ": " << fused.placements[0];
      expect_close(fused, plain, "affine variant " + std::to_string(variant));
    }
  }
}

TEST(Fusion, MulByARunTimeScalarIsNotFused) {
  std::mt19937 rng(15);
  Built b = conv_graph(4, 8, 5, 3, 1, false, "Relu", rng);
  Graph& g = b.g;
  const int s = g.add_value(val("s_input", DType::kFloat32));
  g.inputs.push_back(s);
  b.shapes.push_back({1});
  b.inputs.push_back(random({1}, rng));
  const int m = g.add_value(val("scaled"));
  g.nodes.push_back(node("Mul", {g.outputs[0], s}, {m}, "mul"));
  g.outputs = {m};
  Ran fused = run(b, true, 1), plain = run(b, false, 1);
  ASSERT_EQ(fused.placements.size(), 2u);
  EXPECT_NE(fused.placements[1].find("Mul node 'mul'"), std::string::npos);
  expect_close(fused, plain, "run-time scalar");
}

}  // namespace
}  // namespace tessera
