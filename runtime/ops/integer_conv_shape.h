// Shape rules shared by ConvInteger (ONNX opset 10) and QLinearConv (opset 10): Conv's
// geometry (runtime/ops/spatial_attrs.h) over 8-bit integer X [N, C, D1, ...] and
// W [M, C/group, k1, ...], and the quantization parameters: per-tensor (1 element) or, for
// W's, per output channel (M elements).
#pragma once

#include <string>

#include "runtime/ops/op_schema.h"
#include "runtime/ops/spatial_attrs.h"

namespace tessera {

/// Y's shape [N, M, O1, ...] for X and W (input indices `xi`, `wi`). X and W must be int8 or
/// uint8 (unimplemented otherwise), W of X's rank, C divisible by group with
/// W.shape[1] = C / group, M divisible by group; the window attributes are checked by
/// window_geometry. Errors name the node.
inline Result<Shape> integer_conv_shape(InferContext& ctx, size_t xi, size_t wi) {
  const ValueInfo& x = ctx.input(xi);
  const ValueInfo& w = ctx.input(wi);
  auto is_8bit = [](DType d) { return d == DType::kInt8 || d == DType::kUInt8; };
  if (!is_8bit(x.dtype) || !is_8bit(w.dtype))
    return ctx.unsupported(std::string("X ") + dtype_name(x.dtype) + " and W " + dtype_name(w.dtype) +
                           " are not supported (int8, uint8)");
  TSR_ASSIGN_OR_RETURN(const int64_t group, check_conv_rank_and_group(ctx.node(), x.shape, w.shape));
  TSR_RETURN_IF_ERROR(check_conv_channels(ctx.node(), x.shape, w.shape, group));
  const int64_t m = w.shape[0];
  std::vector<int64_t> w_kernel(w.shape.begin() + 2, w.shape.end());
  TSR_ASSIGN_OR_RETURN(WindowGeometry g, window_geometry(ctx.node(), x.shape, w_kernel, /*ceil_mode=*/false));
  Shape y = {x.shape[0], m};
  y.insert(y.end(), g.out.begin(), g.out.end());
  return y;
}

/// Checks input `i` (a scale or zero point named `name`, when present): dtype `dtype`, and
/// 1 element (a scalar or a 1-element 1-D tensor) or, when `per` > 0, shape [per] (per
/// output channel). Errors (invalid_argument) name the node and the input.
inline Status check_conv_param(InferContext& ctx, size_t i, const char* name, DType dtype, int64_t per) {
  if (!ctx.has_input(i)) return Status::ok();
  const ValueInfo& v = ctx.input(i);
  if (v.dtype != dtype)
    return ctx.error(std::string(name) + " has dtype " + dtype_name(v.dtype) + "; expected " + dtype_name(dtype));
  int64_t n = 1;
  for (int64_t d : v.shape) n *= d;
  if (n == 1 && v.shape.size() <= 1) return Status::ok();
  if (per > 0 && v.shape == Shape{per}) return Status::ok();
  return ctx.error(std::string(name) + " of shape " + shape_to_string(v.shape) + " must be a scalar" +
                   (per > 0 ? " or have shape [" + std::to_string(per) + "]" : std::string()));
}

}  // namespace tessera
