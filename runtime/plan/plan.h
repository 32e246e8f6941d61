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

/// Where a value's bytes are: `home` says how they are found; `device` says in which memory
/// (null: host memory; else the device backend that owns it). Device values are kArena
/// values at `offset` in the plan's device arena, or kDeviceConstant: a plan constant
/// uploaded once at prepare time to `offset` in the same device buffer (Plan::device_constants).
struct PlanValue {
  enum class Home { kConstant, kInput, kOuter, kArena, kDeviceConstant };
  std::string name;
  DType dtype = DType::kUndefined;
  Shape shape;
  Home home = Home::kArena;
  std::shared_ptr<const Tensor> constant;  // kConstant
  int index = -1;                          // kInput: graph input #; kOuter: binding #
  uint64_t offset = 0;                     // kArena, kDeviceConstant: byte offset in the (device) arena
  uint64_t bytes = 0;                      // kArena, kDeviceConstant: size in bytes
  Backend* device = nullptr;               // null: host memory
  /// kArena on the host: stored in the CPU's blocked layout NCHW16c (cpu_nchwc_mode in
  /// backends/backend.h), bytes and view for nchwc_storage_shape(shape). Only the nodes
  /// that take it read it; the planner converts it back for anything else.
  bool nchwc = false;
};

/// A plan constant that lives on the device: host value `host` is uploaded to device value
/// `device` (a kDeviceConstant) when the session binds the plan's device arena.
struct DeviceConstant {
  int host = -1;
  int device = -1;
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

/// How a Loop or Scan moves one tensor in or out of the body each iteration: the tensor
/// (per batch element for Scan-8) is [outer..., L, inner...] with L the scan axis; iteration
/// t reads or writes the slice at position t (L-1-t when reversed).
struct ScanSlicing {
  int value = -1;                  // parent plan value id (node input or output); -1: omitted output
  int64_t outer = 1;               // product of the dims before the scan axis
  uint64_t inner_bytes = 0;        // bytes of one row: the dims after the scan axis
  uint64_t batch_stride = 0;       // bytes per batch element (Scan-8), else 0
  bool reverse = false;
  uint64_t slice_offset = 0;       // scan inputs with outer > 1: gathered here (in the step's scratch)
};

/// A Loop (ONNX opset 11..21) or Scan (opset 8..21): the body is planned once as a sub-plan
/// for the shapes of the first iteration (loop-carried values must keep them) and the
/// executor runs it once per iteration. Loop-carried (Loop) or state (Scan) values live in
/// two scratch buffers each, swapped every iteration; scan outputs are written straight into
/// the node's outputs.
struct LoopStep {
  bool is_scan = false;
  std::unique_ptr<Plan> body;
  std::vector<int> outer_bindings;   // the parent plan value bound to each body kOuter value
  /// Loop-carried / state values: node input ids, node output ids (-1: omitted), bytes (per
  /// batch element), and the offsets of their two buffers in the step's scratch.
  std::vector<int> carried_in, carried_out;
  std::vector<uint64_t> carried_bytes;
  std::vector<uint64_t> carried_offset[2];
  std::vector<ScanSlicing> scan_inputs;    // Scan only
  std::vector<ScanSlicing> scan_outputs;   // Loop and Scan
  // Loop: plan value ids of M and cond (-1: omitted); the trip count settled at plan time
  // when the node has scan outputs (-1: decided by the run); whether the body's cond output
  // always equals its cond input (or is constant true), so a run without M never ends.
  int trip_count = -1;
  int cond = -1;
  int64_t planned_trips = -1;
  bool cond_fixed = false;
  uint64_t counter_offset = 0;             // Loop: int64 iteration number, then the bool cond
  // Scan: batch elements (Scan-8's leading axis, else 1) and iterations per batch element.
  int64_t batch = 1;
  int64_t scan_length = 0;
  uint64_t body_arena_offset = 0;          // the body's arena, in the step's scratch
  mutable std::vector<Tensor> body_inputs;           // views re-pointed every iteration
  mutable std::vector<const Tensor*> body_input_ptrs;
  mutable std::vector<const Tensor*> outer_scratch;  // reused per run
};

struct Step {
  const Node* node = nullptr;
  std::string backend;                  // the backend that runs it ("cpu")
  std::unique_ptr<Kernel> kernel;       // kernel ops
  std::unique_ptr<IfStep> if_step;      // control flow: If
  std::unique_ptr<LoopStep> loop_step;  // control flow: Loop, Scan
  std::vector<int> inputs;              // plan value ids; -1 = omitted optional input
  std::vector<int> outputs;             // plan value ids; -1 = omitted optional output
  uint64_t scratch_offset = 0;          // in the device arena when on_device
  uint64_t scratch_bytes = 0;
  bool on_device = false;               // the kernel's backend is not host memory
  /// An input whose memory output 0 may take (Kernel::output_may_alias_input); the
  /// memory plan gives both one block when this step is that input's last use.
  int inplace_input = -1;
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
  /// Device memory (see PlanValue::device). Only top-level plans use a device: If/Loop/Scan
  /// bodies run on host-memory backends.
  Backend* device = nullptr;             // the device backend, null when none is used
  uint64_t device_arena_bytes = 0;       // device activations + device scratch, 256-aligned
  uint64_t device_bytes = 0;             // device_arena_bytes + the device constants
  std::vector<DeviceConstant> device_constants;
  /// The device buffer (device_bytes bytes, from device->allocate) that execute_plan uses;
  /// bound by bind_device_arena (the Session calls it once per plan).
  mutable uint8_t* device_arena = nullptr;
  /// Runs of consecutive device kernel steps (no copy steps, at least two steps), which
  /// execute_plan hands to Backend::run_recorded: segment_end[i] is one past the last step
  /// of the segment that starts at step i, 0 where none starts (sized like steps or empty).
  std::vector<size_t> segment_end;
  /// One slot per step that starts a segment (index: that step), for the device's graphs.
  mutable std::vector<std::unique_ptr<DeviceGraph>> segment_graphs;
  /// Profiling (Session::set_profiling, set_plan_profiling): when true, execute_plan adds
  /// each step's wall time in nanoseconds to step_ns[i] (sized like steps) and counts runs;
  /// sub-plans (If branches, Loop/Scan bodies) have their own flag and times. With a
  /// device, every step then waits for the device (no CUDA graph replay either), so each
  /// step's time includes its device work, plus the wait's own few microseconds.
  bool profiling = false;
  mutable std::vector<uint64_t> step_ns;
  mutable uint64_t profiled_runs = 0;
};

struct PlanOptions {
  /// Backends in order of preference; the CPU is always the last resort.
  std::vector<Backend*> backends;
  /// The CPU thread pool handed to every kernel (KernelContext::thread_pool); may be null.
  ThreadPool* thread_pool = nullptr;
  /// Largest output (elements) the planner computes at plan time when all inputs are
  /// constant.
  int64_t max_fold_elements = int64_t{1} << 16;
  /// Fuse elementwise tails into the node before them (Conv, MatMul, Gemm followed by a
  /// residual or bias Add and/or an activation, see Epilogue in backends/backend.h) where
  /// the backend's kernel takes them. Off: every node is its own step (tests compare).
  bool fuse = true;
  /// Keep runs of Convs in the CPU's blocked layout NCHW16c where the CPU backend runs them
  /// (SessionOptions::nchwc). Off: every value is plain.
  bool nchwc = true;
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

/// Turns profiling on or off for `plan` and, recursively, its If branches and Loop/Scan
/// bodies, and clears their step times and run counts.
void set_plan_profiling(Plan& plan, bool on);

/// Runs a plan. `arena` holds plan.arena_bytes bytes (64-byte aligned); `inputs` are the
/// graph inputs in order (shapes as planned); `outer` the outer-scope bindings of a
/// sub-plan. Graph outputs are left in their homes (see output_tensor).
Status execute_plan(const Plan& plan, uint8_t* arena, const std::vector<const Tensor*>& inputs,
                    const std::vector<const Tensor*>& outer = {});

/// Copies the plan's device constants into `device_buffer` (plan.device_bytes bytes from
/// plan.device->allocate) and binds it as plan.device_arena. Call once per plan, before the
/// first execute_plan. Errors: the device's copy error.
Status bind_device_arena(const Plan& plan, uint8_t* device_buffer);

/// A view of plan value `id` after execute_plan (valid until the next run).
Tensor plan_value_view(const Plan& plan, int id, uint8_t* arena, const std::vector<const Tensor*>& inputs,
                       const std::vector<const Tensor*>& outer = {});

}  // namespace tessera
