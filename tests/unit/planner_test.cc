// The planner: arena reuse by liveness, plan-time folding of shape computations, re-planning
// on new input shapes, and clear errors for unsupported ops.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "backends/backend.h"
#include "runtime/plan/plan.h"
#include "tessera/session.h"

namespace tessera {
namespace {

Value tensor_value(const std::string& name, DType dt, std::vector<Dim> shape = {}, bool has_shape = false) {
  Value v;
  v.name = name;
  v.dtype = dt;
  v.shape = std::move(shape);
  v.has_shape = has_shape;
  return v;
}

Node node(const std::string& op, std::vector<int> ins, std::vector<int> outs, int opset = 17) {
  Node n;
  n.name = op + "_" + std::to_string(outs.empty() ? 0 : outs[0]);
  n.op_type = op;
  n.opset = opset;
  n.inputs = std::move(ins);
  n.outputs = std::move(outs);
  return n;
}

/// x -> Relu -> Relu -> ... (k times) -> y: each intermediate is dead after its consumer.
Graph relu_chain(int k) {
  Graph g;
  g.inputs.push_back(g.add_value(tensor_value("x", DType::kFloat32, {{-1, "n"}}, true)));
  int prev = g.inputs[0];
  for (int i = 0; i < k; ++i) {
    int out = g.add_value(tensor_value("t" + std::to_string(i), DType::kUndefined));
    g.nodes.push_back(node("Relu", {prev}, {out}));
    prev = out;
  }
  g.outputs.push_back(prev);
  return g;
}

TEST(Planner, ArenaReusesDeadBuffers) {
  Graph g = relu_chain(10);
  auto cpu = make_cpu_backend();
  PlanOptions po;
  po.backends = {cpu.get()};
  auto plan = plan_graph(g, {{1000}}, po);
  ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
  // 10 intermediates of 4000 bytes each (4032 aligned); liveness allows two at a time.
  EXPECT_EQ(plan.value()->steps.size(), 10u);
  EXPECT_EQ(plan.value()->arena_bytes, 2u * 4032u);
  // No two values alive at once share bytes: check every producer/consumer pair.
  const Plan& p = *plan.value();
  for (const Step& s : p.steps) {
    const PlanValue& in = p.values[s.inputs[0]];
    const PlanValue& out = p.values[s.outputs[0]];
    if (in.home != PlanValue::Home::kArena) continue;
    bool overlap = in.offset < out.offset + out.bytes && out.offset < in.offset + in.bytes;
    EXPECT_FALSE(overlap) << s.node->name;
  }
}

TEST(Planner, ShapeComputationsAreFoldedAndReplannedPerShape) {
  // y = Reshape(x, Concat(Shape(x)[0:1], [-1])) : the shape chain depends on x's shape only.
  Graph g;
  int x = g.add_value(tensor_value("x", DType::kFloat32, {{-1, "a"}, {-1, "b"}, {2, ""}}, true));
  g.inputs.push_back(x);
  int s = g.add_value(tensor_value("s", DType::kUndefined));
  g.nodes.push_back(node("Shape", {x}, {s}));
  auto i64 = [&](const std::string& name, std::vector<int64_t> v) {
    Value c = tensor_value(name, DType::kInt64);
    Tensor t = Tensor::allocate(DType::kInt64, {static_cast<int64_t>(v.size())}).value();
    for (size_t i = 0; i < v.size(); ++i) t.data_as<int64_t>()[i] = v[i];
    c.initializer = std::make_shared<const Tensor>(t);
    return g.add_value(c);
  };
  int starts = i64("starts", {0}), ends = i64("ends", {1}), minus1 = i64("m1", {-1});
  int s0 = g.add_value(tensor_value("s0", DType::kUndefined));
  g.nodes.push_back(node("Slice", {s, starts, ends}, {s0}));
  int shp = g.add_value(tensor_value("shp", DType::kUndefined));
  Node cat = node("Concat", {s0, minus1}, {shp});
  Attribute axis;
  axis.name = "axis";
  axis.type = AttrType::kInt;
  axis.i = 0;
  cat.attributes.push_back(axis);
  g.nodes.push_back(cat);
  int y = g.add_value(tensor_value("y", DType::kUndefined));
  g.nodes.push_back(node("Reshape", {x, shp}, {y}));
  g.outputs.push_back(y);
  Model m;
  m.graph = g;
  auto s_r = Session::create(std::make_shared<Model>(m));
  ASSERT_TRUE(s_r.is_ok()) << s_r.status().to_string();
  Session& sess = *s_r.value();
  for (Shape shape : {Shape{3, 4, 2}, Shape{5, 1, 2}}) {
    Tensor in = Tensor::allocate(DType::kFloat32, shape).value();
    for (int64_t i = 0; i < in.numel(); ++i) in.data_as<float>()[i] = static_cast<float>(i);
    auto out = sess.run({{"x", in}});
    ASSERT_TRUE(out.is_ok()) << out.status().to_string();
    EXPECT_EQ(out.value()[0].shape(), (Shape{shape[0], shape[1] * 2}));
    EXPECT_EQ(out.value()[0].data_as<float>()[in.numel() - 1], static_cast<float>(in.numel() - 1));
    PlanStats st = sess.plan_stats();
    EXPECT_EQ(st.steps, 1u) << "only the Reshape runs; the shape chain is folded";
    EXPECT_EQ(st.folded_nodes, 3);
  }
}

TEST(Planner, UnsupportedOpNamesOpNodeAndOpset) {
  Graph g;
  g.inputs.push_back(g.add_value(tensor_value("x", DType::kFloat32, {{2, ""}}, true)));
  int y = g.add_value(tensor_value("y", DType::kUndefined));
  Node n = node("NoSuchOp", {0}, {y}, 13);
  n.name = "weird";
  g.nodes.push_back(n);
  g.outputs.push_back(y);
  auto cpu = make_cpu_backend();
  PlanOptions po;
  po.backends = {cpu.get()};
  auto plan = plan_graph(g, {{2}}, po);
  ASSERT_FALSE(plan.is_ok());
  EXPECT_EQ(plan.status().code(), StatusCode::kUnimplemented);
  const std::string& msg = plan.status().message();
  EXPECT_NE(msg.find("NoSuchOp"), std::string::npos) << msg;
  EXPECT_NE(msg.find("weird"), std::string::npos) << msg;
  EXPECT_NE(msg.find("opset 13"), std::string::npos) << msg;
}

TEST(Planner, SymbolicDimsMustAgreeAcrossInputs) {
  Graph g;
  g.inputs.push_back(g.add_value(tensor_value("a", DType::kFloat32, {{-1, "n"}}, true)));
  g.inputs.push_back(g.add_value(tensor_value("b", DType::kFloat32, {{-1, "n"}}, true)));
  int y = g.add_value(tensor_value("y", DType::kUndefined));
  g.nodes.push_back(node("Add", {0, 1}, {y}));
  g.outputs.push_back(y);
  auto cpu = make_cpu_backend();
  PlanOptions po;
  po.backends = {cpu.get()};
  EXPECT_TRUE(plan_graph(g, {{3}, {3}}, po).is_ok());
  auto bad = plan_graph(g, {{3}, {4}}, po);
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("'n'"), std::string::npos) << bad.status().message();
}

TEST(Planner, UnknownBackendIsAnError) {
  Model m;
  m.graph = relu_chain(1);
  SessionOptions o;
  o.backends = {"tpu"};
  auto s = Session::create(std::make_shared<Model>(m), o);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.status().message().find("tpu"), std::string::npos);
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

TEST(Schemas, StandardAttributeOfTheWrongTypeIsAnError) {
  Graph g;
  g.inputs.push_back(g.add_value(tensor_value("x", DType::kFloat32, {{2, ""}, {3, ""}}, true)));
  int y = g.add_value(tensor_value("y", DType::kUndefined));
  Node n = node("Softmax", {0}, {y});
  Attribute axis;
  axis.name = "axis";
  axis.type = AttrType::kFloat;  // must be INT
  axis.f = 1.0f;
  n.attributes.push_back(axis);
  g.nodes.push_back(n);
  g.outputs.push_back(y);
  auto cpu = make_cpu_backend();
  PlanOptions po;
  po.backends = {cpu.get()};
  auto plan = plan_graph(g, {{2, 3}}, po);
  ASSERT_FALSE(plan.is_ok());
  EXPECT_NE(plan.status().message().find("attribute 'axis' is FLOAT; the ONNX spec makes it INT"), std::string::npos)
      << plan.status().message();
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

long resident_kb() {
  std::ifstream f("/proc/self/statm");
  long size = 0, resident = 0;
  f >> size >> resident;
  return resident * (::sysconf(_SC_PAGESIZE) / 1024);
}

// Symbolic dims: any concrete shape runs, the plan is re-made when shapes change, and memory
// does not grow over 1,000 runs alternating between two shapes.
TEST(Planner, AlternatingShapesDoNotGrowMemory) {
  Model m;
  m.graph = relu_chain(3);
  auto s = Session::create(std::make_shared<Model>(m));
  ASSERT_TRUE(s.is_ok());
  Tensor a = Tensor::allocate(DType::kFloat32, {20000}).value();
  Tensor b = Tensor::allocate(DType::kFloat32, {7}).value();
  for (int i = 0; i < 7; ++i) b.data_as<float>()[i] = static_cast<float>(i) - 3.0f;
  long after_warmup = 0;
  for (int run = 0; run < 1000; ++run) {
    const Tensor& x = run % 2 ? b : a;
    auto out = (*s)->run({{"x", x}});
    ASSERT_TRUE(out.is_ok()) << out.status().to_string();
    ASSERT_EQ(out.value()[0].shape(), x.shape());
    if (run % 2) {
      EXPECT_EQ(out.value()[0].data_as<float>()[0], 0.0f);
      EXPECT_EQ(out.value()[0].data_as<float>()[6], 3.0f);
    }
    if (run == 99) after_warmup = resident_kb();
  }
  long growth = resident_kb() - after_warmup;
  EXPECT_LT(growth, 1024) << "resident memory grew by " << growth << " kB over 900 runs";
}

}  // namespace
}  // namespace tessera
