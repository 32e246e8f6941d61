// ConvInteger (ONNX opset 10): Conv (runtime/ops/conv.cc geometry: group, kernel_shape,
// strides, dilations, pads, auto_pad) of 8-bit integers with zero points, int32 output:
//   Y[n, m, o] = sum (X[n, c, tap] - x_zero_point) * (W[m, c, k] - w_zero_point[m])
// X uint8/int8 [N, C, D1, ...], W uint8/int8 [M, C/group, k1, ...]; x_zero_point (X's dtype)
// a scalar; w_zero_point (W's dtype) a scalar or [M]; both default to 0. Y int32.
#include "runtime/ops/integer_conv_shape.h"

namespace tessera {

namespace {
Status infer(InferContext& ctx) {
  TSR_ASSIGN_OR_RETURN(Shape y, integer_conv_shape(ctx, 0, 1));
  TSR_RETURN_IF_ERROR(check_conv_param(ctx, 2, "x_zero_point", ctx.input(0).dtype, 0));
  TSR_RETURN_IF_ERROR(check_conv_param(ctx, 3, "w_zero_point", ctx.input(1).dtype, ctx.input(1).shape[0]));
  ctx.output(0) = {DType::kInt32, y, nullptr};
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_ConvInteger = {"ConvInteger", 2, 4, 1, 1, infer};

}  // namespace tessera
