// GridSample (ONNX opset 16 and 20), 2-D: X [N, C, H, W], grid [N, Ho, Wo, 2] holding
// normalized (x, y) in [-1, 1] -> Y [N, C, Ho, Wo]. mode bilinear|nearest|bicubic (16) or
// linear|nearest|cubic (20); padding_mode zeros|border|reflection; align_corners 0|1.
// Volumetric (N-d, opset 20) inputs are not supported yet.
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {
Status infer(InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  const ValueInfo& g = ctx.input(1);
  if (x.dtype != DType::kFloat32 && x.dtype != DType::kFloat64)
    return ctx.unsupported(std::string("X dtype ") + dtype_name(x.dtype) + " is not supported (float, double)");
  if (g.dtype != x.dtype) return ctx.unsupported("grid must have X's dtype");
  if (x.shape.size() != 4) return ctx.unsupported("only 2-D GridSample (X of rank 4) is supported, X is " + shape_to_string(x.shape));
  if (g.shape.size() != 4 || g.shape[3] != 2 || g.shape[0] != x.shape[0])
    return ctx.error("grid must be [N, Ho, Wo, 2] with N = " + std::to_string(x.shape[0]) + ", got " + shape_to_string(g.shape));
  std::string mode = ctx.node().attr_s("mode", ctx.node().opset >= 20 ? "linear" : "bilinear");
  if (mode != "bilinear" && mode != "linear" && mode != "nearest" && mode != "bicubic" && mode != "cubic")
    return ctx.error("mode '" + mode + "' is not linear/bilinear, nearest or cubic/bicubic");
  std::string pad = ctx.node().attr_s("padding_mode", "zeros");
  if (pad != "zeros" && pad != "border" && pad != "reflection")
    return ctx.error("padding_mode '" + pad + "' is not zeros, border or reflection");
  ctx.output(0).dtype = x.dtype;
  ctx.output(0).shape = {x.shape[0], x.shape[1], g.shape[1], g.shape[2]};
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_GridSample = {"GridSample", 2, 2, 1, 1, infer};

}  // namespace tessera
