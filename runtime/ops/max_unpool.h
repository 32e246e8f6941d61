// MaxUnpool's shared geometry (runtime/ops/max_unpool.cc, backends/cpu/ref/max_unpool.cc).
#pragma once

#include "tessera/graph.h"
#include "tessera/status.h"
#include "tessera/tensor.h"

namespace tessera {

/// The unpooled shape [N, C, O1, ..., On] of MaxUnpool node `node` for X of shape `x`
/// (ONNX MaxUnpool-11/22 shape inference):
///   Oi = (Di - 1) * strides[i] - pads[i] - pads[n + i] + kernel_shape[i].
/// The indices I are flat row-major positions in this shape. Errors (invalid_argument,
/// naming the node) on X of rank < 3, a missing kernel_shape, an attribute of the wrong
/// length, a kernel or stride < 1, a negative pad or an unpooled size < 1.
Result<Shape> max_unpool_inferred_shape(const Node& node, const Shape& x);

}  // namespace tessera
