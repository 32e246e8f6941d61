// ZeRO stages 2 and 3 (Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training
// Trillion Parameter Models", SC 2020) with FSDP's layout and schedule (Zhao et al.,
// "PyTorch FSDP: Experiences on Scaling Fully Sharded Data Parallel", VLDB 2023; FSDP2's
// per-parameter dim-0 sharding).
//
// Layout: every parameter is split along dim 0 over the N ranks by split_rows (rank r owns
// rows [a_r, b_r), the first d0 % N ranks one row more; dim0_layout). Parameters are
// grouped into buckets as GradientBuckets does (reverse order, at most bucket_bytes); a
// bucket's gradient buffer is N rank-major chunks of C = sum over its parameters of
// (rows of rank 0) x (row size) elements (rank 0 has the most rows of every parameter),
// chunk r holding rank r's rows of each parameter, zero padded.
//
// Per step (stage 2 and 3): as the backward pass makes parameter i's gradient it is packed
// (scaled by the rank's share of the global batch) into its bucket and dropped; a bucket
// whose gradients are all in is reduce-scattered at once (asynchronously, in bucket order;
// its packed buffer is freed when that completes, at most two in flight), so each rank
// ends with its shard of the summed gradient only. Global-norm clipping sums
// the shards' squares over ranks; the optimizer (elementwise) updates the rank's rows with
// their state. Stage 2 then all-gathers the updated rows into every rank's full parameters.
// Stage 3 keeps only the rows: the forward and backward passes get each parameter from
// source(), which all-gathers it just before the first node of a pass that reads it (the
// next parameter's all-gather is started asynchronously when one is acquired, so it
// overlaps the nodes in between), and the interpreter frees it after that pass's last read
// (Interpreter::ValueSource).
//
// Bytes each rank sends per step (ring reduce-scatter and all-gather of C elements over N
// ranks send (N - 1) C elements each, Patarasuk & Yuan 2009):
//   stage 2: sum over buckets of 2 (N - 1) C_b * 4 = 2 (N - 1) / N * gradient bytes when N
//            divides every parameter's dim 0;
//   stage 3: sum over buckets of (N - 1) C_b * 4 (reduce-scatter) + sum over parameters of
//            g_i (N - 1) c_i * 4 (all-gathers; c_i = rows of rank 0 x row size, g_i = the
//            number of passes that read it: 2 when the backward pass reads it too), at most
//            3 (N - 1) / N * P * 4 when N divides every dim 0.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessera/status.h"
#include "tessera/tensor.h"
#include "train/comm/comm.h"
#include "train/interpreter.h"
#include "train/optim.h"
#include "train/sharded_checkpoint.h"

namespace tessera::train {

class ShardedDataParallel {
 public:
  /// `comm` carries gradients and parameters (its CommStats count them), `ctrl` the
  /// clipping norm and what checkpoints gather. params: the trainer's parameters (the same
  /// on every rank; float32); their optimizer state (a resumed checkpoint) is sliced into
  /// this rank's rows. Stage 3 empties every params[i].value: from then on the rank stores
  /// only its rows, and the trainer needs source(). bucket_bytes: as GradientBuckets.
  /// Errors: kInvalidArgument for stage not 2 or 3, bucket_bytes < 4, a non-float32
  /// parameter or state.
  static Result<std::unique_ptr<ShardedDataParallel>> create(Communicator& comm, Communicator& ctrl, std::vector<Param>& params,
                                                             const OptimizerConfig& opt, int stage, int64_t bucket_bytes);

  /// The gradient pass, in three parts: begin(weight) before the backward pass;
  /// add(i, grad_i) as the pass makes gradient i (float32, the full parameter shape; copied,
  /// times weight, into its bucket; a complete bucket starts its reduce-scatter when its
  /// predecessors have started); finish(zeros) after it: a rank with no rows of the global
  /// batch (zeros = true) contributes zeros for every gradient it did not add; then waits
  /// for every reduce-scatter. Errors: a shape/dtype mismatch or a missing gradient
  /// (kInvalidArgument naming the parameter), the communicator's (kUnavailable).
  void begin(double weight);
  void add(size_t i, const Tensor& grad);
  Status finish(bool zeros);
  /// Buckets whose reduce-scatter add() started (during the backward pass) since begin().
  size_t started_early() const { return started_early_; }

  /// The optimizer step on this rank's rows (after finish): clip_norm > 0 clips the summed
  /// gradient to that global L2 norm; `step` = completed steps. Stage 2 all-gathers the
  /// updated rows into params[i].value (the same on every rank). Errors: the
  /// communicators' and optimizer_step's.
  Status step(std::vector<Param>& params, double lr, int64_t step, double clip_norm);

  /// Stage 3: the parameters on demand (Interpreter::ValueSource; acquire all-gathers one
  /// parameter over `comm`, release forgets it). Valid while this object lives.
  Interpreter::ValueSource* source() { return &source_; }
  /// Bytes of gathered parameters alive now and at most since create() (stage 3), per rank
  /// (a prefetched one counts from its prefetch).
  uint64_t gathered_bytes() const { return live_; }
  uint64_t peak_gathered_bytes() const { return peak_; }
  /// Bytes of packed gradient buckets (N C * 4 each) alive at most at once since create():
  /// a bucket's buffer is allocated when its first gradient is packed and freed when its
  /// reduce-scatter has completed (at most two in flight), so with several buckets this
  /// stays below the full gradient bytes.
  uint64_t peak_gradient_buffer_bytes() const { return buf_peak_; }
  /// Parameter all-gathers of source() since create(): those a prefetch had started (they
  /// overlapped computation) and those acquire had to do itself.
  uint64_t prefetched_gathers() const { return prefetched_; }
  uint64_t blocking_gathers() const { return blocking_; }
  /// Bytes of all parameters (4 per element).
  uint64_t parameter_bytes() const { return 4 * static_cast<uint64_t>(total_); }

  /// Collective (every rank, same point): fills params[i].value (when values; stage 3) and
  /// params[i].state with the full tensors gathered over `ctrl`, for a checkpoint or the
  /// final model: on every rank (root < 0; all-gathers) or on rank `root` alone (the
  /// others send their rows to it, so they never hold a full tensor). release_values()
  /// empties the values again (stage 3) and drops the full states gather() made (the rank
  /// keeps its rows of them). Errors: the communicator's.
  Status gather(std::vector<Param>& params, bool values, int root = -1);
  void release_values(std::vector<Param>& params) const;

  /// The layout (rank -> pieces), as a sharded checkpoint records it.
  const ShardLayout& layout() const { return layout_; }
  int stage() const { return stage_; }
  size_t buckets() const { return buckets_.size(); }
  /// Bytes this rank sends per step by the ring algorithms: 2 (N - 1) C_b * 4 summed over
  /// buckets (stage 2), or the reduce-scatters plus (N - 1) c_i * 4 per acquisition, with
  /// `acquisitions`[i] = how often a step acquires parameter i (stage 3).
  uint64_t ring_bytes_exact(const std::vector<int>& acquisitions) const;
  /// Bytes of one all-gather of parameter i by this rank: (N - 1) c_i * 4.
  uint64_t gather_bytes(size_t i) const;

 private:
  struct Bucket {
    std::vector<size_t> params;  // reverse parameter order
    int64_t chunk = 0;           // C: elements per rank
    std::vector<float> buf, mine;  // N C (rank-major; only between packing and reduce-scatter) and C elements
    size_t filled = 0;
  };
  ShardedDataParallel(Communicator& comm, Communicator& ctrl) : comm_(comm), ctrl_(ctrl) {}
  void start_ready();
  void retire(size_t j);  // waits for bucket j's reduce-scatter and frees its buffer
  int64_t rows_of(size_t i, int r) const;   // rows of parameter i that rank r owns
  int64_t row_size(size_t i) const;         // elements per dim-0 row
  // Parameter i (full shape) from every rank's rows over `c`: an all-gather of rank 0's row
  // count, zero padded (root < 0), or sends to `root`, which alone fills `out`. rows: this
  // rank's rows, or null for zeros.
  Status gather_rows(Communicator& c, size_t i, const Tensor* rows, Tensor& out, int root = -1) const;
  Communicator &comm_, &ctrl_;
  OptimizerConfig opt_;
  int stage_ = 2;
  std::vector<Shape> shapes_;
  std::vector<std::string> names_;
  ShardLayout layout_;
  std::vector<Bucket> buckets_;
  std::vector<size_t> bucket_of_;
  std::vector<std::vector<int64_t>> offset_of_;  // [param][rank]: its rows' first element in the rank's chunk
  std::vector<Param> shard_;                     // per parameter: this rank's rows ([rows, ...]) and their state
  std::vector<bool> added_;
  std::vector<std::unique_ptr<CommRequest>> pending_;
  size_t next_ = 0, started_early_ = 0, waited_ = 0;
  uint64_t buf_live_ = 0, buf_peak_ = 0;
  float weight_ = 1;
  Status error_ = Status::ok();
  int64_t total_ = 0;
  uint64_t live_ = 0, peak_ = 0;
  std::vector<uint64_t> held_;  // per parameter: bytes of its gathered copy now handed out (0: none)
  Interpreter::ValueSource source_;
  struct Prefetch {  // an all-gather started by source().prefetch, finished by acquire
    size_t param = 0;
    std::vector<float> send, all;
    std::unique_ptr<CommRequest> req;
    uint64_t bytes = 0;
  } prefetch_;
  Status prefetch_error_ = Status::ok();
  uint64_t prefetched_ = 0, blocking_ = 0;
  // Waits for the prefetch in flight; out: the parameter assembled from it (null: dropped).
  Status finish_prefetch(Tensor* out);
};

}  // namespace tessera::train
