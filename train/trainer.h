// Single-process training of a .tsr model: the forward graph, a loss node, the backward
// graph (train/autodiff.h), an optimizer (train/optim.h), checkpoints that are .tsr files.
//
//   auto m = read_tsr_file("model.tsr");             // float32 model, one input [N, ...]
//   TrainerConfig cfg; cfg.loss = "ce"; cfg.optimizer.kind = "adamw";
//   auto t = Trainer::create(*m, cfg);
//   double loss = (*t)->train_step(x, labels, lr).value();   // x float[N,...], labels int64[N]
//   (*t)->save("ckpt.tsr");                                   // weights + optimizer state + step
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tessera/graph.h"
#include "tessera/status.h"
#include "tessera/tensor.h"
#include "train/interpreter.h"
#include "train/optim.h"

namespace tessera::train {

struct TrainerConfig {
  /// "ce": softmax cross-entropy on the logits (when the model ends in Softmax/LogSoftmax,
  /// possibly followed by Identity, the loss reads that op's input), targets int64 [N];
  /// "mse": mean squared error on the model output, targets float [same shape].
  std::string loss = "ce";
  double label_smoothing = 0;  // ce only, in [0, 1)
  OptimizerConfig optimizer;
  /// ECMAScript regex; parameters whose name it finds (std::regex_search) stay frozen.
  std::string freeze;
  /// > 0: the last MatMul/Gemm with an initializer weight gets a new [K, classes] weight
  /// (uniform in +-1/sqrt(K), as torch.nn.Linear) and a zero bias; skipped when it already
  /// has `classes` outputs (a resumed checkpoint).
  int replace_head = 0;
  uint64_t seed = 0;           // head initialization
  double clip_norm = 0;        // > 0: clip gradients to this global L2 norm
  /// BatchNormalization trains with batch statistics and updates its running statistics
  /// (ONNX BatchNormalization-15 training mode, momentum from the node); false: it stays in
  /// inference mode (running statistics fixed, as for a frozen backbone). Models converted
  /// with Conv+BatchNormalization folding have no BatchNormalization left.
  bool batchnorm_train = true;
};

class Trainer {
 public:
  /// Builds the training graph of `model` (copied). Resumes when the model carries training
  /// state (Model::training: a checkpoint written by save()): step count and optimizer state;
  /// kInvalidArgument when the checkpoint's optimizer differs from cfg's. Errors: kInvalidArgument for a model with other
  /// than one input or output, a non-float32 model, a bad config or freeze regex;
  /// kUnimplemented naming the first op without a gradient rule or training kernel.
  static Result<std::unique_ptr<Trainer>> create(const Model& model, const TrainerConfig& cfg);

  /// One step on a batch: forward, loss, backward, clip, optimizer update with learning
  /// rate `lr`. x: float32 [N, ...] as the model input; target: int64 [N] (ce) or float32
  /// shaped like the output (mse). Returns the batch loss before the update.
  Result<double> train_step(const Tensor& x, const Tensor& target, double lr);

  /// The first half of train_step, for data parallelism (the gradients are averaged over
  /// ranks between the two halves): forward, loss, backward on a batch with the current
  /// weights. x, target: as train_step. `*grads` receives one float32 tensor per params()
  /// entry, same shape: d(loss)/d(param), where loss is the mean over the batch rows.
  /// `dropout_stream` selects the Dropout masks' random stream (0: those of train_step; a
  /// data-parallel rank passes its rank + 1 so that ranks draw different masks).
  /// BatchNormalization's running statistics are updated from this batch. Returns the
  /// batch loss. Errors: those of train_step's forward and backward (a non-finite loss:
  /// kInvalidArgument).
  /// `on_grad`, when given, is called with (parameter index, gradient) as soon as the
  /// backward pass has made that gradient (before the pass ends); gradients it does not
  /// report (none of a node's making) are only in *grads.
  using GradCallback = std::function<void(size_t, const Tensor&)>;
  Result<double> compute_gradients(const Tensor& x, const Tensor& target, std::vector<Tensor>* grads,
                                   uint64_t dropout_stream = 0, const GradCallback* on_grad = nullptr);
  /// compute_gradients for sharded data parallelism (ZeRO-2/3, FSDP): each gradient goes
  /// only to on_grad (as the backward pass makes it) and is dropped right after, so the
  /// caller keeps only what it packs. Parameters whose Param::value is empty (ZeRO-3 keeps
  /// only shards between steps) come from `source` (may be null when none is empty), whose
  /// segment_starts this call sets to {backward_start()}: a parameter is acquired before
  /// its forward use, released after it, and acquired again if the backward pass reads it.
  /// Errors: those of compute_gradients; kInvalidArgument naming a gradient that on_grad
  /// did not get (one no node makes).
  Result<double> compute_gradients_sharded(const Tensor& x, const Tensor& target, uint64_t dropout_stream,
                                           const GradCallback& on_grad, Interpreter::ValueSource* source);
  /// Index of the training graph's first backward node (the forward graph and the loss come
  /// before it), and how many of the two segments (forward, backward) read parameter i:
  /// the number of times compute_gradients_sharded acquires it per step.
  size_t backward_start() const { return backward_start_; }
  int segments_reading_param(size_t i) const { return train_->segments_reading(params_[i].name, {backward_start_}); }
  /// ZeRO-3: forgets the weights the model was loaded with (the parameters' initializers
  /// in the trainer's graphs), so that only Param::value, or when it is empty a
  /// ValueSource, holds them. Afterwards check_input() cannot run and snapshot()/save()
  /// need every Param::value set.
  void drop_parameter_initializers();
  /// The second half: clips `grads` (TrainerConfig::clip_norm, global L2 norm) and applies
  /// one optimizer step with learning rate `lr`; the step count advances by one. grads: as
  /// compute_gradients returns them. Errors: kInvalidArgument on a count, shape or dtype
  /// mismatch, naming the parameter.
  Status apply_gradients(std::vector<Tensor>& grads, double lr);
  /// For an optimizer that runs outside the trainer (ZeRO: sharded optimizer state):
  /// calls update(params, step) with the parameters (values updated in place; the state
  /// tensors there are what snapshot()/save() write) and the count of completed steps,
  /// and advances the step count when it succeeds. Errors: update's.
  Status apply_external_step(const std::function<Status(std::vector<Param>&, int64_t)>& update);

  /// Checks the forward graph for a model input of shape `x` with the runtime's own op
  /// schemas (the Session planner's attribute checks and shape inference), so a malformed
  /// model or a wrong input shape is reported, naming the node, before a training kernel
  /// runs. Call it once per input shape (dims other than the batch) before training.
  Status check_input(const Shape& x) const;

  /// Loss and model output on a batch with the current weights (no update).
  struct Eval {
    double loss = 0;
    Tensor output;
  };
  /// `source`: as compute_gradients_sharded, for parameters whose value is empty.
  Result<Eval> evaluate(const Tensor& x, const Tensor& target, const Interpreter::ValueSource* source = nullptr);

  /// The model with the current weights (trainable flags set) and, in Model::training, the
  /// optimizer, its state and the step count, as written by save().
  std::shared_ptr<Model> snapshot(const std::map<std::string, std::string>& properties = {}) const;
  /// Writes snapshot() to `path` atomically (temporary file, then rename).
  Status save(const std::string& path, const std::map<std::string, std::string>& properties = {}) const;

  int64_t step() const { return step_; }
  const std::vector<Param>& params() const { return params_; }
  /// The parameters for a caller that changes them outside a step (ZeRO gathering its
  /// sharded optimizer state into Param::state before a checkpoint).
  std::vector<Param>& mutable_params() { return params_; }
  const std::vector<std::string>& frozen() const { return frozen_; }
  /// True when BatchNormalization trains with batch statistics (its running statistics are
  /// updated by each step).
  bool batchnorm_training() const { return !bn_stats_.empty(); }
  const std::string& input_name() const { return input_; }
  const std::string& logits_name() const { return logits_; }
  /// Notes for the user (head replaced, loss on logits, ...).
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  Trainer() = default;
  std::shared_ptr<Model> model_;   // forward model (weights as initializers)
  TrainerConfig cfg_;
  std::string input_, output_, logits_, target_, loss_, seed_;
  std::vector<Param> params_;
  std::vector<std::string> frozen_, notes_;
  std::vector<std::string> grads_;
  std::vector<std::pair<std::string, std::string>> bn_stats_;  // (BN running-stat output, its initializer)
  std::vector<std::pair<std::string, Tensor>> buffers_;        // running statistics, by initializer name
  std::unique_ptr<Interpreter> train_, eval_;
  std::shared_ptr<Graph> train_graph_, eval_graph_;  // the interpreters' graphs
  int64_t step_ = 0;
  size_t backward_start_ = 0;
  Tensor one_;
};

}  // namespace tessera::train
