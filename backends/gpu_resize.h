// The 2-D Resize of the GPU backends (the CUDA kernel launch_resize2d_f32 and the Vulkan
// shader resize.comp): which Resize and Upsample nodes they take, and the mode codes their
// kernels switch on. One reading for both backends, as backends/unary_math.h is for the
// unary ops.
#pragma once

#include <cstdint>

#include "backends/backend.h"
#include "runtime/ops/resize_attrs.h"
#include "runtime/ops/resize_nearest.h"

namespace tessera {

/// A 4-D NCHW float Resize (ONNX Resize-10/11/13/18/19) or Upsample (-7/9) that resizes H
/// and W only, by nearest or (bi)linear interpolation: input planes of h x w, output planes
/// of oh x ow, the scales (output / input) of H and W, and the kernels' codes (the codes of
/// runtime/ops/resize_nearest.h):
///   coord:   0 half_pixel, 1 asymmetric, 2 align_corners, 3 pytorch_half_pixel,
///            4 tf_half_pixel_for_nearest, 5 half_pixel_symmetric;
///   nearest: 0 round_prefer_floor, 1 round_prefer_ceil, 2 floor, 3 ceil, 4 simple (Upsample).
/// exact_nearest: nearest with `sizes` (scale = out / in): the kernels compute the source
/// index in integer arithmetic (resize_nearest.h), exact at ties, as the CPU does; else the
/// coordinate from the float scale (ties may then fall to either side).
struct GpuResize2d {
  int64_t planes = 0, h = 0, w = 0, oh = 0, ow = 0;
  float scale_h = 1.f, scale_w = 1.f;
  bool linear = false;
  int coord = 0, nearest = 0;
  bool exact_nearest = false;
};

/// Reads the node (its scales or sizes must be plan-time constants) into `out`. False for
/// any other Resize (cubic, antialias, N or C resized, tf_crop_and_resize, another rank or
/// dtype, an empty plane): the backend then declines and the node runs on the CPU.
inline bool gpu_resize2d_of(const CompileContext& ctx, GpuResize2d* out) {
  if (!ctx.has_input(0) || ctx.input(0).dtype != DType::kFloat32 || ctx.outputs[0].dtype != DType::kFloat32) return false;
  const Shape& xs = ctx.input(0).shape;
  if (xs.size() != 4) return false;
  const auto in = [&ctx](size_t i) { return ctx.has_input(i) ? &ctx.input(i) : nullptr; };
  Result<ResizeParams> rp =
      ctx.node.op_type == "Upsample" ? upsample_params(ctx.node, xs, in(1)) : resize_params(ctx.node, xs, in(1), in(2), in(3));
  if (!rp.is_ok()) return false;
  const ResizeParams& p = rp.value();
  using P = ResizeParams;
  if (p.mode == P::Mode::kCubic || p.antialias || p.out.size() != 4) return false;
  if (p.out[0] != xs[0] || p.out[1] != xs[1] || p.scales[0] != 1.f || p.scales[1] != 1.f) return false;
  GpuResize2d r;
  r.planes = xs[0] * xs[1];
  r.h = xs[2], r.w = xs[3], r.oh = p.out[2], r.ow = p.out[3];
  r.scale_h = p.scales[2], r.scale_w = p.scales[3];
  r.linear = p.mode == P::Mode::kLinear;
  r.coord = resize_coord_code(p.coord);
  if (r.coord < 0) return false;  // tf_crop_and_resize
  r.nearest = resize_nearest_code(p.nearest);
  if (r.h <= 0 || r.w <= 0) return false;
  r.exact_nearest = resize_nearest_exact(p, r.h, r.oh) && resize_nearest_exact(p, r.w, r.ow);
  *out = r;
  return true;
}

}  // namespace tessera
