// Shared checks for the quantization parameters (scale and zero point) of QuantizeLinear
// and DequantizeLinear (ONNX opsets 10, 13, 19, 21): which element of the scale applies to
// which element of the data. Used by the schemas and the reference kernels, so the two can
// never disagree.
#pragma once

#include <string>

#include "tessera/graph.h"
#include "tessera/status.h"
#include "tessera/tensor.h"

namespace tessera {

/// How scale/zero point map onto X (all sizes in elements). X is viewed as
/// [outer, axis_dim, inner]; element (o, a, i) uses parameter
///   per-tensor: 0;   per-axis: a;   blocked: (o * blocks + a / block_size) * inner + i.
struct QuantParamLayout {
  enum Kind { kPerTensor, kPerAxis, kBlocked } kind = kPerTensor;
  int64_t outer = 1, axis_dim = 1, inner = 1, block_size = 0, blocks = 1;

  int64_t param_index(int64_t i) const {
    if (kind == kPerTensor) return 0;
    const int64_t in = i % inner, a = (i / inner) % axis_dim;
    if (kind == kPerAxis) return a;
    const int64_t o = i / (inner * axis_dim);
    return (o * blocks + a / block_size) * inner + in;
  }
};

/// Resolves the layout for X of `x_shape`, scale of `scale_shape` and (when given) a zero
/// point of `zp_shape` (the scale's shape; a scalar and a 1-element 1-D count as the same), from the node's `axis` (opset >= 13, default 1) and `block_size`
/// (opset >= 21, default 0). Per-tensor: scale has one element (a scalar; opset >= 13 also
/// a 1-element 1-D). Per-axis (opset >= 13): scale is 1-D of x_shape[axis]. Blocked
/// (block_size > 0): scale has X's rank, X's dims except dim `axis`, which is
/// ceil(x_shape[axis] / block_size). Errors (invalid_argument, naming the node) otherwise.
inline Result<QuantParamLayout> quant_param_layout(const Node& node, const Shape& x_shape, const Shape& scale_shape,
                                                   const Shape* zp_shape) {
  const std::string who = node.describe() + ": ";
  auto numel_of = [](const Shape& s) {
    int64_t n = 1;
    for (int64_t d : s) n *= d;
    return n;
  };
  // A per-tensor scale and zero point may differ in rank (a scalar and a 1-element 1-D, as
  // ONNX's own QuantizeLinear-19 tests use).
  const bool both_per_tensor = zp_shape && zp_shape->size() <= 1 && scale_shape.size() <= 1 &&
                               numel_of(*zp_shape) == 1 && numel_of(scale_shape) == 1;
  if (zp_shape && *zp_shape != scale_shape && !both_per_tensor)
    return invalid_argument(who + "zero point " + shape_to_string(*zp_shape) + " must have the shape of the scale " +
                            shape_to_string(scale_shape));
  for (int64_t d : x_shape)
    if (d < 0) return invalid_argument(who + "bad input shape " + shape_to_string(x_shape));
  QuantParamLayout l;
  const int64_t block_size = node.opset >= 21 ? node.attr_i("block_size", 0) : 0;
  if (block_size < 0) return invalid_argument(who + "block_size must be >= 0, got " + std::to_string(block_size));
  int64_t scale_numel = 1;
  for (int64_t d : scale_shape) scale_numel *= d;
  if (block_size == 0 && scale_numel == 1 && scale_shape.size() <= (node.opset >= 13 ? 1u : 0u)) return l;
  if (node.opset < 13)
    return invalid_argument(who + "the scale must be a scalar at opset " + std::to_string(node.opset) + ", got " +
                            shape_to_string(scale_shape));
  const int64_t rank = static_cast<int64_t>(x_shape.size());
  int64_t axis = node.attr_i("axis", 1);
  if (axis < -rank || axis >= rank)
    return invalid_argument(who + "axis " + std::to_string(axis) + " is out of range for input " + shape_to_string(x_shape));
  if (axis < 0) axis += rank;
  l.axis_dim = x_shape[static_cast<size_t>(axis)];
  for (int64_t d = 0; d < axis; ++d) l.outer *= x_shape[static_cast<size_t>(d)];
  for (int64_t d = axis + 1; d < rank; ++d) l.inner *= x_shape[static_cast<size_t>(d)];
  if (block_size == 0) {
    if (scale_shape != Shape{l.axis_dim})
      return invalid_argument(who + "per-axis scale " + shape_to_string(scale_shape) + " must have shape [" +
                              std::to_string(l.axis_dim) + "] (input " + shape_to_string(x_shape) + ", axis " +
                              std::to_string(axis) + ")");
    l.kind = QuantParamLayout::kPerAxis;
    return l;
  }
  Shape want = x_shape;
  l.block_size = block_size;
  l.blocks = (l.axis_dim + block_size - 1) / block_size;
  want[static_cast<size_t>(axis)] = l.blocks;
  if (scale_shape != want)
    return invalid_argument(who + "blocked scale " + shape_to_string(scale_shape) + " must have shape " +
                            shape_to_string(want) + " (input " + shape_to_string(x_shape) + ", axis " +
                            std::to_string(axis) + ", block_size " + std::to_string(block_size) + ")");
  l.kind = QuantParamLayout::kBlocked;
  return l;
}

}  // namespace tessera
