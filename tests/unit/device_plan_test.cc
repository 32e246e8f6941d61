// The planner and executor with a backend whose memory is not host memory, checked without
// a GPU: a fake device backend keeps its "device" memory in separate host buffers, counts
// copies, and runs Relu and Add with the reference kernels. Right looks like: the same
// outputs as the CPU-only plan, copy steps exactly where a value changes memory, plan
// constants uploaded once per plan (not per run), graph outputs on the host.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <set>

#include "backends/backend.h"
#include "backends/cpu/ref/ref_kernels.h"
#include "runtime/plan/plan.h"
#include "tessera/session.h"

namespace tessera {
namespace {

class FakeDevice final : public Backend {
 public:
  std::string name() const override { return "fakedev"; }
  bool host_memory() const override { return false; }
  bool supports(const CompileContext& ctx) const override {
    return ctx.node.op_type == "Relu" || ctx.node.op_type == "Add";
  }
  Result<std::unique_ptr<Kernel>> compile(const CompileContext& ctx) const override {
    KernelFactory f = ref::find_ref_kernel(ctx.node.op_type);
    TSR_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> inner, f(ctx));
    // Check at run time that every tensor the kernel sees is device memory.
    struct Checked final : Kernel {
      const FakeDevice* dev;
      std::unique_ptr<Kernel> k;
      Status run(const KernelContext& c) const override {
        for (const Tensor* t : c.inputs)
          if (t && t->nbytes() && !dev->owns(t->data())) return internal_error("a device kernel got host memory");
        for (const Tensor* t : c.outputs)
          if (t && t->nbytes() && !dev->owns(t->data())) return internal_error("a device kernel got host memory");
        return k->run(c);
      }
    };
    auto c = std::make_unique<Checked>();
    c->dev = this;
    c->k = std::move(inner);
    return std::unique_ptr<Kernel>(std::move(c));
  }
  Result<void*> allocate(uint64_t bytes) override {
    void* p = std::aligned_alloc(256, (bytes + 255) / 256 * 256 + 256);
    std::memset(p, 0xFF, bytes);
    blocks.insert({static_cast<uint8_t*>(p), bytes});
    ++allocations;
    return p;
  }
  void deallocate(void* p) override {
    for (auto it = blocks.begin(); it != blocks.end(); ++it)
      if (it->first == p) {
        blocks.erase(it);
        break;
      }
    std::free(p);
  }
  Status copy_to_device(void* dst, const void* src, uint64_t bytes) override {
    if (!owns(dst) || owns(src)) return internal_error("copy_to_device: wrong memory");
    std::memcpy(dst, src, bytes);
    ++to_device;
    return Status::ok();
  }
  Status copy_to_host(void* dst, const void* src, uint64_t bytes) override {
    if (owns(dst) || !owns(src)) return internal_error("copy_to_host: wrong memory");
    std::memcpy(dst, src, bytes);
    ++to_host;
    return Status::ok();
  }
  bool owns(const void* p) const {
    for (const auto& [base, bytes] : blocks)
      if (p >= base && p < base + bytes) return true;
    return false;
  }
  std::set<std::pair<uint8_t*, uint64_t>> blocks;
  int allocations = 0, to_device = 0, to_host = 0;
};

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

// y = Add(CumSum(Relu(x), axis 0), w) + Relu(x): Relu and Add on the device, CumSum on the
// CPU in the middle, w a constant, Relu(x) used on both sides.
Graph mixed_graph() {
  Graph g;
  int x = g.add_value(tensor_value("x", DType::kFloat32, {{-1, "n"}}, true));
  g.inputs.push_back(x);
  Value wv = tensor_value("w", DType::kFloat32);
  Tensor w = Tensor::allocate(DType::kFloat32, {5}).value();
  for (int i = 0; i < 5; ++i) w.data_as<float>()[i] = 0.5f * static_cast<float>(i) - 1.0f;
  wv.initializer = std::make_shared<const Tensor>(w);
  int wi = g.add_value(wv);
  Value av = tensor_value("axis", DType::kInt64);
  Tensor a = Tensor::allocate(DType::kInt64, {}).value();
  a.data_as<int64_t>()[0] = 0;
  av.initializer = std::make_shared<const Tensor>(a);
  int ai = g.add_value(av);
  int r = g.add_value(tensor_value("r", DType::kUndefined));
  int c = g.add_value(tensor_value("c", DType::kUndefined));
  int s = g.add_value(tensor_value("s", DType::kUndefined));
  int y = g.add_value(tensor_value("y", DType::kUndefined));
  g.nodes.push_back(node("Relu", {x}, {r}));
  g.nodes.push_back(node("CumSum", {r, ai}, {c}));
  g.nodes.push_back(node("Add", {c, wi}, {s}));
  g.nodes.push_back(node("Add", {s, r}, {y}));
  g.outputs.push_back(y);
  return g;
}

TEST(DevicePlan, CopiesWhereMemoryChangesAndMatchesTheCpu) {
  Graph g = mixed_graph();
  FakeDevice dev;
  auto cpu = make_cpu_backend();
  PlanOptions po;
  po.backends = {&dev, cpu.get()};
  auto planned = plan_graph(g, {{5}}, po);
  ASSERT_TRUE(planned.is_ok()) << planned.status().to_string();
  const Plan& p = *planned.value();
  // Steps: copy x up, Relu, copy r down, CumSum, copy c up, Add (w is an uploaded constant),
  // Add (r shared from the device), copy y down.
  std::vector<std::string> want = {"copy 'x' cpu -> fakedev", "Relu", "copy 'r' fakedev -> cpu", "CumSum",
                                   "copy 'c' cpu -> fakedev", "Add", "Add", "copy 'y' fakedev -> cpu"};
  ASSERT_EQ(p.placements.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NE(p.placements[i].find(want[i]), std::string::npos) << p.placements[i];
  EXPECT_NE(p.placements[1].find("-> fakedev"), std::string::npos);
  EXPECT_NE(p.placements[3].find("-> cpu"), std::string::npos);
  ASSERT_EQ(p.device_constants.size(), 1u);
  EXPECT_EQ(p.values[p.device_constants[0].host].name, "w");
  EXPECT_EQ(p.device, &dev);
  EXPECT_GT(p.device_bytes, p.device_arena_bytes);
  EXPECT_EQ(p.values[p.outputs[0]].device, nullptr);  // outputs end on the host
}

TEST(DevicePlan, ConstantsAreUploadedOncePerPlanAndRunsMatchTheCpu) {
  auto model = std::make_shared<Model>();
  model->graph = mixed_graph();
  // Sessions make their backends by name; this drives a plan the way Session::prepare does.
  FakeDevice dev;
  auto cpu = make_cpu_backend();
  PlanOptions po;
  po.backends = {&dev, cpu.get()};
  auto planned = plan_graph(model->graph, {{5}}, po);
  ASSERT_TRUE(planned.is_ok()) << planned.status().to_string();
  const Plan& p = *planned.value();
  void* buf = dev.allocate(p.device_bytes).value();
  ASSERT_TRUE(bind_device_arena(p, static_cast<uint8_t*>(buf)).is_ok());
  EXPECT_EQ(dev.to_device, 1);  // w, once
  Tensor arena = Tensor::allocate(DType::kUInt8, {static_cast<int64_t>(p.arena_bytes)}).value();
  Tensor x = Tensor::allocate(DType::kFloat32, {5}).value();
  const float xv[5] = {-1.5f, 2.f, 0.25f, -0.5f, 3.f};
  std::memcpy(x.data(), xv, sizeof(xv));
  std::vector<const Tensor*> ins = {&x};
  for (int run = 0; run < 2; ++run) {
    ASSERT_TRUE(execute_plan(p, arena.data_as<uint8_t>(), ins).is_ok());
    Tensor y = plan_value_view(p, p.outputs[0], arena.data_as<uint8_t>(), ins);
    ASSERT_FALSE(dev.owns(y.data()));
    // CPU: r = relu(x) = [0, 2, .25, 0, 3]; c = cumsum = [0, 2, 2.25, 2.25, 5.25];
    // y = c + w + r with w = [-1, -.5, 0, .5, 1].
    const float want[5] = {-1.f, 3.5f, 2.5f, 2.75f, 9.25f};
    for (int i = 0; i < 5; ++i) EXPECT_FLOAT_EQ(y.data_as<float>()[i], want[i]) << i;
  }
  // Per run: x and c up, r and y down; w was uploaded once at bind time.
  EXPECT_EQ(dev.to_device, 1 + 2 * 2);
  EXPECT_EQ(dev.to_host, 2 * 2);
  dev.deallocate(buf);
}

TEST(DevicePlan, CpuOnlyPlansHaveNoDeviceState) {
  Graph g = mixed_graph();
  auto cpu = make_cpu_backend();
  PlanOptions po;
  po.backends = {cpu.get()};
  auto planned = plan_graph(g, {{5}}, po);
  ASSERT_TRUE(planned.is_ok()) << planned.status().to_string();
  EXPECT_EQ(planned.value()->device, nullptr);
  EXPECT_EQ(planned.value()->device_bytes, 0u);
  EXPECT_EQ(planned.value()->steps.size(), 4u);  // no copy steps
  for (const auto& line : planned.value()->placements) EXPECT_EQ(line.find("copy"), std::string::npos) << line;
}

TEST(DevicePlan, CudaWithoutADeviceFallsBackToTheCpuWithANote) {
  auto b = make_backend("cuda");
  if (b.is_ok()) GTEST_SKIP() << "a CUDA device is present; this test is for machines without one";
  EXPECT_EQ(b.status().code(), StatusCode::kUnimplemented) << b.status().to_string();
  auto model = std::make_shared<Model>();
  model->graph = mixed_graph();
  SessionOptions o;
  o.backends = {"cuda"};
  auto s = Session::create(model, o);
  ASSERT_TRUE(s.is_ok()) << s.status().to_string();
  ASSERT_EQ(s.value()->notes().size(), 1u);
  EXPECT_NE(s.value()->notes()[0].find("cuda"), std::string::npos) << s.value()->notes()[0];
  Tensor x = Tensor::allocate(DType::kFloat32, {5}).value();
  for (int i = 0; i < 5; ++i) x.data_as<float>()[i] = static_cast<float>(i);
  auto out = s.value()->run({{"x", x}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  for (const auto& line : s.value()->plan_stats().placements) EXPECT_NE(line.find("-> cpu"), std::string::npos) << line;
}

}  // namespace
}  // namespace tessera
