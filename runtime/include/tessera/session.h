// The C++ Session API: load a .tsr model, query its inputs and outputs, run it.
//
//   auto s = tessera::Session::load("model.tsr");            // mmap + verify, no weight copy
//   if (!s.is_ok()) { std::cerr << s.status().to_string(); return 1; }
//   tessera::Tensor x = ...;                                   // float[1,3,224,224], NCHW
//   auto out = (*s)->run({{"input", x}});                       // outputs in model order
//
// Input shapes may change between runs; a new shape set is planned on first use (shape
// inference, kernel choice, memory plan) and the plan is kept until the shapes change.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "tessera/graph.h"
#include "tessera/status.h"
#include "tessera/tensor.h"

namespace tessera {

struct Plan;
class Backend;
class ThreadPool;

struct SessionOptions {
  /// Backends in order of preference, e.g. {"vulkan", "cpu"}. Nodes a backend cannot run
  /// fall back to the CPU (reported by placements()); a known backend that this build or
  /// machine lacks is skipped with a note (notes()); an unknown name is an error.
  std::vector<std::string> backends = {"cpu"};
  /// Threads for CPU kernels, the calling thread included; 0 = one per physical core.
  /// The pool is made once by Session::create and its threads persist across runs.
  /// Optimized kernels (MatMul, Gemm) split their work over it; reference kernels use one.
  /// Errors: kInvalidArgument if below 0 or above 1024.
  int threads = 0;
  /// Verify segment checksums at load (reads every weight byte once).
  bool verify_checksums = true;
  /// Most bytes the activation arena may take; 0 = the machine's physical memory. A plan
  /// that needs more fails with kOutOfMemory instead of exhausting the machine.
  uint64_t max_arena_bytes = 0;
  /// Fuse a Conv/MatMul/Gemm with the residual Add and activation after it into one kernel
  /// where the backend can (as onnxruntime's FusedConv). Off: one kernel per node.
  bool fusion = true;
  /// Keep runs of convolutions in the CPU's blocked layout NCHW16c (16 channels per vector,
  /// as onnxruntime's NCHWc) where the CPU has the kernels (x86-64 with AVX-512F),
  /// converting at the runs' edges. Off, or with the environment variable TESSERA_NCHWC=0:
  /// plain NCHW everywhere.
  bool nchwc = true;
  /// Accept a model some of whose weights exist only as pre-sharded chunks (a sharded
  /// training checkpoint: check_weights_complete in tsr_file.h). Such a session can be
  /// described and planned (inputs, shapes: `tessera inspect`, the trainer's input checks)
  /// but not run. Off (the default): Session::create fails with kInvalidArgument naming
  /// the first such weight.
  bool allow_partial_weights = false;
};

/// A graph input or output as declared in the model: dims are sizes, or -1 with a symbol.
struct TensorInfo {
  std::string name;
  DType dtype = DType::kUndefined;
  bool has_shape = false;
  std::vector<Dim> shape;
};

/// Time spent in one step of the plan, summed over the runs since profiling was turned on
/// (Session::set_profiling).
struct StepProfile {
  std::string node;      // Node::describe(): op type and name
  std::string op_type;   // ONNX op type
  std::string backend;   // "cpu", ...
  double total_ms = 0;   // wall time in milliseconds, all profiled runs together
};

/// Facts about the current plan.
struct PlanStats {
  uint64_t arena_bytes = 0;     // peak activation + scratch bytes
  size_t steps = 0;             // kernels run per inference (top level)
  int folded_nodes = 0;         // nodes computed at plan time
  double plan_ms = 0;           // time the last planning took
  std::vector<std::string> placements;  // "node -> backend", "copy 'value' cpu -> cuda"
  std::string device;           // the device backend used ("cuda"), empty when none
  uint64_t device_bytes = 0;    // device memory of the plan: activations, scratch, constants
};

class Session {
 public:
  /// Loads a .tsr file (mmap; weights are not copied). Errors: kIoError, kInvalidFile,
  /// kInvalidArgument for unknown backends.
  static Result<std::unique_ptr<Session>> load(const std::string& path, const SessionOptions& options = {});
  /// Wraps an in-memory model (e.g. fresh from the converter).
  static Result<std::unique_ptr<Session>> create(std::shared_ptr<const Model> model, const SessionOptions& options = {});
  ~Session();

  const std::vector<TensorInfo>& inputs() const { return inputs_; }
  const std::vector<TensorInfo>& outputs() const { return outputs_; }
  const Model& model() const { return *model_; }
  /// Backends of the preference list that this build or machine cannot provide, each
  /// with the reason ("backend 'cuda' is not built; its nodes run on the CPU").
  const std::vector<std::string>& notes() const { return notes_; }
  /// Milliseconds load() took (map, verify, build the IR).
  double load_ms() const { return load_ms_; }

  /// Plans for these input shapes (one per input, in inputs() order) ahead of run().
  Status prepare(const std::vector<Shape>& input_shapes);

  /// Runs the model. `inputs` are (name, tensor) pairs covering every model input exactly
  /// once; the tensors are read in place (not copied). Returns the outputs in outputs()
  /// order, each owning its bytes. Errors (kInvalidArgument) name the input that is
  /// missing, unknown, given twice, or of the wrong dtype or shape.
  Result<std::vector<Tensor>> run(const std::vector<std::pair<std::string, Tensor>>& inputs);

  /// Where run() puts one output: when `data` is non-null, the output's bytes are copied
  /// straight from the activation arena into this caller's buffer of `capacity` bytes (no
  /// allocation) and the returned Tensor views it; when null, the output gets its own bytes.
  struct OutputBinding {
    void* data = nullptr;
    size_t capacity = 0;  // bytes
  };
  /// As run() above, with `bindings` (empty, or one per output in outputs() order) saying
  /// where each output goes. Errors as run(), and kInvalidArgument naming the output when a
  /// caller's buffer is smaller than the output (its bytes and shape are in the message);
  /// no caller buffer is written then.
  Result<std::vector<Tensor>> run(const std::vector<std::pair<std::string, Tensor>>& inputs,
                                  const std::vector<OutputBinding>& bindings);

  /// The output shapes of the current plan (after prepare() or run()), in outputs() order.
  /// Errors (kInvalidArgument) when nothing has been planned yet.
  Result<std::vector<Shape>> planned_output_shapes();

  /// Threads of the CPU pool (options.threads, or the physical cores for 0).
  int threads() const;

  /// Stats of the current plan (after prepare() or run()).
  PlanStats plan_stats() const;

  /// Turns per-step timing on or off (off by default; on costs two clock reads per step).
  /// Turning it on clears what was collected. Steps of sub-plans (If branches, Loop and
  /// Scan bodies) are timed too.
  void set_profiling(bool on);
  /// Per-step times of the current plan since profiling was turned on (or the plan was
  /// made), in execution order; `runs` gets the number of runs profiled. The steps of a
  /// sub-plan that ran follow their If/Loop/Scan step, named "<parent node> > <node>" and
  /// summed over every run of that branch or body (an If branch never taken is left out); the control-flow step keeps only its own time
  /// (its total less its sub-plans'), so the times add up to the runs' time. Empty when
  /// profiling is off or nothing has run.
  std::vector<StepProfile> profile(uint64_t* runs = nullptr) const;

 private:
  Session() = default;
  /// Plans for `shapes` (and, when given, these input values as constants) unless the
  /// current plan already fits. Caller holds mu_.
  Status prepare_locked(const std::vector<Shape>& shapes, const std::vector<const Tensor*>* values);
  std::shared_ptr<const Model> model_;
  SessionOptions options_;
  std::vector<std::unique_ptr<Backend>> backends_;
  std::unique_ptr<ThreadPool> thread_pool_;
  std::vector<TensorInfo> inputs_, outputs_;
  std::vector<std::string> notes_;
  std::vector<Shape> planned_shapes_;
  /// Set once planning needed the value of an input that decides a shape (e.g. Reshape's
  /// shape given as a graph input): from then on small inputs are planned as constants and
  /// the plan is keyed on their bytes too.
  bool plan_with_values_ = false;
  std::vector<std::string> planned_values_;
  std::unique_ptr<Plan> plan_;
  Tensor arena_;
  // The plan's device memory (Plan::device_bytes on Plan::device), allocated once per plan.
  void* device_arena_ = nullptr;
  Backend* device_arena_owner_ = nullptr;
  void free_device_arena();
  double load_ms_ = 0;
  double plan_ms_ = 0;
  bool profiling_ = false;
  std::mutex mu_;
};

}  // namespace tessera
