// Window geometry shared by the schemas and kernels of Conv, ConvTranspose, MaxPool and
// AveragePool: parses kernel_shape, strides, dilations, pads, auto_pad (and output_padding,
// output_shape for ConvTranspose), checks them against the input shape and computes the
// output spatial sizes and the resolved begin/end pads. Schemas and kernels both call these,
// so the planner and the kernel can never disagree about a shape.
//
// Formulas (ONNX operator spec, Conv-11 / MaxPool-12 / AveragePool-19 / ConvTranspose-11):
//   dk  = (kernel - 1) * dilation + 1                       (effective window extent)
//   NOTSET: out = floor((in + pad_begin + pad_end - dk) / stride) + 1   (ceil with ceil_mode)
//   VALID:  pads = 0, out as NOTSET
//   SAME_UPPER / SAME_LOWER: out = ceil(in / stride),
//           total = (out - 1) * stride + dk - in (clamped to >= 0 for Conv, not for pooling,
//           as in onnxruntime), the odd pad goes at the end (SAME_UPPER) or the beginning
//           (SAME_LOWER).
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/graph.h"
#include "tessera/status.h"
#include "tessera/tensor.h"

namespace tessera {

/// Most spatial dims a Conv/pool kernel supports (kernels keep fixed-size index arrays so
/// that they never allocate).
constexpr int kMaxSpatialDims = 6;

/// Resolved geometry of a sliding-window op over the spatial dims (all vectors have
/// `rank` entries, sizes in elements).
struct WindowGeometry {
  int rank = 0;
  std::vector<int64_t> in, out, kernel, strides, dilations, pads_begin, pads_end;
};

/// Geometry of Conv / MaxPool / AveragePool for input `x_shape` [N, C, D1, ...].
/// `w_kernel` is W's spatial shape for Conv (used when kernel_shape is absent, checked
/// against it when present); empty for pooling, where kernel_shape is required.
/// `ceil_mode` rounds the output size up (pooling only). Errors (invalid_argument, naming
/// the node) on a bad rank, attribute list length, non-positive kernel/stride/dilation,
/// negative pads, an unknown auto_pad or a non-positive output size.
Result<WindowGeometry> window_geometry(const Node& node, const Shape& x_shape, const std::vector<int64_t>& w_kernel,
                                       bool ceil_mode);

/// Geometry of ConvTranspose for X [N, C, D1, ...] and W [C, M/group, k1, ...]:
///   out = stride * (in - 1) + output_padding + dk - pad_begin - pad_end
/// or, with output_shape or auto_pad SAME_*, pads derived from
///   total = max(0, stride * (in - 1) + output_padding + dk - out)
/// split as the spec says (SAME_UPPER: begin = total / 2; otherwise begin = total - total / 2).
/// Here `out` is the output size and `in` the input size; `pads_*` are the pads of the output.
/// The checks Conv and ConvTranspose share: X and W float, W of X's rank (>= 3), and a
/// `group` >= 1, which it returns. Errors name the node.
Result<int64_t> check_conv_operands(const Node& node, const Shape& x, DType x_dtype, const Shape& w, DType w_dtype);
/// check_conv_operands without the dtype check (for the integer convolutions).
Result<int64_t> check_conv_rank_and_group(const Node& node, const Shape& x, const Shape& w);
/// Conv's channel rule for X [N, C, ...] and W [M, C / group, ...]: C divisible by group with
/// W.shape[1] = C / group, and M divisible by group. Errors (invalid_argument) name the node.
Status check_conv_channels(const Node& node, const Shape& x, const Shape& w, int64_t group);

Result<WindowGeometry> conv_transpose_geometry(const Node& node, const Shape& x_shape, const Shape& w_shape);

}  // namespace tessera
