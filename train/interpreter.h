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
  Result<std::vector<Tensor>> run(const std::vector<std::pair<std::string, Tensor>>& feeds, uint64_t seed = 0) const;

  /// Peak bytes of live node outputs during the last run() (activations, gradients).
  uint64_t last_peak_bytes() const { return peak_bytes_; }
  const Graph& graph() const { return *graph_; }

 private:
  std::shared_ptr<const Graph> graph_;
  std::vector<int> fetch_ids_;
  std::vector<int> last_use_;   // per value: index of the last node reading it (-1: none)
  std::vector<bool> needed_;    // per node: contributes to a fetch
  mutable uint64_t peak_bytes_ = 0;
};

}  // namespace tessera::train
