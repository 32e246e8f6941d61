// Small builders for hand-made graphs in the planner tests (fusion_test.cc, nchwc_test.cc):
// a value, a node, int / ints attributes, and planning and running a graph.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "backends/backend.h"
#include "backends/cpu/thread_pool.h"
#include "runtime/plan/plan.h"
#include "tessera/graph.h"

namespace tessera::graph_test {

inline Value val(const std::string& name, DType dt = DType::kUndefined) {
  Value v;
  v.name = name;
  v.dtype = dt;
  return v;
}

inline Node node(const std::string& op, std::vector<int> ins, std::vector<int> outs, const std::string& name,
                 int opset = 17) {
  Node n;
  n.name = name;
  n.op_type = op;
  n.opset = opset;
  n.inputs = std::move(ins);
  n.outputs = std::move(outs);
  return n;
}

inline Attribute ints(const std::string& name, std::vector<int64_t> v) {
  Attribute a;
  a.name = name;
  a.type = AttrType::kInts;
  a.ints = std::move(v);
  return a;
}

inline Attribute int1(const std::string& name, int64_t v) {
  Attribute a;
  a.name = name;
  a.type = AttrType::kInt;
  a.i = v;
  return a;
}

/// What a planned graph computed: its outputs (copies) and the plan's placements.
struct Planned {
  std::vector<Tensor> outputs;
  std::vector<std::string> placements;
  /// Steps whose output 0 took its Step::inplace_input's memory (the same arena offset).
  int in_place = 0;
};

/// Plans `g` for `shapes` on the CPU backend with a pool of `threads`, fusion and NCHW16c
/// as asked (PlanOptions::fuse, ::nchwc), runs it once on `inputs` and returns the outputs
/// (empty, with a test failure recorded, when planning or running fails).
inline Planned plan_and_run(const Graph& g, const std::vector<Shape>& shapes, const std::vector<Tensor>& inputs,
                            int threads, bool fuse, bool nchwc) {
  auto cpu = make_cpu_backend();
  ThreadPool pool(threads);
  PlanOptions po;
  po.backends = {cpu.get()};
  po.thread_pool = &pool;
  po.fuse = fuse;
  po.nchwc = nchwc;
  Planned r;
  auto plan = plan_graph(g, shapes, po);
  EXPECT_TRUE(plan.is_ok()) << plan.status().to_string();
  if (!plan.is_ok()) return r;
  const Plan& p = *plan.value();
  Tensor arena = Tensor::allocate(DType::kUInt8, {static_cast<int64_t>(p.arena_bytes) + 64}).value();
  std::vector<const Tensor*> ins;
  for (const Tensor& t : inputs) ins.push_back(&t);
  Status s = execute_plan(p, arena.data_as<uint8_t>(), ins);
  EXPECT_TRUE(s.is_ok()) << s.to_string();
  if (!s.is_ok()) return r;
  for (int id : p.outputs) r.outputs.push_back(plan_value_view(p, id, arena.data_as<uint8_t>(), ins).clone().value());
  r.placements = p.placements;
  for (const Step& st : p.steps)
    if (st.inplace_input >= 0 && !st.outputs.empty() && st.outputs[0] >= 0) {
      const int z = st.inputs[static_cast<size_t>(st.inplace_input)];
      r.in_place += p.values[static_cast<size_t>(z)].home == PlanValue::Home::kArena &&
                    p.values[static_cast<size_t>(z)].offset == p.values[static_cast<size_t>(st.outputs[0])].offset;
    }
  return r;
}

}  // namespace tessera::graph_test
