// The plan: what the planner settles before the first kernel runs, for one set of concrete
// input shapes. Every value has a dtype, a shape and a home (a plan-time constant, a graph
// input, an outer-scope binding, or an offset in one arena); every node has a compiled
// kernel on a chosen backend, or has been folded into a constant at plan time.
// (XNNPACK's reshape/setup/run and TFLite Micro's Prepare/Eval follow the same split.)
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "backends/backend.h"
#include "tessera/graph.h"
#include "tessera/tensor.h"

namespace tessera {

struct Plan;

struct PlanValue {
  enum class Home { kConstant, kInput, kOuter, kArena };
  std::string name;
  DType dtype = DType::kUndefined;
  Shape shape;
  Home home = Home::kArena;
  std::shared_ptr<const Tensor> constant;  // kConstant
  int index = -1;                          // kInput: graph input #; kOuter: binding #
  uint64_t offset = 0;                     // kArena: byte offset in the arena
  uint64_t bytes = 0;                      // kArena: size in bytes
};

/// An If whose condition is only known at run time: both branches are planned.
struct IfStep {
  int cond = -1;                         // plan value id of the condition
  /// [0] else_branch, [1] then_branch. A branch that cannot be planned for these shapes
  /// (e.g. Silero VAD's 8 kHz branch given 16 kHz chunks) is null and its error is kept in
  /// branch_error: it is reported only if a run takes that branch.
  std::unique_ptr<Plan> branch[2];
  Status branch_error[2];
  /// For each branch: the parent plan value bound to each of its kOuter values.
  std::vector<int> outer_bindings[2];
  uint64_t sub_arena_offset = 0;         // where the branch arenas live in the parent arena
  mutable std::vector<const Tensor*> outer_scratch;  // reused per run
};

struct Step {
  const Node* node = nullptr;
  std::string backend;                  // the backend that runs it ("cpu")
  std::unique_ptr<Kernel> kernel;       // kernel ops
  std::unique_ptr<IfStep> if_step;      // control flow
  std::vector<int> inputs;              // plan value ids; -1 = omitted optional input
  std::vector<int> outputs;             // plan value ids; -1 = omitted optional output
  uint64_t scratch_offset = 0;
  uint64_t scratch_bytes = 0;
  /// Built at plan time, pointing into Plan::views, so a run allocates nothing.
  mutable KernelContext ctx;
};

struct Plan {
  std::vector<PlanValue> values;
  std::vector<Step> steps;
  std::vector<int> inputs;      // plan value ids of the graph inputs, in graph order
  std::vector<int> outputs;     // plan value ids of the graph outputs, in graph order
  std::vector<int> outer;       // plan value ids of kOuter values, by binding index
  uint64_t arena_bytes = 0;     // peak bytes of activations + scratch (incl. sub-plans)
  int folded_nodes = 0;         // nodes computed at plan time (shape computations)
  /// "node -> backend" lines, in execution order (sub-plans indented).
  std::vector<std::string> placements;
  /// One tensor view per value (dtype and shape fixed at plan time); execute_plan points
  /// them at the run's bytes.
  mutable std::vector<Tensor> views;
};

struct PlanOptions {
  /// Backends in order of preference; the CPU is always the last resort.
  std::vector<Backend*> backends;
  /// Largest output (elements) the planner computes at plan time when all inputs are
  /// constant.
  int64_t max_fold_elements = int64_t{1} << 16;
};

/// Plans `graph` for concrete `input_shapes` (one per graph input, in order). Errors name
/// the node and the problem: an unsupported op (with its opset), an attribute or shape
/// that the op's schema rejects, an input whose shape contradicts its declaration.
///
/// `input_values`, if given, holds one entry per graph input: a tensor whose value the plan
/// may take as a constant (for inputs that decide shapes: Reshape's shape, TopK's K, Resize's
/// sizes, given as graph inputs), or nullptr. Such a plan is valid only for those values.
Result<std::unique_ptr<Plan>> plan_graph(const Graph& graph, const std::vector<Shape>& input_shapes,
                                         const PlanOptions& options,
                                         const std::vector<const Tensor*>* input_values = nullptr);

/// True for the planning error that says an input deciding a shape is not known before the
/// run (planning again with input values can succeed).
bool needs_input_values(const Status& s);

/// Runs a plan. `arena` holds plan.arena_bytes bytes (64-byte aligned); `inputs` are the
/// graph inputs in order (shapes as planned); `outer` the outer-scope bindings of a
/// sub-plan. Graph outputs are left in their homes (see output_tensor).
Status execute_plan(const Plan& plan, uint8_t* arena, const std::vector<const Tensor*>& inputs,
                    const std::vector<const Tensor*>& outer = {});

/// A view of plan value `id` after execute_plan (valid until the next run).
Tensor plan_value_view(const Plan& plan, int id, uint8_t* arena, const std::vector<const Tensor*>& inputs,
                       const std::vector<const Tensor*>& outer = {});

}  // namespace tessera
