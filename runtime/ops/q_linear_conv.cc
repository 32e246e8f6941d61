// QLinearConv (ONNX opset 10): quantized Conv (runtime/ops/conv.cc geometry),
//   acc[n, m, o] = B[m] + sum (X[n, c, tap] - x_zero_point) * (W[m, c, k] - w_zero_point[m])
//   Y = saturate(rint(acc * x_scale * w_scale[m] / y_scale + y_zero_point))
// Inputs: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B.
// All but B are required. X, W uint8/int8; Y takes y_zero_point's dtype (uint8/int8);
// scales float; x_scale, x_zero_point, y_scale, y_zero_point scalars; w_scale, w_zero_point
// scalars or [M]; B int32 [M] (optional).
#include "runtime/ops/integer_conv_shape.h"

namespace tessera {

namespace {
Status infer(InferContext& ctx) {
  TSR_ASSIGN_OR_RETURN(Shape y, integer_conv_shape(ctx, 0, 3));
  const int64_t m = ctx.input(3).shape[0];
  const DType yt = ctx.input(7).dtype;  // inputs 0..7 are required (checked by infer_node)
  if (yt != DType::kInt8 && yt != DType::kUInt8)
    return ctx.unsupported(std::string("output dtype ") + dtype_name(yt) + " is not supported (int8, uint8)");
  TSR_RETURN_IF_ERROR(check_conv_param(ctx, 1, "x_scale", DType::kFloat32, 0));
  TSR_RETURN_IF_ERROR(check_conv_param(ctx, 2, "x_zero_point", ctx.input(0).dtype, 0));
  TSR_RETURN_IF_ERROR(check_conv_param(ctx, 4, "w_scale", DType::kFloat32, m));
  TSR_RETURN_IF_ERROR(check_conv_param(ctx, 5, "w_zero_point", ctx.input(3).dtype, m));
  TSR_RETURN_IF_ERROR(check_conv_param(ctx, 6, "y_scale", DType::kFloat32, 0));
  TSR_RETURN_IF_ERROR(check_conv_param(ctx, 7, "y_zero_point", yt, 0));
  if (ctx.has_input(8)) {
    const ValueInfo& b = ctx.input(8);
    if (b.dtype != DType::kInt32 || b.shape != Shape{m})
      return ctx.error("B must be int32 of shape [" + std::to_string(m) + "], got " + dtype_name(b.dtype) + " " +
                       shape_to_string(b.shape));
  }
  ctx.output(0) = {yt, y, nullptr};
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_QLinearConv = {"QLinearConv", 8, 9, 1, 1, infer};

}  // namespace tessera
