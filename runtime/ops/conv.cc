// Conv (ONNX opset 1, 11; followed for opsets 7..21): N-d convolution (1-D, 2-D, 3-D, ...)
// of X [N, C, D1, ...] with W [M, C/group, k1, ...] and optional bias B [M], giving
// Y [N, M, O1, ...]. Attributes: group, kernel_shape (defaults to W's spatial shape),
// strides, dilations, pads, auto_pad (NOTSET, SAME_UPPER, SAME_LOWER, VALID). float only.
#include "runtime/ops/op_schema.h"
#include "runtime/ops/spatial_attrs.h"

namespace tessera {

namespace {

Status infer(InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  const ValueInfo& w = ctx.input(1);
  TSR_ASSIGN_OR_RETURN(const int64_t group, check_conv_operands(ctx.node(), x.shape, x.dtype, w.shape, w.dtype));
  TSR_RETURN_IF_ERROR(check_conv_channels(ctx.node(), x.shape, w.shape, group));
  const int64_t m = w.shape[0];
  if (ctx.has_input(2)) {
    const ValueInfo& b = ctx.input(2);
    if (b.dtype != DType::kFloat32) return ctx.error(std::string("B must be float, got ") + dtype_name(b.dtype));
    if (b.shape != Shape{m}) return ctx.error("B " + shape_to_string(b.shape) + " must have shape [" + std::to_string(m) + "]");
  }
  std::vector<int64_t> w_kernel(w.shape.begin() + 2, w.shape.end());
  TSR_ASSIGN_OR_RETURN(WindowGeometry g, window_geometry(ctx.node(), x.shape, w_kernel, /*ceil_mode=*/false));
  ValueInfo& y = ctx.output(0);
  y.dtype = DType::kFloat32;
  y.shape = {x.shape[0], m};
  y.shape.insert(y.shape.end(), g.out.begin(), g.out.end());
  return Status::ok();
}

}  // namespace

const OpSchema kSchema_Conv = {"Conv", 2, 3, 1, 1, infer};

}  // namespace tessera
