// Resize (ONNX opset 10, 11, 13, 18, 19; followed for opsets 10..21): resizes X (any rank
// up to 8) by per-dim scales or to given sizes. Inputs: opset 10: X, scales; opset 11+:
// X, roi, scales, sizes (roi and scales optional from opset 13; an empty tensor counts as
// not given; exactly one of scales / sizes). scales, sizes and roi must be plan-time
// constants. Attributes: mode (nearest, linear, cubic), coordinate_transformation_mode
// (half_pixel, half_pixel_symmetric, pytorch_half_pixel, align_corners, asymmetric,
// tf_half_pixel_for_nn, tf_crop_and_resize), nearest_mode (round_prefer_floor,
// round_prefer_ceil, floor, ceil), cubic_coeff_a, exclude_outside, extrapolation_value,
// axes, keep_aspect_ratio_policy and antialias (opset 18). Linear and cubic interpolate
// over every dim (separable). float only. See resize_attrs.h.
#include "runtime/ops/op_schema.h"
#include "runtime/ops/resize_attrs.h"

namespace tessera {

namespace {

Status infer(InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  if (x.dtype != DType::kFloat32) return ctx.unsupported(std::string("dtype ") + dtype_name(x.dtype) + " is not supported (float)");
  auto in = [&](size_t i) { return ctx.has_input(i) ? &ctx.input(i) : nullptr; };
  Result<ResizeParams> p = ctx.node().opset < 11 ? resize_params(ctx.node(), x.shape, nullptr, in(1), nullptr)
                                                 : resize_params(ctx.node(), x.shape, in(1), in(2), in(3));
  TSR_RETURN_IF_ERROR(p.status());
  ctx.output(0).dtype = x.dtype;
  ctx.output(0).shape = p->out;
  return Status::ok();
}

}  // namespace

const OpSchema kSchema_Resize = {"Resize", 1, 4, 1, 1, infer};

}  // namespace tessera
