// Loop and Scan (ONNX Loop-11..21, Scan-8..21) through the Session: small graphs whose
// expected outputs the tests compute themselves with plain loops, covering the run-time
// path (body planned once, run per iteration), the plan-time path (all inputs known, body
// re-planned per iteration, loop-carried shapes may change), outer-scope values, nesting,
// untyped body inputs, and the errors for bad nodes and bad inputs.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "op_test_util.h"
#include "tessera/session.h"

namespace tessera {
namespace {

using testing::make_tensor;
using testing::to_vector;

/// Builds one graph (the model's main graph or a body) value by value.
struct Builder {
  std::shared_ptr<Graph> g = std::make_shared<Graph>();

  /// A graph input; kUndefined dtype with has_shape false is an untyped body input.
  int input(const std::string& name, DType dt) {
    Value v;
    v.name = name;
    v.dtype = dt;
    int id = g->add_value(std::move(v));
    g->inputs.push_back(id);
    return id;
  }
  int value(const std::string& name) {
    Value v;
    v.name = name;
    return g->add_value(std::move(v));
  }
  /// A reference to a value of an enclosing graph.
  int outer(const std::string& name) {
    Value v;
    v.name = name;
    v.outer_scope = true;
    return g->add_value(std::move(v));
  }
  int constant(const std::string& name, Tensor t) {
    Value v;
    v.name = name;
    v.dtype = t.dtype();
    v.has_shape = true;
    for (int64_t d : t.shape()) v.shape.push_back({d, ""});
    v.initializer = std::make_shared<const Tensor>(std::move(t));
    return g->add_value(std::move(v));
  }
  Node& node(const std::string& op, std::vector<int> ins, std::vector<int> outs, int opset = 17) {
    Node n;
    n.name = op + "_" + std::to_string(g->nodes.size());
    n.op_type = op;
    n.opset = opset;
    n.inputs = std::move(ins);
    n.outputs = std::move(outs);
    g->nodes.push_back(std::move(n));
    return g->nodes.back();
  }
  void output(int id) { g->outputs.push_back(id); }
};

Attribute graph_attr(const std::string& name, std::shared_ptr<Graph> g) {
  Attribute a;
  a.name = name;
  a.type = AttrType::kGraph;
  a.g = std::move(g);
  return a;
}
Attribute int_attr(const std::string& name, int64_t v) {
  Attribute a;
  a.name = name;
  a.type = AttrType::kInt;
  a.i = v;
  return a;
}
Attribute ints_attr(const std::string& name, std::vector<int64_t> v) {
  Attribute a;
  a.name = name;
  a.type = AttrType::kInts;
  a.ints = std::move(v);
  return a;
}

std::unique_ptr<Session> session_of(Builder& b) {
  auto model = std::make_shared<Model>();
  model->meta.opset_imports = {{"", 17}};
  model->graph = *b.g;
  auto s = Session::create(model);
  EXPECT_TRUE(s.is_ok()) << s.status().to_string();
  return s.is_ok() ? std::move(s).value() : nullptr;
}

Tensor scalar_i64(int64_t v) { return make_tensor<int64_t>({}, {v}); }
Tensor scalar_bool(bool v) { return make_tensor<bool>({}, {v}); }

bool any_line_has(const std::vector<std::string>& lines, const std::string& what) {
  for (const auto& l : lines)
    if (l.find(what) != std::string::npos) return true;
  return false;
}

// ---- Loop, planned once and run per iteration ----

/// Loop(M = 4 (constant), cond omitted, y) with body y' = y + x + float(i) (x an input of
/// the main graph, read from the body) and scan output 2 * y'.
TEST(Loop, RunTimeForLoopWithScanOutputAndOuterScope) {
  Builder body;
  int i = body.input("i", DType::kInt64);
  int c = body.input("c", DType::kBool);
  int y = body.input("y_in", DType::kFloat32);
  int x = body.outer("x");
  int fi = body.value("fi"), a = body.value("a"), y2 = body.value("y_out"), s = body.value("s"), c2 = body.value("c_out");
  int two = body.constant("two", make_tensor<float>({}, {2.f}));
  body.node("Identity", {c}, {c2});
  body.node("Cast", {i}, {fi}).attributes.push_back(int_attr("to", static_cast<int64_t>(DType::kFloat32)));
  body.node("Add", {y, x}, {a});
  body.node("Add", {a, fi}, {y2});
  body.node("Mul", {y2, two}, {s});
  body.output(c2);
  body.output(y2);
  body.output(s);

  Builder main;
  int yin = main.input("y", DType::kFloat32);
  main.input("x", DType::kFloat32);
  int m = main.constant("M", scalar_i64(4));
  int yf = main.value("y_final"), scan = main.value("scan");
  main.node("Loop", {m, -1, yin}, {yf, scan}).attributes.push_back(graph_attr("body", body.g));
  main.output(yf);
  main.output(scan);
  auto sess = session_of(main);
  ASSERT_TRUE(sess);

  std::vector<float> y0 = {1.f, -2.f, 0.5f}, xv = {0.25f, 3.f, -1.f};
  auto out = sess->run({{"y", make_tensor<float>({3}, y0)}, {"x", make_tensor<float>({3}, xv)}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  std::vector<float> want_y = y0, want_scan;
  for (int t = 0; t < 4; ++t) {
    for (int k = 0; k < 3; ++k) want_y[k] = want_y[k] + xv[k] + static_cast<float>(t);
    for (int k = 0; k < 3; ++k) want_scan.push_back(2.f * want_y[k]);
  }
  EXPECT_EQ(to_vector<float>(out.value()[0]), want_y);
  EXPECT_EQ(out.value()[1].shape(), (Shape{4, 3}));
  EXPECT_EQ(to_vector<float>(out.value()[1]), want_scan);
  EXPECT_TRUE(any_line_has(sess->plan_stats().placements, "body run per iteration"));
}

/// A while loop: M omitted, y' = 2 y until y' >= limit (cond from the body).
Builder doubling_while(bool with_m) {
  Builder body;
  body.input("i", DType::kInt64);
  body.input("c", DType::kBool);
  int y = body.input("y_in", DType::kFloat32);
  int limit = body.outer("limit");
  int two = body.constant("two", make_tensor<float>({1}, {2.f}));
  int y2 = body.value("y_out"), c2 = body.value("c_out");
  body.node("Mul", {y, two}, {y2});
  body.node("Less", {y2, limit}, {c2});
  body.output(c2);
  body.output(y2);

  Builder main;
  int m = with_m ? main.input("M", DType::kInt64) : -1;
  int cond = main.input("cond", DType::kBool);
  int yin = main.input("y", DType::kFloat32);
  main.input("limit", DType::kFloat32);
  int yf = main.value("y_final");
  main.node("Loop", {m, cond, yin}, {yf}).attributes.push_back(graph_attr("body", body.g));
  main.output(yf);
  return main;
}

TEST(Loop, RunTimeWhileLoopStopsOnBodyCond) {
  Builder main = doubling_while(false);
  auto sess = session_of(main);
  ASSERT_TRUE(sess);
  for (float limit : {100.f, 1.f, 5000.f}) {
    for (bool cond0 : {true, false}) {
      auto out = sess->run({{"cond", scalar_bool(cond0)}, {"y", make_tensor<float>({1}, {1.5f})},
                            {"limit", make_tensor<float>({1}, {limit})}});
      ASSERT_TRUE(out.is_ok()) << out.status().to_string();
      float want = 1.5f;
      for (bool c = cond0; c;) {
        want *= 2.f;
        c = want < limit;
      }
      EXPECT_EQ(to_vector<float>(out.value()[0]), std::vector<float>{want}) << "limit " << limit << " cond " << cond0;
    }
  }
}

// ---- Profiling descends into sub-plans ----

/// Session::profile lists the body's steps after the Loop step, named "<Loop node> > <node>",
/// with times summed over the iterations; the Loop step keeps only its own time, so the
/// entries add up to no more than the runs' wall time; an If lists the steps of the branch
/// that ran, not those of the other.
TEST(Profile, SubPlanStepsAreListedUnderTheirParent) {
  Builder main = doubling_while(false);
  auto sess = session_of(main);
  ASSERT_TRUE(sess);
  sess->set_profiling(true);
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < 3; ++r) {
    auto out = sess->run({{"cond", scalar_bool(true)}, {"y", make_tensor<float>({1}, {1.5f})},
                          {"limit", make_tensor<float>({1}, {5000.f})}});
    ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  }
  const double wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  uint64_t runs = 0;
  std::vector<StepProfile> prof = sess->profile(&runs);
  EXPECT_EQ(runs, 3u);
  std::vector<std::string> names;
  double sum = 0;
  for (const StepProfile& p : prof) {
    names.push_back(p.node);
    sum += p.total_ms;
    EXPECT_GE(p.total_ms, 0.0) << p.node;
  }
  ASSERT_EQ(prof.size(), 3u) << ::testing::PrintToString(names);
  EXPECT_EQ(prof[0].op_type, "Loop");
  EXPECT_EQ(prof[1].op_type, "Mul");
  EXPECT_EQ(prof[2].op_type, "Less");
  EXPECT_EQ(prof[1].node, prof[0].node + " > " + "Mul node 'Mul_0'") << prof[1].node;
  EXPECT_GT(prof[1].total_ms, 0.0);
  EXPECT_LE(sum, wall_ms);

  // If: cond from the input; then: y + 1, else: y * 3, each a one-node branch.
  Builder then_b, else_b;
  for (auto* b : {&then_b, &else_b}) {
    int y = b->outer("y");
    int k = b->constant("k", make_tensor<float>({1}, {b == &then_b ? 1.f : 3.f}));
    int o = b->value(b == &then_b ? "t_out" : "e_out");
    b->node(b == &then_b ? "Add" : "Mul", {y, k}, {o});
    b->output(o);
  }
  Builder m2;
  int c = m2.input("c", DType::kBool);
  m2.input("y", DType::kFloat32);
  int z = m2.value("z");
  Node& n = m2.node("If", {c}, {z});
  n.attributes.push_back(graph_attr("then_branch", then_b.g));
  n.attributes.push_back(graph_attr("else_branch", else_b.g));
  m2.output(z);
  auto s2 = session_of(m2);
  ASSERT_TRUE(s2);
  s2->set_profiling(true);
  auto out = s2->run({{"c", scalar_bool(true)}, {"y", make_tensor<float>({1}, {2.f})}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ(to_vector<float>(out.value()[0]), std::vector<float>{3.f});
  prof = s2->profile(&runs);
  names.clear();
  for (const StepProfile& p : prof) names.push_back(p.node);
  ASSERT_EQ(prof.size(), 2u) << ::testing::PrintToString(names);  // the else branch never ran
  EXPECT_EQ(prof[0].op_type, "If");
  EXPECT_EQ(prof[1].op_type, "Add");
  EXPECT_GT(prof[1].total_ms, 0.0);
  // Turning profiling on again clears the sub-plans' counts too: after one run of the
  // else branch, only its Mul is listed.
  s2->set_profiling(true);
  out = s2->run({{"c", scalar_bool(false)}, {"y", make_tensor<float>({1}, {2.f})}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ(to_vector<float>(out.value()[0]), std::vector<float>{6.f});
  prof = s2->profile(&runs);
  names.clear();
  for (const StepProfile& p : prof) names.push_back(p.node);
  ASSERT_EQ(prof.size(), 2u) << ::testing::PrintToString(names);
  EXPECT_EQ(runs, 1u);
  EXPECT_EQ(prof[1].op_type, "Mul");
  EXPECT_GT(prof[1].total_ms, 0.0);
}

TEST(Loop, RunTimeTripCountAndCondTogether) {
  Builder main = doubling_while(true);
  auto sess = session_of(main);
  ASSERT_TRUE(sess);
  for (int64_t m : {0, 1, 3, 20}) {
    auto out = sess->run({{"M", scalar_i64(m)}, {"cond", scalar_bool(true)}, {"y", make_tensor<float>({1}, {1.f})},
                          {"limit", make_tensor<float>({1}, {100.f})}});
    ASSERT_TRUE(out.is_ok()) << out.status().to_string();
    float want = 1.f;
    bool c = true;
    for (int64_t t = 0; t < m && c; ++t) {
      want *= 2.f;
      c = want < 100.f;
    }
    EXPECT_EQ(to_vector<float>(out.value()[0]), std::vector<float>{want}) << "M " << m;
  }
  auto bad = sess->run({{"M", scalar_i64(-1)}, {"cond", scalar_bool(true)}, {"y", make_tensor<float>({1}, {1.f})},
                        {"limit", make_tensor<float>({1}, {100.f})}});
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("Loop"), std::string::npos) << bad.status().to_string();
  EXPECT_NE(bad.status().message().find("negative"), std::string::npos) << bad.status().to_string();
}

TEST(Loop, RunTimeWhileThatNeverEndsIsAnError) {
  Builder body;
  body.input("i", DType::kInt64);
  int c = body.input("c", DType::kBool);
  int y = body.input("y_in", DType::kFloat32);
  int c2 = body.value("c_out"), y2 = body.value("y_out");
  body.node("Identity", {c}, {c2});
  body.node("Identity", {y}, {y2});
  body.output(c2);
  body.output(y2);
  Builder main;
  int cond = main.input("cond", DType::kBool);
  int yin = main.input("y", DType::kFloat32);
  int yf = main.value("y_final");
  main.node("Loop", {-1, cond, yin}, {yf}).attributes.push_back(graph_attr("body", body.g));
  main.output(yf);
  auto sess = session_of(main);
  ASSERT_TRUE(sess);
  auto bad = sess->run({{"cond", scalar_bool(true)}, {"y", make_tensor<float>({1}, {1.f})}});
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("never end"), std::string::npos) << bad.status().to_string();
  auto ok = sess->run({{"cond", scalar_bool(false)}, {"y", make_tensor<float>({1}, {4.f})}});
  ASSERT_TRUE(ok.is_ok()) << ok.status().to_string();
  EXPECT_EQ(to_vector<float>(ok.value()[0]), std::vector<float>{4.f});
}

/// Loop inside a Loop body; the inner body reads a value of the main graph (two levels up).
TEST(Loop, NestedLoopsReadTheMainGraph) {
  Builder inner;
  inner.input("j", DType::kInt64);
  int ic = inner.input("ic", DType::kBool);
  int z = inner.input("z_in", DType::kFloat32);
  int x = inner.outer("x");
  int ic2 = inner.value("ic_out"), z2 = inner.value("z_out");
  inner.node("Identity", {ic}, {ic2});
  inner.node("Add", {z, x}, {z2});
  inner.output(ic2);
  inner.output(z2);

  Builder outer_body;
  outer_body.input("i", DType::kInt64);
  int c = outer_body.input("c", DType::kBool);
  int y = outer_body.input("y_in", DType::kFloat32);
  int m_in = outer_body.constant("M_inner", scalar_i64(3));
  int c2 = outer_body.value("c_out"), y2 = outer_body.value("y_out");
  outer_body.node("Identity", {c}, {c2});
  outer_body.node("Loop", {m_in, -1, y}, {y2}).attributes.push_back(graph_attr("body", inner.g));
  outer_body.output(c2);
  outer_body.output(y2);

  Builder main;
  int m = main.input("M", DType::kInt64);
  int yin = main.input("y", DType::kFloat32);
  main.input("x", DType::kFloat32);
  int yf = main.value("y_final");
  main.node("Loop", {m, -1, yin}, {yf}).attributes.push_back(graph_attr("body", outer_body.g));
  main.output(yf);
  auto sess = session_of(main);
  ASSERT_TRUE(sess);
  auto out = sess->run({{"M", scalar_i64(2)}, {"y", make_tensor<float>({2}, {1.f, 2.f})},
                        {"x", make_tensor<float>({2}, {0.5f, -1.f})}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ(to_vector<float>(out.value()[0]), (std::vector<float>{1.f + 6 * 0.5f, 2.f - 6.f}));
}

// ---- Loop run at plan time ----

/// y' = Concat(y, [float(i)]): the loop-carried value grows every iteration, which the
/// run-time plan cannot hold; the session plans by value and the loop runs at plan time.
TEST(Loop, GrowingLoopCarriedValueRunsAtPlanTime) {
  Builder body;
  int i = body.input("i", DType::kInt64);
  int c = body.input("c", DType::kBool);
  int y = body.input("y_in", DType::kFloat32);
  int one = body.constant("shape1", make_tensor<int64_t>({1}, {1}));
  int fi = body.value("fi"), fi1 = body.value("fi1"), y2 = body.value("y_out"), c2 = body.value("c_out");
  body.node("Identity", {c}, {c2});
  body.node("Cast", {i}, {fi}).attributes.push_back(int_attr("to", static_cast<int64_t>(DType::kFloat32)));
  body.node("Reshape", {fi, one}, {fi1});
  body.node("Concat", {y, fi1}, {y2}).attributes.push_back(int_attr("axis", 0));
  body.output(c2);
  body.output(y2);
  Builder main;
  int m = main.input("M", DType::kInt64);
  int yin = main.input("y", DType::kFloat32);
  int yf = main.value("y_final");
  main.node("Loop", {m, -1, yin}, {yf}).attributes.push_back(graph_attr("body", body.g));
  main.output(yf);
  auto sess = session_of(main);
  ASSERT_TRUE(sess);
  for (int64_t mv : {4, 0, 2}) {
    auto out = sess->run({{"M", scalar_i64(mv)}, {"y", make_tensor<float>({1}, {7.f})}});
    ASSERT_TRUE(out.is_ok()) << out.status().to_string();
    std::vector<float> want = {7.f};
    for (int64_t t = 0; t < mv; ++t) want.push_back(static_cast<float>(t));
    EXPECT_EQ(to_vector<float>(out.value()[0]), want) << "M " << mv;
  }
}

/// ONNX's expansion of Range: the body's loop-carried input has no type; it takes the
/// Loop input's. range = [start, start + delta, ...] (M = 3 values).
TEST(Loop, UntypedBodyInputTakesTheLoopInputsType) {
  Builder body;
  body.input("i", DType::kInt64);
  int c = body.input("c", DType::kBool);
  int prev = body.input("prev", DType::kUndefined);
  int delta = body.outer("delta");
  int c2 = body.value("c_out"), cur = body.value("current"), r = body.value("range");
  body.node("Identity", {c}, {c2});
  body.node("Add", {prev, delta}, {cur});
  body.node("Identity", {prev}, {r});
  body.output(c2);
  body.output(cur);
  body.output(r);
  Builder main;
  int m = main.input("M", DType::kInt64);
  int cond = main.input("cond", DType::kBool);
  int start = main.input("start", DType::kInt32);
  main.input("delta", DType::kInt32);
  int last = main.value("last"), range = main.value("range_out");
  main.node("Loop", {m, cond, start}, {last, range}).attributes.push_back(graph_attr("body", body.g));
  main.output(last);
  main.output(range);
  auto sess = session_of(main);
  ASSERT_TRUE(sess);
  auto out = sess->run({{"M", scalar_i64(3)}, {"cond", scalar_bool(true)}, {"start", make_tensor<int32_t>({}, {10})},
                        {"delta", make_tensor<int32_t>({}, {-3})}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ(to_vector<int32_t>(out.value()[0]), std::vector<int32_t>{1});
  EXPECT_EQ(out.value()[1].shape(), (Shape{3}));
  EXPECT_EQ(to_vector<int32_t>(out.value()[1]), (std::vector<int32_t>{10, 7, 4}));
}

// ---- Loop errors ----

Builder loop_with(int n_body_outputs, DType cond_dtype, bool with_m, bool with_cond, DType body_cond_dtype = DType::kBool) {
  Builder body;
  body.input("i", DType::kInt64);
  int c = body.input("c", DType::kBool);
  int y = body.input("y_in", DType::kFloat32);
  int c2 = body.value("c_out"), y2 = body.value("y_out");
  if (body_cond_dtype == DType::kBool) body.node("Identity", {c}, {c2});
  else body.node("Cast", {c}, {c2}).attributes.push_back(int_attr("to", static_cast<int64_t>(body_cond_dtype)));
  body.node("Identity", {y}, {y2});
  body.output(c2);
  if (n_body_outputs > 1) body.output(y2);
  Builder main;
  int m = with_m ? main.constant("M", scalar_i64(2)) : -1;
  int cond = with_cond ? main.input("cond", cond_dtype) : -1;
  int yin = main.input("y", DType::kFloat32);
  int yf = main.value("y_final");
  Node& n = main.node("Loop", {m, cond, yin}, {yf});
  n.name = "my_loop";
  n.attributes.push_back(graph_attr("body", body.g));
  main.output(yf);
  return main;
}

Status run_loop_with(Builder b, DType cond_dtype) {
  auto sess = session_of(b);
  if (!sess) return internal_error("no session");
  std::vector<std::pair<std::string, Tensor>> ins = {{"y", make_tensor<float>({1}, {1.f})}};
  if (b.g->inputs.size() > 1)
    ins.push_back({"cond", cond_dtype == DType::kBool ? scalar_bool(true) : make_tensor<float>({}, {1.f})});
  return sess->run(ins).status();
}

TEST(Loop, BadNodesAreClearErrors) {
  struct Case {
    Builder b;
    DType cond_dtype;
    std::string want;
  };
  std::vector<Case> cases;
  cases.push_back({loop_with(1, DType::kBool, true, true), DType::kBool, "gives 1 outputs"});
  cases.push_back({loop_with(2, DType::kFloat32, true, true), DType::kFloat32, "cond must be a bool"});
  cases.push_back({loop_with(2, DType::kBool, false, false), DType::kBool, "never end"});
  cases.push_back({loop_with(2, DType::kBool, true, true, DType::kFloat32), DType::kBool, "(cond) must be a bool"});
  for (Case& c : cases) {
    Status s = run_loop_with(c.b, c.cond_dtype);
    ASSERT_FALSE(s.is_ok()) << c.want;
    EXPECT_NE(s.message().find("my_loop"), std::string::npos) << s.to_string();
    EXPECT_NE(s.message().find(c.want), std::string::npos) << s.to_string();
  }
  // The well-formed variant runs: y stays (the body is an identity).
  EXPECT_TRUE(run_loop_with(loop_with(2, DType::kBool, true, true), DType::kBool).is_ok());
}

TEST(Loop, LoopCarriedDtypeChangeIsAnError) {
  Builder body;
  body.input("i", DType::kInt64);
  int c = body.input("c", DType::kBool);
  int y = body.input("y_in", DType::kFloat32);
  int c2 = body.value("c_out"), y2 = body.value("y_out");
  body.node("Identity", {c}, {c2});
  body.node("Cast", {y}, {y2}).attributes.push_back(int_attr("to", static_cast<int64_t>(DType::kInt64)));
  body.output(c2);
  body.output(y2);
  Builder main;
  int m = main.input("M", DType::kInt64);
  int yin = main.input("y", DType::kFloat32);
  int yf = main.value("y_final");
  main.node("Loop", {m, -1, yin}, {yf}).attributes.push_back(graph_attr("body", body.g));
  main.output(yf);
  auto sess = session_of(main);
  ASSERT_TRUE(sess);
  auto out = sess->run({{"M", scalar_i64(2)}, {"y", make_tensor<float>({1}, {1.f})}});
  ASSERT_FALSE(out.is_ok());
  EXPECT_NE(out.status().message().find("comes in as float"), std::string::npos) << out.status().to_string();
}

// ---- Scan ----

/// Scan-9+: state s [2]; scan inputs x [2, 3] along axis 1, reversed, and w [3] along axis
/// 0; body s' = s + x_slice + w_slice; scan output 10 * s' stacked along axis 1, reversed.
TEST(Scan, AxesAndDirections) {
  Builder body;
  int s = body.input("s_in", DType::kFloat32);
  int xs = body.input("x_slice", DType::kFloat32);
  int ws = body.input("w_slice", DType::kFloat32);
  int ten = body.constant("ten", make_tensor<float>({}, {10.f}));
  int a = body.value("a"), s2 = body.value("s_out"), o = body.value("o");
  body.node("Add", {s, xs}, {a});
  body.node("Add", {a, ws}, {s2});
  body.node("Mul", {s2, ten}, {o});
  body.output(s2);
  body.output(o);
  Builder main;
  int s0 = main.input("s", DType::kFloat32);
  int x = main.input("x", DType::kFloat32);
  int w = main.input("w", DType::kFloat32);
  int sf = main.value("s_final"), out = main.value("out");
  Node& n = main.node("Scan", {s0, x, w}, {sf, out}, 16);
  n.attributes = {graph_attr("body", body.g), int_attr("num_scan_inputs", 2), ints_attr("scan_input_axes", {1, 0}),
                  ints_attr("scan_input_directions", {1, 0}), ints_attr("scan_output_axes", {-1}),
                  ints_attr("scan_output_directions", {1})};
  main.output(sf);
  main.output(out);
  auto sess = session_of(main);
  ASSERT_TRUE(sess);
  std::vector<float> sv = {1.f, -1.f}, xv = {1.f, 2.f, 3.f, 4.f, 5.f, 6.f}, wv = {0.5f, 0.25f, 0.125f};
  auto r = sess->run({{"s", make_tensor<float>({2}, sv)}, {"x", make_tensor<float>({2, 3}, xv)},
                      {"w", make_tensor<float>({3}, wv)}});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  std::vector<float> st = sv, want_out(6);
  for (int t = 0; t < 3; ++t) {
    int xi = 2 - t;  // reversed input
    for (int k = 0; k < 2; ++k) st[k] = st[k] + xv[k * 3 + xi] + wv[t];
    int oi = 2 - t;  // reversed output along axis 1 of [2, 3]
    for (int k = 0; k < 2; ++k) want_out[k * 3 + oi] = 10.f * st[k];
  }
  EXPECT_EQ(to_vector<float>(r.value()[0]), st);
  EXPECT_EQ(r.value()[1].shape(), (Shape{2, 3}));
  EXPECT_EQ(to_vector<float>(r.value()[1]), want_out);
}

/// Scan-8: batch axis 0, scan axis 1, sequence_lens omitted; running sums per batch element.
TEST(Scan, Opset8BatchAxis) {
  Builder body;
  int s = body.input("s_in", DType::kFloat32);
  int xs = body.input("x_slice", DType::kFloat32);
  int s2 = body.value("s_out"), o = body.value("o");
  body.node("Add", {s, xs}, {s2});
  body.node("Identity", {s2}, {o});
  body.output(s2);
  body.output(o);
  Builder main;
  int s0 = main.input("s", DType::kFloat32);
  int x = main.input("x", DType::kFloat32);
  int sf = main.value("s_final"), out = main.value("out");
  Node& n = main.node("Scan", {-1, s0, x}, {sf, out}, 8);
  n.attributes = {graph_attr("body", body.g), int_attr("num_scan_inputs", 1)};
  main.output(sf);
  main.output(out);
  auto sess = session_of(main);
  ASSERT_TRUE(sess);
  std::vector<float> sv = {1.f, 2.f, -1.f, -2.f};
  std::vector<float> xv(2 * 3 * 2);
  for (size_t k = 0; k < xv.size(); ++k) xv[k] = 0.5f * static_cast<float>(k) - 2.f;
  auto r = sess->run({{"s", make_tensor<float>({2, 2}, sv)}, {"x", make_tensor<float>({2, 3, 2}, xv)}});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  std::vector<float> st = sv, want_out;
  for (int b = 0; b < 2; ++b)
    for (int t = 0; t < 3; ++t)
      for (int k = 0; k < 2; ++k) {
        st[b * 2 + k] += xv[(b * 3 + t) * 2 + k];
        want_out.push_back(st[b * 2 + k]);
      }
  EXPECT_EQ(to_vector<float>(r.value()[0]), st);
  EXPECT_EQ(r.value()[1].shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(to_vector<float>(r.value()[1]), want_out);
}

TEST(Scan, BadNodesAreClearErrors) {
  auto make = [](int64_t num_scan_inputs, Shape w_shape, int opset, bool short_seq) {
    Builder body;
    int s = body.input("s_in", DType::kFloat32);
    int xs = body.input("x_slice", DType::kFloat32);
    int ws = body.input("w_slice", DType::kFloat32);
    int a = body.value("a"), s2 = body.value("s_out");
    body.node("Add", {s, xs}, {a});
    body.node("Add", {a, ws}, {s2});
    body.output(s2);
    Builder main;
    int seq = short_seq ? main.constant("seq", make_tensor<int64_t>({1}, {2})) : -1;
    int s0 = main.input("s", DType::kFloat32);
    int x = main.input("x", DType::kFloat32);
    int w = main.input("w", DType::kFloat32);
    int sf = main.value("s_final");
    std::vector<int> ins = {s0, x, w};
    if (opset == 8) ins.insert(ins.begin(), seq);
    Node& n = main.node("Scan", ins, {sf}, opset);
    n.name = "my_scan";
    n.attributes = {graph_attr("body", body.g), int_attr("num_scan_inputs", num_scan_inputs)};
    main.output(sf);
    auto sess = session_of(main);
    Shape s_shape = opset == 8 ? Shape{1, 2} : Shape{2};
    Shape x_shape = opset == 8 ? Shape{1, 3, 2} : Shape{3, 2};
    auto zeros = [](Shape sh) {
      auto t = Tensor::allocate(DType::kFloat32, sh);
      return std::move(t).value();
    };
    return sess->run({{"s", zeros(s_shape)}, {"x", zeros(x_shape)}, {"w", zeros(w_shape)}}).status();
  };
  Status ok = make(2, {3, 2}, 16, false);
  EXPECT_TRUE(ok.is_ok()) << ok.to_string();
  struct Case {
    Status s;
    std::string want;
  };
  std::vector<Case> cases = {
      {make(4, {3, 2}, 16, false), "num_scan_inputs is 4"},
      {make(3, {3, 2}, 16, false), "scan input 1 has length 3 along its scan axis; scan input 0 has 2"},
      {make(1, {3, 2}, 16, false), "2 state inputs but only 1 outputs"},
      {make(2, {4, 2}, 16, false), "has length 4"},
      {make(2, {1, 3, 2}, 8, true), "sequence_lens"},
  };
  for (const Case& c : cases) {
    ASSERT_FALSE(c.s.is_ok()) << c.want;
    EXPECT_NE(c.s.message().find("my_scan"), std::string::npos) << c.s.to_string();
    EXPECT_NE(c.s.message().find(c.want), std::string::npos) << c.s.to_string();
  }
  Status ok8 = make(2, {1, 3, 2}, 8, false);
  EXPECT_TRUE(ok8.is_ok()) << ok8.to_string();
}

}  // namespace
}  // namespace tessera
