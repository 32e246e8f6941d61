// Pipeline-parallel training of one stage of a model: the stage's forward graph, its
// backward graph, and the GPipe and 1F1B schedules over send/recv on the pipeline
// communicator of train/mesh.h.
//
// The model is cut into P stages (converter/pipeline_stages.h). Stage s's forward graph has
// the values crossing into it (PipelineCut::boundary[s]) as graph inputs and those crossing
// out (boundary[s + 1]) as outputs; the last stage adds the loss (as Trainer does). The
// backward graph is append_backward (train/autodiff.h) of
//   the loss, seeded with rows/B                      (last stage), or
//   L = sum_j sum(out_j * cot_j), seeded with 1        (other stages)
// where cot_j, the cotangent of output j, comes back from stage s + 1, so that
// dL/dtheta = sum_j J_j^T cot_j, the vector-Jacobian product the chain rule needs; wrt =
// the stage's parameters and its float activation inputs (whose gradients go back to stage
// s - 1). A micro-batch of m rows of a global batch of B rows is seeded with m/B, so the
// gradients summed over micro-batches (and over data-parallel ranks) equal those of one
// process on the whole batch (the loss is a mean over rows).
//
// Schedules (per training step, M micro-batches):
//   GPipe (Huang et al., "GPipe", NeurIPS 2019): all M forwards, then all M backwards; a
//     stage holds the activations of M micro-batches.
//   1F1B (Narayanan et al., "Efficient Large-Scale Language Model Training on GPU Clusters
//     Using Megatron-LM", SC 2021; PipeDream-Flush): min(P - s - 1, M) warm-up forwards,
//     then one forward and one backward alternately, then the remaining backwards; a stage
//     holds at most min(P - s, M) micro-batches. The sends and receives follow Megatron-LM's
//     order (send-forward/recv-backward and send-backward/recv-forward pairs, the lower
//     rank of a pair sending first), which cannot deadlock even when a send waits for its
//     receiver.
// Each micro-batch's crossing activations go forward and their gradients come back, as
// float32 tensors of [m, ...] on the pp communicator (its CommStats count exactly these
// bytes); their shapes and dtypes go first on a second communicator over the same ranks.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "converter/pipeline_stages.h"
#include "tessera/graph.h"
#include "tessera/status.h"
#include "tessera/tensor.h"
#include "train/comm/comm.h"
#include "train/interpreter.h"
#include "train/optim.h"
#include "train/trainer.h"

namespace tessera::train {

enum class PipelineSchedule { kGPipe, kOneFOneB };

/// "gpipe" or "1f1b". Errors: kInvalidArgument naming the text.
Result<PipelineSchedule> parse_schedule(const std::string& text);

/// The name of the value the loss reads (loss_input in train/parameters.h, Trainer's rule):
/// for "ce" the logits (the input of a final Softmax/LogSoftmax, through trailing Identity
/// ops), else the model output. The pipeline cut must end at it (PipelineCut sinks). Empty
/// for a graph without outputs.
std::string pipeline_loss_input(const Graph& g, const std::string& loss);

/// One step of a schedule: a micro-batch's receive, compute or send, forward or backward.
struct PipelineAction {
  enum Kind { kRecvForward, kForward, kSendForward, kRecvBackward, kBackward, kSendBackward } kind;
  int micro_batch = 0;
};

/// The actions stage `stage` of `stages` runs for `micro_batches` micro-batches, in order.
/// Receives on the first stage and sends on the last are in the list and do nothing.
std::vector<PipelineAction> pipeline_schedule(PipelineSchedule s, int stages, int stage, int micro_batches);

/// What one training step of a stage measured.
struct PipelineStepStats {
  double loss = 0;                 // last stage: sum over micro-batches of loss * rows/B; else 0
  int peak_micro_batches = 0;      // most micro-batches whose activations were held at once
  uint64_t peak_activation_bytes = 0;  // their bytes at that moment
  uint64_t sent_bytes = 0;         // bytes this rank sent on the pp communicator
  uint64_t sent_bytes_theory = 0;  // per micro-batch: outputs forward + input gradients back
};

class PipelineStage {
 public:
  /// Builds stage `stage` of `cut` of `model` for training with `cfg` (loss, optimizer,
  /// freeze, clip_norm; replace_head and BatchNormalization training are refused:
  /// kInvalidArgument). The parameters are chosen as Trainer chooses them; their optimizer
  /// state and the step count come from Model::training (a checkpoint). Errors: as
  /// Trainer::create, and kInvalidArgument when the loss' input is not in the last stage.
  static Result<std::unique_ptr<PipelineStage>> create(const Model& model, const PipelineCut& cut, int stage,
                                                       const TrainerConfig& cfg);

  /// Forward and backward of M micro-batches under `schedule`, the gradients summed into
  /// grads() (zeroed first). x: this rank's rows of the global batch [R, ...] (read by the
  /// first stage), target: [R] or [R, ...] (read by the last stage); other stages may pass
  /// tensors with the right row count only. Micro-batch i holds rows split_rows(R, M, i);
  /// empty ones are skipped on every stage; `global_rows` is B. `pp` is the pipeline
  /// communicator (rank = stage), `meta` a second one over the same ranks for the shapes.
  /// Errors: a communicator's (a dead peer, a timeout), the interpreter's.
  /// Dropout trains (ONNX Dropout-13 training mode) with masks drawn from the step count,
  /// `dropout_stream` (a data-parallel rank passes its dp index) and the micro-batch, so
  /// they differ from single-process training's masks (which see the whole batch).
  Result<PipelineStepStats> compute_gradients(const Tensor& x, const Tensor& target, int64_t global_rows, int micro_batches,
                                              PipelineSchedule schedule, Communicator& pp, Communicator& meta,
                                              uint64_t dropout_stream = 0);

  /// Clips grads() to cfg.clip_norm by the global L2 norm over all stages (the squared
  /// norms summed over `ctrl_pp`, a communicator of the pipeline's ranks), then one
  /// optimizer step with rate `lr`; the step count advances.
  Status apply_gradients(double lr, Communicator* ctrl_pp);

  /// Forward only (inference mode), one micro-batch of all rows: the last stage returns the
  /// sum of the per-row losses and the number of rows whose logits' argmax is the target
  /// (ce); other stages return zeros. Sends only on `pp`/`meta`.
  Result<std::pair<double, int64_t>> evaluate(const Tensor& x, const Tensor& target, Communicator& pp, Communicator& meta);

  /// This stage's parameters, weights and optimizer state as a byte blob
  /// ([u32 name length, name, u32 state length, state, i64 elements, float32 data]...),
  /// state "" = the weight, to be merged into the whole model by merge_blob.
  std::vector<uint8_t> weights_blob() const;
  /// Sets the weights and optimizer state in `blob` (weights_blob of any stage) into
  /// `model` (initializers, trainable, Model::training). Errors: kInvalidArgument naming an
  /// unknown value or a size mismatch.
  static Status merge_blob(Model& model, const std::vector<uint8_t>& blob);

  std::vector<Tensor>& grads() { return grads_; }
  const std::vector<Param>& params() const { return params_; }
  int64_t step() const { return step_; }
  int stage() const { return stage_; }
  /// Names of the values this stage receives (boundary[stage]) and sends.
  const std::vector<std::string>& inputs() const { return in_names_; }
  const std::vector<std::string>& outputs() const { return out_names_; }

 private:
  PipelineStage() = default;
  struct Stash;
  // Runs the forward graph of micro-batch `mb` (inputs in stash[mb].inputs, or x on the
  // first stage) and keeps in stash[mb] what the backward graph reads.
  Status forward(int mb, const Tensor& x, const Tensor& target, double weight, uint64_t seed, std::vector<Stash>& stash);
  int stages_ = 1, stage_ = 0;
  TrainerConfig cfg_;
  std::vector<std::string> in_names_, out_names_;  // crossing values in and out
  std::vector<bool> in_float_, out_float_;        // which get gradients
  std::string input_, target_, loss_, logits_, seed_;
  std::vector<std::string> cot_names_;            // per output: its cotangent input
  std::vector<std::string> saved_;                // forward values the backward graph reads
  std::vector<std::string> grad_names_;           // per param, then per float input
  std::vector<Param> params_;
  std::vector<Tensor> grads_;
  std::unique_ptr<Interpreter> fwd_, bwd_, eval_;
  std::vector<std::string> bwd_reads_;            // what the backward graph is fed
  int64_t step_ = 0;
};

}  // namespace tessera::train
