// Evaluates one node on the reference CPU kernels, now: schema inference, compile, run.
// Used by plan-time folding of shape computations and by the converter's constant folding.
#pragma once

#include <memory>
#include <vector>

#include "tessera/graph.h"
#include "tessera/status.h"
#include "tessera/tensor.h"

namespace tessera {

/// Runs `node` (a kernel op of the ONNX domain) on `inputs` (nullptr = omitted optional
/// input; all inputs are offered to shape inference as known values). Returns one tensor
/// per node output (an undefined Tensor for an omitted output). Errors name the node.
Result<std::vector<Tensor>> evaluate_node(const Node& node, const std::vector<const Tensor*>& inputs);

}  // namespace tessera
