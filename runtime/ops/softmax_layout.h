// How Softmax, LogSoftmax (and Hardmax) see their input, which changed at opset 13:
//   opset < 13: the input is coerced to 2-D [prod(shape[:axis]), prod(shape[axis:])] and
//               normalized along the second dim; axis defaults to 1.
//   opset >= 13: normalized along the single dim `axis`; axis defaults to -1.
// Both are described as [outer, axis_len, inner] with the reduction over axis_len.
#pragma once

#include "runtime/ops/op_schema.h"
#include "tessera/graph.h"
#include "tessera/status.h"
#include "tessera/tensor.h"

namespace tessera {

struct SoftmaxLayout {
  int64_t outer = 1, axis_len = 1, inner = 1;
};

/// The [outer, axis_len, inner] view of `shape` for this node's opset and axis. Errors
/// (naming the node) on a rank-0 input or an axis out of [-rank, rank).
inline Result<SoftmaxLayout> softmax_layout(const Node& node, const Shape& shape) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (rank == 0) return invalid_argument(node.describe() + ": input must have rank >= 1");
  const bool legacy = node.opset < 13;
  int64_t axis = node.attr_i("axis", legacy ? 1 : -1);
  if (axis < -rank || axis >= rank)
    return invalid_argument(node.describe() + ": axis " + std::to_string(axis) + " is out of range for rank " +
                            std::to_string(rank));
  if (axis < 0) axis += rank;
  SoftmaxLayout l;
  for (int64_t i = 0; i < rank; ++i) {
    const int64_t d = shape[static_cast<size_t>(i)];
    if (i < axis) l.outer *= d;
    else if (legacy || i == axis) l.axis_len *= d;
    else l.inner *= d;
  }
  return l;
}

/// Shape inference shared by Softmax and LogSoftmax: float X, layout checked, Y like X.
inline Status infer_softmax_family(InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  if (x.dtype != DType::kFloat32) return ctx.unsupported(std::string("dtype ") + dtype_name(x.dtype) + " is not supported (float)");
  TSR_RETURN_IF_ERROR(softmax_layout(ctx.node(), x.shape).status());
  ctx.output(0).dtype = x.dtype;
  ctx.output(0).shape = x.shape;
  return Status::ok();
}

}  // namespace tessera
