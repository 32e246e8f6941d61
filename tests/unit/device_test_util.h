// Helpers for the device backends' tests (CUDA, Vulkan): run a one-node (or small) graph in
// a Session on the device backend and on the CPU reference, and compare. Without the device
// the tests skip (GTEST_SKIP, reported by ctest as skipped) with the reason.
//
// One body for every device: a test's util header defines TSR_DEVICE_NS (the namespace),
// TSR_DEVICE_BACKEND (the backend name, "cuda"), TSR_DEVICE_LABEL ("CUDA") and
// TSR_DEVICE_DRY_RUN_ENV (the variable that runs the device side on the CPU), then includes
// this file (no include guard: once per device), e.g. tests/unit/cuda_test_util.h.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "backends/backend.h"
#include "tessera/session.h"

#define TSR_REQUIRE_DEVICE_IMPL(ns, label)                                           \
  do {                                                                               \
    const std::string why = ::tessera::ns::no_device_reason();                       \
    if (!why.empty()) GTEST_SKIP() << "no " label " device: " << why;               \
  } while (0)

namespace tessera::TSR_DEVICE_NS {

/// TSR_DEVICE_DRY_RUN_ENV=1 (a self-check of the tests on machines without the device): the
/// device side runs on the CPU too and placements are not checked, so every test graph,
/// attribute and tolerance is exercised once through the planner and the CPU reference.
inline bool dry_run_on_cpu() {
  const char* e = std::getenv(TSR_DEVICE_DRY_RUN_ENV);
  return e && std::string(e) == "1";
}

/// Why the device tests cannot run here ("" when a device is present).
inline std::string no_device_reason() {
  static const std::string reason = [] {
    if (dry_run_on_cpu()) return std::string();
    auto b = make_backend(TSR_DEVICE_BACKEND);
    return b.is_ok() ? std::string() : b.status().message();
  }();
  return reason;
}


/// Uniform random float32 tensor in [lo, hi) (never all zeros), seeded per call site.
inline Tensor random_tensor(const Shape& shape, uint32_t seed, float lo = -2.f, float hi = 2.f) {
  Tensor t = Tensor::allocate(DType::kFloat32, shape).value();
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = d(rng);
  return t;
}

inline Tensor int64_tensor(const Shape& shape, const std::vector<int64_t>& v) {
  Tensor t = Tensor::allocate(DType::kInt64, shape).value();
  for (size_t i = 0; i < v.size(); ++i) t.data_as<int64_t>()[i] = v[i];
  return t;
}

inline Tensor float_tensor(const Shape& shape, const std::vector<float>& v) {
  Tensor t = Tensor::allocate(DType::kFloat32, shape).value();
  for (size_t i = 0; i < v.size(); ++i) t.data_as<float>()[i] = v[i];
  return t;
}

/// One input of a test graph: a graph input (fed at run time) or a constant (initializer).
struct TestInput {
  Tensor tensor;
  bool constant = false;
  bool omitted = false;
};
inline TestInput feed(Tensor t) { return {std::move(t), false, false}; }
inline TestInput constant(Tensor t) { return {std::move(t), true, false}; }
inline TestInput omitted() { return {Tensor(), false, true}; }

inline Attribute attr_i(const std::string& n, int64_t v) { Attribute a; a.name = n; a.type = AttrType::kInt; a.i = v; return a; }
inline Attribute attr_f(const std::string& n, float v) { Attribute a; a.name = n; a.type = AttrType::kFloat; a.f = v; return a; }
inline Attribute attr_s(const std::string& n, const std::string& v) { Attribute a; a.name = n; a.type = AttrType::kString; a.s = v; return a; }
inline Attribute attr_ints(const std::string& n, std::vector<int64_t> v) { Attribute a; a.name = n; a.type = AttrType::kInts; a.ints = std::move(v); return a; }

/// A model with one node `op` (opset `opset`) over `inputs`, with `num_outputs` outputs.
inline std::shared_ptr<Model> one_node_model(const std::string& op, const std::vector<TestInput>& inputs,
                                             std::vector<Attribute> attrs, int opset, int num_outputs) {
  auto m = std::make_shared<Model>();
  Graph& g = m->graph;
  Node n;
  n.name = "node_" + op;
  n.op_type = op;
  n.opset = opset;
  n.attributes = std::move(attrs);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].omitted) {
      n.inputs.push_back(-1);
      continue;
    }
    Value v;
    v.name = "in" + std::to_string(i);
    v.dtype = inputs[i].tensor.dtype();
    if (inputs[i].constant) {
      v.initializer = std::make_shared<const Tensor>(inputs[i].tensor);
    } else {
      v.has_shape = true;
      for (int64_t d : inputs[i].tensor.shape()) v.shape.push_back(Dim{d, ""});
    }
    int id = g.add_value(v);
    if (!inputs[i].constant) g.inputs.push_back(id);
    n.inputs.push_back(id);
  }
  for (int k = 0; k < num_outputs; ++k) {
    Value v;
    v.name = "out" + std::to_string(k);
    int id = g.add_value(v);
    n.outputs.push_back(id);
    g.outputs.push_back(id);
  }
  g.nodes.push_back(std::move(n));
  return m;
}

/// Runs `model` on {backend}; returns the outputs and the placements.
inline Result<std::vector<Tensor>> run_on(const std::shared_ptr<Model>& model, const std::string& backend,
                                          const std::vector<std::pair<std::string, Tensor>>& feeds,
                                          std::vector<std::string>* placements = nullptr) {
  SessionOptions o;
  o.backends = {dry_run_on_cpu() ? std::string("cpu") : backend};
  o.threads = 1;
  TSR_ASSIGN_OR_RETURN(std::unique_ptr<Session> s, Session::create(model, o));
  TSR_ASSIGN_OR_RETURN(std::vector<Tensor> outs, s->run(feeds));
  if (placements) *placements = s->plan_stats().placements;
  return outs;
}

/// Expects |device - cpu| <= atol + rtol * |cpu| elementwise (NaN where the CPU has NaN).
inline void expect_close(const Tensor& got, const Tensor& want, double atol, double rtol, const std::string& what) {
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  if (got.dtype() != DType::kFloat32) {
    ASSERT_EQ(got.nbytes(), want.nbytes()) << what;
    EXPECT_EQ(std::memcmp(got.data(), want.data(), got.nbytes()), 0) << what << ": bytes differ";
    return;
  }
  int bad = 0;
  for (int64_t i = 0; i < got.numel(); ++i) {
    const double g = got.data_as<float>()[i], w = want.data_as<float>()[i];
    if (std::isnan(w) && std::isnan(g)) continue;
    if (!(std::fabs(g - w) <= atol + rtol * std::fabs(w))) {
      if (++bad <= 5) ADD_FAILURE() << what << ": element " << i << ": " TSR_DEVICE_BACKEND " " << g << ", cpu " << w;
    }
  }
  EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << got.numel() << " elements differ";
}

/// Runs one node on the device and on the CPU and compares every output. `expect_on_device`:
/// the node must have been placed on the device (not fallen back).
inline void check_node(const std::string& op, const std::vector<TestInput>& inputs, std::vector<Attribute> attrs,
                       double atol = 1e-6, double rtol = 1e-6, int opset = 17, int num_outputs = 1,
                       bool expect_on_device = true) {
  std::string what = op;
  for (const auto& in : inputs) what += " " + (in.omitted ? std::string("-") : shape_to_string(in.tensor.shape()));
  auto model = one_node_model(op, inputs, std::move(attrs), opset, num_outputs);
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i].constant && !inputs[i].omitted) feeds.emplace_back("in" + std::to_string(i), inputs[i].tensor);
  std::vector<std::string> placements;
  auto cpu = run_on(model, "cpu", feeds);
  ASSERT_TRUE(cpu.is_ok()) << what << ": cpu: " << cpu.status().to_string();
  auto gpu = run_on(model, TSR_DEVICE_BACKEND, feeds, &placements);
  ASSERT_TRUE(gpu.is_ok()) << what << ": " TSR_DEVICE_BACKEND ": " << gpu.status().to_string();
  bool on_device = false;
  for (const auto& p : placements)
    if (p.find("node_" + op) != std::string::npos && p.find("-> " TSR_DEVICE_BACKEND) != std::string::npos) on_device = true;
  if (expect_on_device && !dry_run_on_cpu()) {
    EXPECT_TRUE(on_device) << what << ": the node was not placed on " TSR_DEVICE_LABEL;
  }
  ASSERT_EQ(gpu.value().size(), cpu.value().size());
  for (size_t k = 0; k < cpu.value().size(); ++k)
    expect_close(gpu.value()[k], cpu.value()[k], atol, rtol, what + " output " + std::to_string(k));
}

// ---- cases run on every device (each device test file calls them from its own TEST) ----

/// Nearest Resize from sizes at exact ties, every transformation and nearest mode: the
/// kernels' integer path (runtime/ops/resize_nearest.h) must give the CPU's indices. Lengths
/// where a float coordinate had put an integer or half-integer x a rounding to the wrong side
/// (55 -> 119 and 48 -> 112 half_pixel floor, 21 -> 51 and 30 -> 92 asymmetric floor,
/// 52 -> 120 align_corners ceil, 56 -> 75 half_pixel round_prefer_floor).
inline void check_nearest_resize_ties_from_sizes(uint32_t seed) {
  for (auto [in, out] : {std::pair<Shape, Shape>{{1, 2, 55, 48}, {1, 2, 119, 112}},
                         std::pair<Shape, Shape>{{1, 1, 21, 30}, {1, 1, 51, 92}},
                         std::pair<Shape, Shape>{{1, 1, 52, 56}, {1, 1, 120, 75}}}) {
    Tensor img = random_tensor(in, seed++);
    auto sizes = constant(int64_tensor({4}, {out[0], out[1], out[2], out[3]}));
    for (const char* coord : {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel", "half_pixel_symmetric"})
      for (const char* nearest : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"})
        check_node("Resize", {feed(img), omitted(), omitted(), sizes},
                   {attr_s("mode", "nearest"), attr_s("nearest_mode", nearest),
                    attr_s("coordinate_transformation_mode", coord)}, 0, 0, 19);
  }
  // Lengths past the Vulkan shader's 32-bit bound ((2 out - 1) in + 2 out): the node is
  // declined there and runs on the CPU; CUDA's 64-bit path takes it. Output 57118 of
  // 18798 -> 57119 read pixel 0 when the shader's bound was too loose.
  Tensor row = random_tensor({1, 1, 1, 18798}, seed++);
  check_node("Resize", {feed(row), omitted(), omitted(), constant(int64_tensor({4}, {1, 1, 1, 57119}))},
             {attr_s("mode", "nearest"), attr_s("nearest_mode", "floor")}, 0, 0, 19, 1, /*expect_on_device=*/false);
}

/// Reshape, Flatten, Unsqueeze, Squeeze and Identity on the device equal the CPU's.
inline void check_shape_ops_are_device_copies() {
  check_node("Reshape", {feed(random_tensor({2, 3, 4}, 900)), constant(int64_tensor({2}, {6, -1}))}, {}, 0, 0, 14);
  check_node("Flatten", {feed(random_tensor({2, 3, 4}, 901))}, {attr_i("axis", 2)}, 0, 0, 13);
  check_node("Unsqueeze", {feed(random_tensor({2, 3}, 902)), constant(int64_tensor({1}, {1}))}, {}, 0, 0, 13);
  check_node("Squeeze", {feed(random_tensor({2, 1, 3}, 903)), constant(int64_tensor({1}, {1}))}, {}, 0, 0, 13);
  check_node("Identity", {feed(random_tensor({5}, 904))}, {}, 0, 0, 13);
}

/// int64 Add is not a device kernel: it runs on the CPU with copies, and gives the CPU's result.
inline void check_unsupported_dtypes_fall_back_to_the_cpu() {
  Tensor a = int64_tensor({3}, {1, 2, 3}), b = int64_tensor({3}, {10, 20, 30});
  auto model = one_node_model("Add", {feed(a), feed(b)}, {}, 13, 1);
  std::vector<std::string> placements;
  auto r = run_on(model, TSR_DEVICE_BACKEND, {{"in0", a}, {"in1", b}}, &placements);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r.value()[0].data_as<int64_t>()[2], 33);
  bool on_cpu = false;
  for (const auto& p : placements) on_cpu |= p.find("node_Add") != std::string::npos && p.find("-> cpu") != std::string::npos;
  EXPECT_TRUE(on_cpu || dry_run_on_cpu());
}

/// x -> Conv -> Relu -> CumSum (CPU) -> Mul(const) -> Softmax -> y: copies both ways in
/// the middle of a device graph; the whole run matches the CPU.
inline void check_cpu_fallback_in_the_middle() {
  auto m = std::make_shared<Model>();
  Graph& g = m->graph;
  auto value = [&](const std::string& name, std::shared_ptr<const Tensor> init = nullptr, DType dt = DType::kUndefined) {
    Value v;
    v.name = name;
    v.dtype = init ? init->dtype() : dt;
    v.initializer = std::move(init);
    return g.add_value(v);
  };
  Value xv;
  xv.name = "x";
  xv.dtype = DType::kFloat32;
  xv.has_shape = true;
  xv.shape = {{1, ""}, {3, ""}, {8, ""}, {8, ""}};
  int x = g.add_value(xv);
  g.inputs.push_back(x);
  int w = value("w", std::make_shared<const Tensor>(random_tensor({4, 3, 3, 3}, 1000)));
  int axis = value("axis", std::make_shared<const Tensor>(int64_tensor({}, {3})));
  int k = value("k", std::make_shared<const Tensor>(random_tensor({4, 1, 1}, 1001)));
  int c = value("c"), r = value("r"), cs = value("cs"), mu = value("mu"), y = value("y");
  auto node = [&](const std::string& op, std::vector<int> ins, int out, std::vector<Attribute> attrs = {}) {
    Node n;
    n.name = op;
    n.op_type = op;
    n.opset = 13;
    n.inputs = std::move(ins);
    n.outputs = {out};
    n.attributes = std::move(attrs);
    g.nodes.push_back(n);
  };
  node("Conv", {x, w}, c, {attr_ints("pads", {1, 1, 1, 1})});
  node("Relu", {c}, r);
  node("CumSum", {r, axis}, cs);
  node("Mul", {cs, k}, mu);
  node("Softmax", {mu}, y, {attr_i("axis", -1)});
  g.outputs.push_back(y);
  Tensor in = random_tensor({1, 3, 8, 8}, 1002);
  auto cpu = run_on(m, "cpu", {{"x", in}});
  ASSERT_TRUE(cpu.is_ok()) << cpu.status().to_string();
  std::vector<std::string> placements;
  auto gpu = run_on(m, TSR_DEVICE_BACKEND, {{"x", in}}, &placements);
  ASSERT_TRUE(gpu.is_ok()) << gpu.status().to_string();
  std::string all;
  for (const auto& p : placements) all += p + "\n";
  if (!dry_run_on_cpu()) {  // (the dry run on the CPU has no placements to check)
    EXPECT_NE(all.find("copy 'r' " TSR_DEVICE_BACKEND " -> cpu"), std::string::npos) << all;
    EXPECT_NE(all.find("copy 'cs' cpu -> " TSR_DEVICE_BACKEND), std::string::npos) << all;
    EXPECT_NE(all.find("'CumSum' -> cpu"), std::string::npos) << all;
    EXPECT_NE(all.find("Conv node 'Conv' + Relu node 'Relu' -> " TSR_DEVICE_BACKEND), std::string::npos) << all;  // fused
    EXPECT_NE(all.find("'Softmax' -> " TSR_DEVICE_BACKEND), std::string::npos) << all;
  }
  expect_close(gpu.value()[0], cpu.value()[0], 1e-5, 1e-5, "graph");
}

}  // namespace tessera::TSR_DEVICE_NS
