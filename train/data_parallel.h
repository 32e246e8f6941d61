// Data parallelism (issue 9, first slice): every rank holds the whole model, computes the
// gradients of its slice of the global batch, and the gradients are summed over ranks by
// ring all-reduces of gradient buckets (PyTorch DDP's design: Li et al., "PyTorch
// Distributed: Experiences on Accelerating Data Parallel Training", VLDB 2020: buckets of
// 25 MiB filled in reverse parameter order, since backward produces the last layers'
// gradients first). Every rank then applies the same optimizer step to the same summed
// gradients, so the weights stay identical on every rank.
//
// Equivalence with single-process training on the global batch of B rows: the loss is a
// mean over rows, so rank r's gradient g_r (the mean over its b_r rows) is weighted by
// b_r / B before the sum: sum_r (b_r / B) g_r = (1 / B) sum over all rows = the
// single-process gradient (up to float rounding of the different summation order).
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "tessera/status.h"
#include "tessera/tensor.h"
#include "train/comm/comm.h"
#include "train/optim.h"

namespace tessera::train {

/// Rows [first, second) of a batch of `rows` rows that rank `rank` of `parts` takes:
/// contiguous slices in rank order, the first rows % parts ranks one row more (the same
/// split as the communicators' ring chunks). A rank may get no rows (rows < parts).
std::pair<int64_t, int64_t> split_rows(int64_t rows, int parts, int rank);

/// Bytes rank `rank` sends in a ring all-reduce (reduce-scatter then all-gather) of `count`
/// elements of `elem_bytes` bytes over `parts` ranks, chunked as split_rows chunks:
/// 2 * total - chunk_rank - chunk_(rank+1) (reduce-scatter sends every chunk but its own,
/// all-gather every chunk but its right neighbour's), = 2 (N - 1) / N * total when N
/// divides count (Patarasuk & Yuan 2009). 0 for one rank.
uint64_t ring_all_reduce_bytes(int64_t count, size_t elem_bytes, int parts, int rank);

/// Groups parameters of `elements[i]` elements into gradient buckets as DDP does: taken in
/// reverse order, a bucket is closed before it would exceed `cap` elements (a parameter
/// larger than that gets a bucket of its own; parameters are not split). Returns each
/// bucket's parameter indices, in reverse parameter order.
std::vector<std::vector<size_t>> reverse_buckets(const std::vector<int64_t>& elements, int64_t cap);

/// Sums float32 gradients over the ranks of a communicator in buckets.
class GradientBuckets {
 public:
  /// Lays out buckets for `shapes` (one per parameter, float32): parameters are taken in
  /// reverse order and a bucket is closed before it would exceed `bucket_bytes` (a
  /// parameter larger than that gets a bucket of its own; parameters are not split).
  /// Errors: kInvalidArgument for bucket_bytes < 4.
  static Result<std::unique_ptr<GradientBuckets>> create(Communicator& comm, const std::vector<Shape>& shapes,
                                                         int64_t bucket_bytes);

  /// grads[i] (float32, shapes as given to create) = sum over ranks of weight_rank *
  /// grads_rank[i]. Each bucket is packed (scaled by `weight`) and its all_reduce_async is
  /// started as soon as it is packed, so later buckets are packed while earlier ones are
  /// on the wire; all are waited for before returning. Errors: kInvalidArgument on a
  /// count/shape/dtype mismatch (naming the gradient index); the communicator's errors
  /// (kUnavailable naming a dead or hung rank, after CommOptions::timeout_s).
  Status all_reduce(std::vector<Tensor>& grads, double weight);

  /// The same in three parts, so that buckets go on the wire while the backward pass goes
  /// on: begin(weight) before the pass; add(i, grad_i) as the pass makes gradient i (it
  /// is copied, scaled, into its bucket; a bucket whose gradients are all in, and whose
  /// predecessors have started, starts its all_reduce_async at once: buckets start in
  /// bucket order on every rank, as the communicator requires); finish(grads) after the
  /// pass: adds the gradients add() did not get, starts the remaining buckets, waits for
  /// all and writes the sums into grads. Errors: as all_reduce (add() reports the first
  /// one through finish()).
  void begin(double weight);
  void add(size_t i, const Tensor& grad);
  Status finish(std::vector<Tensor>& grads);
  /// Buckets started by add() (during the backward pass) in the last begin()..finish().
  size_t started_early() const { return started_early_; }

  /// Number of buckets; elements (float32) of bucket b.
  size_t buckets() const { return buckets_.size(); }
  int64_t bucket_elements(size_t b) const { return buckets_[b].elements; }
  /// Bytes of all gradients (4 per element).
  uint64_t gradient_bytes() const { return 4 * static_cast<uint64_t>(total_elements_); }
  /// Bytes this rank sends per all_reduce() by the ring algorithm (sum over buckets of
  /// ring_all_reduce_bytes), and the formula 2 (N - 1) / N * gradient_bytes() (equal when
  /// the world size divides every bucket's element count).
  uint64_t ring_bytes_exact() const;
  double ring_bytes_formula() const;

 private:
  struct Bucket {
    std::vector<size_t> params;  // indices into the gradient list, reverse parameter order
    int64_t elements = 0;
    std::vector<float> buf;
    size_t filled = 0;           // gradients copied in since begin()
  };
  GradientBuckets(Communicator& comm) : comm_(comm) {}
  void start_ready();            // starts, in order, the complete buckets not started yet
  Communicator& comm_;
  std::vector<Shape> shapes_;
  std::vector<Bucket> buckets_;
  std::vector<size_t> bucket_of_;   // per parameter: its bucket
  std::vector<int64_t> offset_of_;  // per parameter: its first element in the bucket
  std::vector<bool> added_;
  std::vector<std::unique_ptr<CommRequest>> pending_;
  size_t next_ = 0, started_early_ = 0;  // buckets started so far
  float weight_ = 1;
  Status error_ = Status::ok();
  int64_t total_elements_ = 0;
};

/// ZeRO stage 1 (Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training Trillion
/// Parameter Models", SC 2020): the optimizer state is sharded over the ranks. The
/// parameters, in the trainer's order, are seen as one flat float32 vector of P elements,
/// padded to N * C (C = ceil(P / N)); rank r owns elements [r C, (r + 1) C). Per step: the
/// weighted local gradients are reduce-scattered (sum), so rank r holds the summed gradient
/// of its shard; global-norm clipping sums the shards' squares over ranks; rank r applies
/// the optimizer (optimizer_step, elementwise) to its shard with the shard's state only;
/// the updated shards are all-gathered into every rank's parameters. Bytes each rank sends
/// per step: (N - 1) C * 4 (reduce-scatter) + (N - 1) C * 4 (all-gather) = 2 (N - 1) / N *
/// 4 N C, i.e. 2 (N - 1) / N * gradient bytes when N divides P. Data-parallel equivalence
/// as for GradientBuckets.
class ZeroStage1 {
 public:
  /// `comm` carries the gradients and parameters (its CommStats count them), `ctrl` the
  /// clipping norm and the state gathered for checkpoints. params: the trainer's
  /// parameters (the same on every rank); optimizer state they carry (a resumed
  /// checkpoint) is sliced into this rank's shard. Errors: kInvalidArgument for a
  /// non-float32 parameter.
  static Result<std::unique_ptr<ZeroStage1>> create(Communicator& comm, Communicator& ctrl, const std::vector<Param>& params,
                                                    const OptimizerConfig& opt);

  /// One step. grads: this rank's float32 gradients (shapes of params, the mean over its
  /// rows), each multiplied by `weight` (its share of the global batch) before the sum;
  /// clip_norm > 0 clips the summed gradient to that global L2 norm (as
  /// clip_grad_global_norm); `step`: completed steps before this one. Updates
  /// params[i].value in place on every rank (the same values everywhere). Errors: shape
  /// or count mismatch (kInvalidArgument), the communicators' (kUnavailable).
  Status step(const std::vector<Tensor>& grads, double weight, std::vector<Param>& params, double lr, int64_t step,
              double clip_norm);

  /// Gathers the sharded optimizer state into every rank's params[i].state (full shapes),
  /// so a checkpoint written from them resumes at any world size. Collective: every rank
  /// calls it at the same point. Errors: the communicator's.
  Status gather_state(std::vector<Param>& params);

  /// Elements per shard (C) and the bytes every rank sends per step(): 2 (N - 1) C * 4.
  int64_t shard_elements() const { return chunk_; }
  uint64_t ring_bytes_exact() const { return 2ULL * static_cast<uint64_t>(comm_.size() - 1) * static_cast<uint64_t>(chunk_) * 4; }

 private:
  struct Piece {  // the part of parameter `param` in this rank's shard
    size_t param;
    int64_t offset, length, shard_offset;  // elements
  };
  ZeroStage1(Communicator& comm, Communicator& ctrl) : comm_(comm), ctrl_(ctrl) {}
  Communicator &comm_, &ctrl_;
  OptimizerConfig opt_;
  std::vector<int64_t> param_offset_;  // flat offset of each parameter
  int64_t total_ = 0, chunk_ = 0;
  std::vector<Piece> pieces_;
  std::vector<Param> shard_;           // one 1-D Param per piece: value and optimizer state
  std::vector<float> flat_, mine_;     // N * C and C elements
};

}  // namespace tessera::train
