// ConvTranspose (ONNX opset 1, 11; followed for opsets 7..21): N-d transposed convolution
// of X [N, C, D1, ...] with W [C, M/group, k1, ...] and optional B [M], giving
// Y [N, M, O1, ...] with O = stride * (D - 1) + output_padding + (k - 1) * dilation + 1
// - pad_begin - pad_end, or O = output_shape (pads then derived), or O = D * stride for
// auto_pad SAME_*. Attributes: group, kernel_shape, strides, dilations, pads,
// output_padding, output_shape, auto_pad. float only.
// Note: for an odd total padding the spec (and the ONNX reference implementation) put the
// extra pad at the end for SAME_UPPER and at the beginning otherwise; onnxruntime does the
// opposite. Tessera follows the spec.
#include <algorithm>

#include "runtime/ops/op_schema.h"
#include "runtime/ops/spatial_attrs.h"

namespace tessera {

namespace {

Status infer(InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  const ValueInfo& w = ctx.input(1);
  TSR_ASSIGN_OR_RETURN(const int64_t group, check_conv_operands(ctx.node(), x.shape, x.dtype, w.shape, w.dtype));
  const int64_t c = x.shape[1];
  if (w.shape[0] != c)
    return ctx.error("X has " + std::to_string(c) + " channels but W " + shape_to_string(w.shape) + " expects " +
                     std::to_string(w.shape[0]));
  if (group > std::max<int64_t>(c, 1) || c % group != 0)
    return ctx.error("input channels " + std::to_string(c) + " are not divisible by group " + std::to_string(group));
  const int64_t m = w.shape[1] * group;
  if (ctx.has_input(2)) {
    const ValueInfo& b = ctx.input(2);
    if (b.dtype != DType::kFloat32) return ctx.error(std::string("B must be float, got ") + dtype_name(b.dtype));
    if (b.shape != Shape{m}) return ctx.error("B " + shape_to_string(b.shape) + " must have shape [" + std::to_string(m) + "]");
  }
  TSR_ASSIGN_OR_RETURN(WindowGeometry g, conv_transpose_geometry(ctx.node(), x.shape, w.shape));
  ValueInfo& y = ctx.output(0);
  y.dtype = DType::kFloat32;
  y.shape = {x.shape[0], m};
  y.shape.insert(y.shape.end(), g.out.begin(), g.out.end());
  return Status::ok();
}

}  // namespace

const OpSchema kSchema_ConvTranspose = {"ConvTranspose", 2, 3, 1, 1, infer};

}  // namespace tessera
