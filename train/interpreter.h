// The training module's graph executor: runs a Graph IR (a forward graph, or a forward graph
// with the backward graph that train/autodiff.h appended) node by node with the training
// reference kernels (train/kernels_*.cc), in float32 or float64.
//
// Why not the Session planner yet: the backward graph uses ops of the "tessera.train" domain
// (ConvGradInput, MaxPoolGrad, ...) and float64, which the CPU backend's kernel table does
// not have; these kernels are the oracle that planner kernels for them will be tested against.
//
// Memory: each value is released right after its last use (liveness over the whole graph),
// so of the forward activations only those that backward nodes read stay alive until the
// backward pass reaches them.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tessera/graph.h"
#include "tessera/status.h"
#include "tessera/tensor.h"

namespace tessera::train {

/// Domain of the training module's own ops.
inline constexpr const char* kTrainOpDomain = "tessera.train";

/// True when the training kernels can run `op_type` of `domain` ("" = ONNX).
bool has_training_kernel(const std::string& domain, const std::string& op_type);

class Interpreter {
 public:
  /// Prepares `graph` to compute `fetches` (value names). Errors: kUnimplemented naming the
  /// first node whose op has no training kernel; kNotFound for an unknown fetch name.
  static Result<std::unique_ptr<Interpreter>> create(std::shared_ptr<const Graph> graph,
                                                     const std::vector<std::string>& fetches);

  /// Runs the graph. `feeds` give graph inputs and may override initializers (the trainer
  /// feeds its current parameters this way); tensors are read in place. `seed` drives
  /// Dropout masks (the same seed gives the same masks). Returns the fetches in order.
  /// Errors: kInvalidArgument naming a missing graph input, or the failing node and why.
  ///
  /// `on_fetch`, when given, is called with (fetch index, value) as soon as the node that
  /// makes a fetched value has run, while later nodes are still to run (data parallelism
  /// starts a gradient bucket's all-reduce while the backward pass goes on); a fetch that
  /// no node makes (a feed or an initializer) is not reported.
  using FetchCallback = std::function<void(size_t, const Tensor&)>;
  /// `drop_reported` (one flag per fetch, or null): fetch f with (*drop_reported)[f] set is
  /// released right after on_fetch reported it (its entry in the result is an empty
  /// Tensor), so the caller keeps only what it copied (ZeRO-2/3 keep only their shard of
  /// each gradient).
  ///
  /// `source`, when given, provides values on demand instead of feeds and initializers
  /// (FSDP's parameters, all-gathered from their shards just before use): see ValueSource.
  struct ValueSource;
  Result<std::vector<Tensor>> run(const std::vector<std::pair<std::string, Tensor>>& feeds, uint64_t seed = 0,
                                  const FetchCallback* on_fetch = nullptr, const ValueSource* source = nullptr,
                                  const std::vector<bool>* drop_reported = nullptr) const;

  /// Values made on demand (Zhao et al., "PyTorch FSDP", VLDB 2023: gather a unit's
  /// parameters before its forward, free them after; gather again before its backward).
  /// The graph's nodes are cut into segments at `segment_starts` (node indices, e.g. the
  /// first backward node). For value names[k] (an initializer or input of the graph; it
  /// must not also be fed, and its initializer is not used), acquire(k) is called just
  /// before the first node of a segment that reads it, and the interpreter holds the result
  /// until the last node of that segment that reads it has run; then it drops its
  /// reference and calls release(k) (a provided value that is also fetched is held to the
  /// end and not released). So a value read in the forward and the backward segment is
  /// acquired twice and held only around its uses.
  /// Errors: acquire's, returned by run() with the node that needed the value;
  /// kInvalidArgument from run() for a name that is not a value of the graph. The kernels
  /// check the shapes of what acquire returns, as for feeds.
  ///
  /// prefetch (optional): called right after each acquire with the index of the value the
  /// run will acquire next (acquisitions follow one order, fixed by the graph), so that the
  /// source can start making it while the nodes in between run (FSDP's prefetch of the
  /// next unit); the matching acquire must finish that work.
  struct ValueSource {
    std::vector<std::string> names;
    std::vector<size_t> segment_starts;
    std::function<Result<Tensor>(size_t)> acquire;
    std::function<void(size_t)> release;
    std::function<void(size_t)> prefetch;
  };
  /// The number of segments (cut at `segment_starts`, as in ValueSource) with a node that
  /// run() executes and that reads `value`: how often a ValueSource is asked for it per
  /// run. 0 for an unknown name.
  int segments_reading(const std::string& value, const std::vector<size_t>& segment_starts) const;

  /// Peak bytes of live node outputs during the last run() (activations, gradients).
  uint64_t last_peak_bytes() const { return peak_bytes_; }
  const Graph& graph() const { return *graph_; }

 private:
  std::shared_ptr<const Graph> graph_;
  std::vector<int> fetch_ids_;
  std::vector<int> last_use_;   // per value: index of the last node reading it (-1: none)
  std::vector<bool> needed_;    // per node: contributes to a fetch
  static size_t segment_of(size_t node, const std::vector<size_t>& starts);
  mutable uint64_t peak_bytes_ = 0;
};

}  // namespace tessera::train
