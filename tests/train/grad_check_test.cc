// Every gradient rule of train/ against central finite differences in float64 on random
// inputs, and every forward-mode (tangent) rule against reverse mode by
// <J v, w> = <v, J^T w> for random v, w (an identity of the adjoint, exact up to rounding).
// Finite differences: for y = f(x_1..x_k) and a random cotangent w, reverse mode gives J_i^T w and
//   (J_i^T w)[e] ~ (<f(x_i + h e), w> - <f(x_i - h e), w>) / (2 h),
// with truncation error O(h^2) and rounding O(eps / h); h = 1e-5 gives ~1e-10, checked to 1e-6
// relative (a wrong rule is off by O(1)).
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "graph_builder.h"
#include "train/autodiff.h"
#include "train/interpreter.h"

namespace tessera::train {
namespace {

using namespace testing;

struct Feed {
  std::string name;
  Shape shape;
  double lo = -1, hi = 1;
  bool wrt = true;
};

Tensor dot_weights(const Tensor& y, std::mt19937& gen) { return random_tensor(DType::kFloat64, y.shape(), gen); }

double dot(const Tensor& a, const Tensor& b) {
  double s = 0;
  for (int64_t i = 0; i < a.numel(); ++i) s += a.data_as<double>()[i] * b.data_as<double>()[i];
  return s;
}

// Checks d<y, w>/d(feed) for every feed with wrt = true; `y` is the value the graph computes.
void check_gradients(Builder& b, int y, const std::vector<Feed>& feeds, uint32_t seed = 1, double tol = 1e-6,
                     bool check_jvp = true) {
  std::mt19937 gen(seed);
  std::vector<std::pair<std::string, Tensor>> in;
  std::vector<std::string> wrt;
  for (const Feed& f : feeds) {
    in.push_back({f.name, random_tensor(DType::kFloat64, f.shape, gen, f.lo, f.hi)});
    if (f.wrt) wrt.push_back(f.name);
  }
  auto fwd_graph = std::make_shared<Graph>(b.g);
  auto fwd = Interpreter::create(fwd_graph, {b.name(y)});
  ASSERT_TRUE(fwd.is_ok()) << fwd.status().to_string();
  auto y0 = (*fwd)->run(in, 7);
  ASSERT_TRUE(y0.is_ok()) << y0.status().to_string();
  Tensor w = dot_weights((*y0)[0], gen);

  auto bwd_graph = std::make_shared<Graph>(b.g);
  auto info = append_backward(*bwd_graph, b.name(y), wrt);
  ASSERT_TRUE(info.is_ok()) << info.status().to_string();
  auto bwd = Interpreter::create(bwd_graph, info->grads);
  ASSERT_TRUE(bwd.is_ok()) << bwd.status().to_string();
  auto bin = in;
  bin.push_back({info->seed, w});
  auto grads = (*bwd)->run(bin, 7);
  ASSERT_TRUE(grads.is_ok()) << grads.status().to_string();

  // Forward mode against reverse mode: <J v, w> = sum_i <v_i, J_i^T w> for random tangents v.
  if (check_jvp) {
    auto jvp_graph = std::make_shared<Graph>(b.g);
    auto jinfo = append_jvp(*jvp_graph, b.name(y), wrt);
    ASSERT_TRUE(jinfo.is_ok()) << jinfo.status().to_string();
    auto jvp = Interpreter::create(jvp_graph, {jinfo->output_tangent});
    ASSERT_TRUE(jvp.is_ok()) << jvp.status().to_string();
    auto jin = in;
    double rhs = 0;
    for (size_t k = 0, gi = 0; k < feeds.size(); ++k) {
      if (!feeds[k].wrt) continue;
      Tensor v = random_tensor(DType::kFloat64, feeds[k].shape, gen);
      rhs += dot(v, (*grads)[gi]);
      jin.push_back({jinfo->tangent_inputs[gi++], v});
    }
    auto jv = (*jvp)->run(jin, 7);
    ASSERT_TRUE(jv.is_ok()) << jv.status().to_string();
    ASSERT_EQ((*jv)[0].shape(), (*y0)[0].shape());
    const double lhs = dot((*jv)[0], w);
    EXPECT_NEAR(lhs, rhs, 1e-9 * std::max(1.0, std::fabs(rhs))) << "<J v, w> vs <v, J^T w> for " << b.g.nodes.back().op_type;
  }

  const double h = 1e-5;
  for (size_t k = 0, gi = 0; k < feeds.size(); ++k) {
    if (!feeds[k].wrt) continue;
    const Tensor& g = (*grads)[gi++];
    ASSERT_EQ(g.shape(), in[k].second.shape()) << feeds[k].name;
    for (int64_t e = 0; e < g.numel(); ++e) {
      auto run_at = [&](double delta) {
        auto p = in;
        p[k].second = in[k].second.clone().value();
        p[k].second.data_as<double>()[e] += delta;
        auto r = (*fwd)->run(p, 7);
        EXPECT_TRUE(r.is_ok()) << r.status().to_string();
        return r.is_ok() ? dot((*r)[0], w) : NAN;
      };
      const double fd = (run_at(h) - run_at(-h)) / (2 * h);
      const double got = g.data_as<double>()[e];
      ASSERT_NEAR(got, fd, tol * std::max(1.0, std::fabs(fd)))
          << "d/d " << feeds[k].name << "[" << e << "] of " << b.g.nodes.back().op_type;
    }
  }
}

// One node of `op` over inputs named a, b, c, ... (feeds), plus constant inputs.
struct Case {
  std::string op;
  std::vector<Feed> feeds;
  std::vector<Attribute> attrs;
  int opset = 17;
};

void check_op(const Case& c) {
  Builder b;
  b.opset = c.opset;
  std::vector<int> ins;
  for (const Feed& f : c.feeds) ins.push_back(b.input(f.name));
  int y = b.op(c.op, ins, c.attrs);
  b.output(y);
  check_gradients(b, y, c.feeds);
}

TEST(GradCheck, AddSubMulDivBroadcast) {
  for (const char* op : {"Add", "Sub", "Mul"}) {
    SCOPED_TRACE(op);
    check_op({op, {{"a", {2, 3, 4}}, {"b", {3, 1}}}});
    check_op({op, {{"a", {4}}, {"b", {2, 3, 4}}}});
  }
  check_op({"Div", {{"a", {2, 3, 4}}, {"b", {3, 1}, 0.5, 1.5}}});
  check_op({"Div", {{"a", {3}}, {"b", {2, 3}, 0.5, 1.5}}});
}

TEST(GradCheck, Pow) { check_op({"Pow", {{"a", {2, 3}, 0.5, 2.0}, {"b", {3}, -1.5, 2.0}}}); }

TEST(GradCheck, Activations) {
  for (const char* op : {"Relu", "Sigmoid", "Tanh", "HardSwish", "Erf", "Neg", "Exp"}) {
    SCOPED_TRACE(op);
    check_op({op, {{"x", {3, 5}, -4, 4}}});
  }
  check_op({"LeakyRelu", {{"x", {3, 5}, -2, 2}}, {af("alpha", 0.1f)}});
  check_op({"HardSigmoid", {{"x", {3, 5}, -4, 4}}, {af("alpha", 0.3f), af("beta", 0.4f)}});
  check_op({"Gelu", {{"x", {3, 5}, -3, 3}}, {}, 20});
  check_op({"Gelu", {{"x", {3, 5}, -3, 3}}, {as("approximate", "tanh")}, 20});
  check_op({"Log", {{"x", {7}, 0.5, 3}}});
  check_op({"Sqrt", {{"x", {7}, 0.5, 3}}});
}

TEST(GradCheck, ClipWithBounds) {
  Builder b;
  int x = b.input("x");
  Tensor lo = Tensor::allocate(DType::kFloat64, {}).value(), hi = Tensor::allocate(DType::kFloat64, {}).value();
  lo.data_as<double>()[0] = -0.5;
  hi.data_as<double>()[0] = 0.6;
  int y = b.op("Clip", {x, b.init("lo", lo), b.init("hi", hi)});
  check_gradients(b, y, {{"x", {4, 6}}});
}

TEST(GradCheck, MatMul) {
  check_op({"MatMul", {{"a", {2, 3, 4}}, {"b", {4, 5}}}});
  check_op({"MatMul", {{"a", {2, 1, 3, 4}}, {"b", {3, 4, 2}}}});
}

TEST(GradCheck, Gemm) {
  check_op({"Gemm", {{"a", {3, 4}}, {"b", {4, 5}}, {"c", {3, 5}}}});
  check_op({"Gemm", {{"a", {4, 3}}, {"b", {5, 4}}, {"c", {5}}}, {ai("transA", 1), ai("transB", 1), af("alpha", 0.5f), af("beta", 2.0f)}});
  check_op({"Gemm", {{"a", {3, 4}}, {"b", {5, 4}}}, {ai("transB", 1)}});
}

TEST(GradCheck, Conv) {
  check_op({"Conv", {{"x", {2, 3, 6, 5}}, {"w", {4, 3, 3, 3}}, {"b", {4}}}, {aints("pads", {1, 1, 1, 1})}});
  check_op({"Conv", {{"x", {1, 4, 7, 7}}, {"w", {6, 2, 3, 2}}}, {ai("group", 2), aints("strides", {2, 1}), aints("dilations", {1, 2}), aints("pads", {1, 0, 0, 1})}});
  // depthwise
  check_op({"Conv", {{"x", {2, 3, 5, 5}}, {"w", {3, 1, 3, 3}}, {"b", {3}}}, {ai("group", 3), as("auto_pad", "SAME_UPPER")}});
  // pointwise (the GEMM path), plain and grouped
  check_op({"Conv", {{"x", {2, 4, 3, 5}}, {"w", {6, 4, 1, 1}}, {"b", {6}}}});
  check_op({"Conv", {{"x", {2, 4, 3, 2}}, {"w", {6, 2, 1, 1}}}, {ai("group", 2)}});
  // 1-D
  check_op({"Conv", {{"x", {2, 2, 9}}, {"w", {3, 2, 3}}}, {aints("strides", {2}), aints("pads", {1, 1})}});
}

TEST(GradCheck, Pools) {
  check_op({"MaxPool", {{"x", {2, 3, 6, 6}}}, {aints("kernel_shape", {2, 2}), aints("strides", {2, 2})}});
  check_op({"MaxPool", {{"x", {1, 2, 5, 5}}}, {aints("kernel_shape", {3, 3}), aints("strides", {2, 2}), aints("pads", {1, 1, 1, 1}), ai("ceil_mode", 1)}});
  check_op({"AveragePool", {{"x", {2, 2, 5, 5}}}, {aints("kernel_shape", {3, 3}), aints("strides", {2, 2}), aints("pads", {1, 1, 1, 1})}});
  check_op({"AveragePool", {{"x", {2, 2, 5, 5}}}, {aints("kernel_shape", {3, 3}), aints("pads", {1, 1, 1, 1}), ai("count_include_pad", 1)}});
  check_op({"GlobalAveragePool", {{"x", {2, 3, 4, 5}}}});
}

TEST(GradCheck, SoftmaxLogSoftmax) {
  check_op({"Softmax", {{"x", {2, 3, 4}, -2, 2}}, {ai("axis", 1)}});
  check_op({"LogSoftmax", {{"x", {2, 5}, -2, 2}}});
  check_op({"Softmax", {{"x", {2, 3, 4}, -2, 2}}, {ai("axis", 1)}, 11});  // coerced to 2-D
}

TEST(GradCheck, LayerNormalization) {
  check_op({"LayerNormalization", {{"x", {3, 6}}, {"s", {6}}, {"b", {6}}}});
  check_op({"LayerNormalization", {{"x", {2, 3, 4}}, {"s", {3, 4}}}, {ai("axis", 1), af("epsilon", 1e-3f)}});
}

TEST(GradCheck, BatchNormalization) {
  for (int training : {1, 0}) {
    SCOPED_TRACE(training);
    Builder b;
    std::vector<int> ins = {b.input("x"), b.input("s"), b.input("b"), b.input("m"), b.input("v")};
    int y = b.op("BatchNormalization", ins, {ai("training_mode", training), af("epsilon", 1e-3f)});
    check_gradients(b, y, {{"x", {3, 2, 2, 3}}, {"s", {2}}, {"b", {2}}, {"m", {2}, -1, 1, false}, {"v", {2}, 0.5, 1.5, false}});
  }
}

TEST(GradCheck, ShapeOps) {
  {
    Builder b;
    int y = b.op("Reshape", {b.input("x"), b.ints("s", {3, -1})});
    check_gradients(b, y, {{"x", {2, 3, 2}}});
  }
  check_op({"Flatten", {{"x", {2, 3, 2}}}, {ai("axis", 2)}});
  check_op({"Transpose", {{"x", {2, 3, 4}}}, {aints("perm", {2, 0, 1})}});
  check_op({"Transpose", {{"x", {2, 3}}}});
  check_op({"Concat", {{"a", {2, 1, 3}}, {"b", {2, 4, 3}}, {"c", {2, 2, 3}}}, {ai("axis", 1)}});
  {
    Builder b;
    int y = b.op("Slice", {b.input("x"), b.ints("st", {1, 4}), b.ints("en", {3, 0}), b.ints("ax", {0, 2}), b.ints("sp", {1, -2})});
    check_gradients(b, y, {{"x", {4, 3, 5}}});
  }
  {
    Builder b;
    std::vector<int> o = b.node("Split", {b.input("x"), b.ints("sp", {1, 3})}, {ai("axis", 1)}, 2);
    int y = b.op("Mul", {o[1], o[1]});  // only one output used: the other gets zeros
    check_gradients(b, y, {{"x", {2, 4}}});
  }
  {
    Builder b;
    int y = b.op("Unsqueeze", {b.op("Squeeze", {b.input("x"), b.ints("a", {1})}), b.ints("a2", {0})});
    check_gradients(b, y, {{"x", {3, 1, 2}}});
  }
}

TEST(GradCheck, GatherEmbedding) {
  for (int axis : {0, 1}) {
    Builder b;
    Tensor idx = Tensor::allocate(DType::kInt64, {2, 3}).value();
    int64_t v[] = {1, 0, 1, 2, -1, 1};  // repeats accumulate; -1 wraps
    std::copy(v, v + 6, idx.data_as<int64_t>());
    int y = b.op("Gather", {b.input("x"), b.init("i", idx)}, {ai("axis", axis)});
    check_gradients(b, y, {{"x", {3, 3}}});
  }
}

TEST(GradCheck, Reductions) {
  check_op({"ReduceMean", {{"x", {2, 3, 4}}}, {aints("axes", {1}), ai("keepdims", 0)}, 13});
  {
    Builder b;
    int y = b.op("ReduceSum", {b.input("x"), b.ints("ax", {0, 2})});
    check_gradients(b, y, {{"x", {2, 3, 4}}});
  }
  check_op({"ReduceSum", {{"x", {2, 3}}}, {ai("keepdims", 0)}});
}

TEST(GradCheck, DropoutTrainingMode) {
  Builder b;
  Tensor r = Tensor::allocate(DType::kFloat64, {}).value();
  r.data_as<double>()[0] = 0.3;
  Tensor t = Tensor::allocate(DType::kBool, {}).value();
  t.data_as<uint8_t>()[0] = 1;
  std::vector<int> o = b.node("Dropout", {b.input("x"), b.init("r", r), b.init("t", t)}, {}, 2);
  b.g.values[o[1]].dtype = DType::kBool;
  check_gradients(b, o[0], {{"x", {4, 5}}});
}

TEST(GradCheck, Losses) {
  {
    Builder b;
    Tensor lab = Tensor::allocate(DType::kInt64, {4}).value();
    int64_t v[] = {0, 2, 1, 2};
    std::copy(v, v + 4, lab.data_as<int64_t>());
    int y = b.node("SoftmaxCrossEntropy", {b.input("z"), b.init("l", lab)}, {af("label_smoothing", 0.1f)}, 1, "tessera.train")[0];
    check_gradients(b, y, {{"z", {4, 3}, -2, 2}});
  }
  {
    Builder b;
    int y = b.node("MSELoss", {b.input("p"), b.input("t")}, {}, 1, "tessera.train")[0];
    check_gradients(b, y, {{"p", {3, 2}}, {"t", {3, 2}}});
  }
}

TEST(GradCheck, WhereExpandMaxMinSumMean) {
  {
    Builder b;
    Tensor c = Tensor::allocate(DType::kBool, {3, 1}).value();
    c.data_as<uint8_t>()[0] = 1;
    c.data_as<uint8_t>()[2] = 1;
    int y = b.op("Where", {b.init("c", c), b.input("a"), b.input("b")});
    check_gradients(b, y, {{"a", {3, 4}}, {"b", {4}}});
  }
  {
    Builder b;
    int y = b.op("Expand", {b.input("x"), b.ints("s", {2, 3, 4})});
    check_gradients(b, y, {{"x", {3, 1}}});
  }
  check_op({"Max", {{"a", {2, 3}}, {"b", {3}}, {"c", {2, 1}}}});
  check_op({"Min", {{"a", {2, 3}}, {"b", {2, 3}}}});
  check_op({"Sum", {{"a", {2, 3}}, {"b", {3}}, {"c", {2, 1}}}});
  check_op({"Mean", {{"a", {2, 3}}, {"b", {3}}}});
}

// A transformer block end to end: token embedding (Gather), self-attention with a causal
// mask (Where), softmax, residual, LayerNormalization, a Gelu MLP, and a mean loss.
TEST(GradCheck, TransformerBlock) {
  Builder b;
  const int64_t batch = 2, seq = 3, dim = 4;
  Tensor ids = Tensor::allocate(DType::kInt64, {batch, seq}).value();
  int64_t iv[] = {1, 4, 2, 0, 4, 3};
  std::copy(iv, iv + 6, ids.data_as<int64_t>());
  Tensor mask = Tensor::allocate(DType::kBool, {seq, seq}).value();
  for (int i = 0; i < seq; ++i)
    for (int j = 0; j < seq; ++j) mask.data_as<uint8_t>()[i * seq + j] = j <= i;
  Tensor neg = Tensor::allocate(DType::kFloat64, {}).value(), scale = Tensor::allocate(DType::kFloat64, {}).value();
  neg.data_as<double>()[0] = -1e4;
  scale.data_as<double>()[0] = std::sqrt(double(dim));
  int x = b.op("Gather", {b.input("emb"), b.init("ids", ids)});  // [B, S, D]
  int q = b.op("MatMul", {x, b.input("wq")}), k = b.op("MatMul", {x, b.input("wk")}), v = b.op("MatMul", {x, b.input("wv")});
  int kt = b.op("Transpose", {k}, {aints("perm", {0, 2, 1})});
  int sc = b.op("Div", {b.op("MatMul", {q, kt}), b.init("scale", scale)});
  int masked = b.op("Where", {b.init("mask", mask), sc, b.init("neg", neg)});
  int att = b.op("MatMul", {b.op("Softmax", {masked}, {ai("axis", -1)}), v});
  int h = b.op("LayerNormalization", {b.op("Add", {att, x}), b.input("g"), b.input("beta")}, {ai("axis", -1)});
  int ff = b.op("MatMul", {b.op("Gelu", {b.op("Add", {b.op("MatMul", {h, b.input("w1")}), b.input("b1")})}), b.input("w2")});
  int out = b.op("Add", {ff, h});
  int loss = b.op("ReduceMean", {b.op("Mul", {out, out})}, {ai("keepdims", 0)});
  b.opset = 20;  // Gelu
  for (Node& n : b.g.nodes) n.opset = n.op_type == "Gelu" ? 20 : 17;
  check_gradients(b, loss, {{"emb", {5, dim}}, {"wq", {dim, dim}}, {"wk", {dim, dim}}, {"wv", {dim, dim}}, {"g", {dim}},
                            {"beta", {dim}}, {"w1", {dim, 6}}, {"b1", {6}}, {"w2", {6, dim}}});
}

// A value used several times: its gradient contributions are summed.
TEST(GradCheck, AccumulatesOverUses) {
  Builder b;
  int x = b.input("x"), w = b.input("w");
  int h = b.op("MatMul", {x, w});
  int y = b.op("Add", {b.op("Mul", {h, h}), b.op("Tanh", {h})});
  int z = b.op("Mul", {y, x});  // x used twice, through two paths
  check_gradients(b, z, {{"x", {3, 3}}, {"w", {3, 3}}});
}

// A small CNN end to end: Conv -> Relu -> MaxPool -> Flatten -> Gemm -> SoftmaxCrossEntropy.
TEST(GradCheck, SmallCnnWithLoss) {
  Builder b;
  int x = b.input("x"), w1 = b.input("w1"), b1 = b.input("b1"), w2 = b.input("w2"), b2 = b.input("b2");
  int c = b.op("Conv", {x, w1, b1}, {aints("pads", {1, 1, 1, 1})});
  int p = b.op("MaxPool", {b.op("Relu", {c})}, {aints("kernel_shape", {2, 2}), aints("strides", {2, 2})});
  int f = b.op("Flatten", {p});
  int z = b.op("Gemm", {f, w2, b2}, {ai("transB", 1)});
  Tensor lab = Tensor::allocate(DType::kInt64, {2}).value();
  lab.data_as<int64_t>()[0] = 1;
  lab.data_as<int64_t>()[1] = 2;
  int loss = b.node("SoftmaxCrossEntropy", {z, b.init("lab", lab)}, {}, 1, "tessera.train")[0];
  check_gradients(b, loss, {{"x", {2, 1, 4, 4}}, {"w1", {2, 1, 3, 3}}, {"b1", {2}}, {"w2", {3, 8}}, {"b2", {3}}});
}

TEST(Autodiff, UnsupportedOpIsNamed) {
  Builder b;
  int y = b.op("Hardmax", {b.op("Relu", {b.input("x")})});
  auto info = append_backward(b.g, b.name(y), {"x"});
  ASSERT_FALSE(info.is_ok());
  EXPECT_EQ(info.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(info.status().message().find("Hardmax node 'Hardmax1'"), std::string::npos) << info.status().message();
}

TEST(Autodiff, JvpUnsupportedOpIsNamed) {
  Builder b;
  int y = b.op("Hardmax", {b.op("Relu", {b.input("x")})});
  auto info = append_jvp(b.g, b.name(y), {"x"});
  ASSERT_FALSE(info.is_ok());
  EXPECT_EQ(info.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(info.status().message().find("Hardmax node 'Hardmax1'"), std::string::npos) << info.status().message();
}

TEST(Autodiff, BadNamesAndDtypes) {
  Builder b;
  int y = b.op("Relu", {b.input("x")});
  EXPECT_EQ(append_backward(b.g, "nope", {"x"}).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(append_backward(b.g, b.name(y), {"nope"}).status().code(), StatusCode::kNotFound);
  b.input("i", DType::kInt64);
  EXPECT_EQ(append_backward(b.g, b.name(y), {"i"}).status().code(), StatusCode::kInvalidArgument);
}

// Of an MLP's forward activations the backward keeps only what its rules read: Relu's output
// (not its input), the MatMul operands; not the Add output before Relu nor the loss input.
TEST(Autodiff, KeepsOnlyNeededActivations) {
  Builder b;
  int x = b.input("x"), w1 = b.input("w1"), b1 = b.input("b1"), w2 = b.input("w2");
  int h = b.op("MatMul", {x, w1});
  int a = b.op("Add", {h, b1});
  int r = b.op("Relu", {a});
  int z = b.op("MatMul", {r, w2});
  int l = b.node("MSELoss", {z, b.input("t")}, {}, 1, "tessera.train")[0];
  auto info = append_backward(b.g, b.name(l), {"w1", "b1", "w2"});
  ASSERT_TRUE(info.is_ok()) << info.status().to_string();
  std::vector<std::string> saved = saved_activations(b.g, info->forward_nodes);
  std::sort(saved.begin(), saved.end());
  std::vector<std::string> want = {b.name(r), b.name(z)};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(saved, want);
}

}  // namespace
}  // namespace tessera::train
