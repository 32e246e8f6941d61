// Tensor parallelism from the file's sharding (`tessera convert --shard tp=N` annotates the
// model; `tessera-finetune --parallel tp=N[,dp=D]` trains it): each rank of the tensor
// mesh dim builds its local training model from the annotated global one:
//   - weights whose TensorSharding is Split(d) on the tensor dim become this rank's slice
//     (split_rows sizes along d), as do their optimizer states in a checkpoint;
//   - placements (SBP) propagate through the graph node by node (Megatron-LM's rules,
//     Shoeybi et al. 2019, section 3: X[B] x W[S(col)] -> S(col); X[S(last)] x W[S(row)]
//     -> Partial(sum); elementwise ops keep a Split; attention: a Reshape of a split
//     hidden dim into (heads, head size) splits the heads (its shape constant gets a
//     per-rank copy with heads / N, and back), Transpose moves the split dim, Softmax on
//     another axis and the batched products Q K^T, P V of two head-split operands keep
//     it; a Gather of a row-split table [V, H] by replicated ids becomes
//     VocabParallelGather, Partial(sum); any other op needs Broadcast inputs),
//     and where a consumer needs another placement than its producer made, the boxing
//     collective (train/boxing.h) is inserted as a node, the communicator of the tensor
//     dim running it. A Broadcast value read by a rank-local op whose output is Split or
//     Partial goes through CopyToParallel (Megatron's f), whose gradient all-reduces;
//     a Gemm whose output is Partial has its bias C added after the all-reduce.
// After training, gather() rebuilds the full model (every rank's slices, all-gathered) with
// its optimizer state: a normal .tsr with the sharding annotations kept.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tessera/graph.h"
#include "tessera/status.h"
#include "tessera/tensor.h"
#include "train/comm/comm.h"
#include "train/optim.h"

namespace tessera::train {

class TensorParallel {
 public:
  /// Builds this rank's local model of `global` for the tensor mesh dim whose ranks `tp`
  /// holds (tp.rank() picks the slices), registering `tp` as the communicator of the file
  /// mesh's tensor dim (set_mesh_communicator). `ctrl`: a communicator over the same ranks
  /// for what must not count as boxing traffic (the gradient-norm sum, gathering the
  /// model); both must outlive this object. Errors (kInvalidArgument): a model without
  /// tensor-parallel annotations ("convert it with tessera convert --shard tp=N"), a mesh
  /// whose tensor dim is not tp.size(), a weight split on another mesh dim, a value whose
  /// annotated Partial placement the propagation does not reproduce (naming it), an
  /// unsupported boxing, a head count or hidden size in a Reshape constant that N does
  /// not divide (naming the node).
  static Result<std::unique_ptr<TensorParallel>> create(const Model& global, Communicator& tp, Communicator& ctrl);
  ~TensorParallel();

  /// This rank's model: sliced weights (and optimizer state), boxing nodes inserted.
  const Model& local_model() const { return *local_; }
  /// One line per boxing node inserted ("AllReduce after fc2 (P(sum) -> B) ...").
  const std::vector<std::string>& report() const { return report_; }
  /// Bytes all-reduced by the boxing nodes so far (mesh_all_reduce_payload_bytes of the
  /// tensor dim): the difference over a step times 2 (N-1)/N is the ring theory of the step.
  uint64_t all_reduce_payload_bytes() const;
  /// True when parameter `name` is split over the tensor dim (each rank holds a slice).
  bool is_split(const std::string& name) const;

  /// Clips `grads` (one per `params`, float32, local slices) to the global L2 norm
  /// `max_norm` over the whole model: split parameters' squares summed over the tensor
  /// ranks (on ctrl), replicated ones counted once, as torch.nn.utils.clip_grad_norm_ and
  /// Megatron-LM's clip_grad_norm_fp32. No-op for max_norm <= 0. Returns the norm.
  /// Errors: the communicator's.
  Result<double> clip_grad_global_norm(std::vector<Tensor>& grads, const std::vector<Param>& params, double max_norm);

  /// The full model from this rank's trained local snapshot (Trainer::snapshot()): every
  /// initializer and optimizer state of the global model, split ones all-gathered over
  /// ctrl (collective: every tensor rank calls it), the rest taken from `local`; the
  /// global model's graph and sharding annotations. Errors: the communicator's.
  Result<std::shared_ptr<Model>> gather(const Model& local) const;

  /// A hash (XXH3 over the bytes) of the replicated (not split) parameters of `params`:
  /// equal on every rank when their gradients stayed consistent.
  uint64_t replicated_hash(const std::vector<Param>& params) const;

 private:
  TensorParallel() = default;
  std::shared_ptr<const Model> global_;
  std::shared_ptr<Model> local_;
  Communicator* tp_ = nullptr;
  Communicator* ctrl_ = nullptr;
  int mesh_dim_ = 0;
  struct Split {
    std::string value;
    int dim = 0;  // tensor dim (>= 0)
  };
  std::vector<Split> splits_;
  std::vector<std::string> report_;
};

/// Trainer::check_input for a model the trainer does not hold (the global model of a
/// tensor-parallel run, whose local model has collective nodes the runtime's planner does
/// not know): the Session planner's checks and shape inference for a model input of shape
/// `x`. Errors: the planner's, naming the node, with the input's name and shape.
Status check_model_input(const Model& model, const Shape& x);

}  // namespace tessera::train
