// GridSample (ONNX opset 16 and 20). X [N, C, D1, ..., Dr], grid [N, O1, ..., Or, r] holding
// normalized coordinates in [-1, 1], innermost first (grid[..., 0] indexes Dr, the width;
// grid[..., r-1] indexes D1) -> Y [N, C, O1, ..., Or]. Opset 16 is 2-D only (X of rank 4);
// opset 20 takes r = 1 .. 6 spatial dims (N-linear / N-cubic interpolation).
// mode bilinear|nearest|bicubic (16) or linear|nearest|cubic (20); padding_mode
// zeros|border|reflection; align_corners 0|1. X and grid float or double, of one dtype.
#include "runtime/ops/op_schema.h"
#include "runtime/ops/spatial_attrs.h"

namespace tessera {

namespace {
Status infer(InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  const ValueInfo& g = ctx.input(1);
  if (x.dtype != DType::kFloat32 && x.dtype != DType::kFloat64)
    return ctx.unsupported(std::string("X dtype ") + dtype_name(x.dtype) + " is not supported (float, double)");
  if (g.dtype != x.dtype) return ctx.unsupported("grid must have X's dtype");
  const size_t rank = x.shape.size();
  if (ctx.node().opset < 20 && rank != 4)
    return ctx.error("GridSample-" + std::to_string(ctx.node().opset) + " takes a 4-D X [N, C, H, W], got " +
                     shape_to_string(x.shape) + " (N-d sampling needs opset 20)");
  if (rank < 3) return ctx.error("X must have rank >= 3 ([N, C, D1, ...]), got " + shape_to_string(x.shape));
  if (rank - 2 > static_cast<size_t>(kMaxSpatialDims))
    return ctx.unsupported("at most " + std::to_string(kMaxSpatialDims) + " spatial dims are supported, X is " +
                           shape_to_string(x.shape));
  const int64_t r = static_cast<int64_t>(rank) - 2;
  if (g.shape.size() != rank || g.shape.back() != r || g.shape[0] != x.shape[0])
    return ctx.error("grid must be [N, O1, ..., O" + std::to_string(r) + ", " + std::to_string(r) + "] with N = " +
                     std::to_string(x.shape[0]) + ", got " + shape_to_string(g.shape));
  std::string mode = ctx.node().attr_s("mode", ctx.node().opset >= 20 ? "linear" : "bilinear");
  if (mode != "bilinear" && mode != "linear" && mode != "nearest" && mode != "bicubic" && mode != "cubic")
    return ctx.error("mode '" + mode + "' is not linear/bilinear, nearest or cubic/bicubic");
  std::string pad = ctx.node().attr_s("padding_mode", "zeros");
  if (pad != "zeros" && pad != "border" && pad != "reflection")
    return ctx.error("padding_mode '" + pad + "' is not zeros, border or reflection");
  const int64_t align = ctx.node().attr_i("align_corners", 0);
  if (align != 0 && align != 1) return ctx.error("align_corners must be 0 or 1, got " + std::to_string(align));
  ctx.output(0).dtype = x.dtype;
  ctx.output(0).shape = {x.shape[0], x.shape[1]};
  ctx.output(0).shape.insert(ctx.output(0).shape.end(), g.shape.begin() + 1, g.shape.end() - 1);
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_GridSample = {"GridSample", 2, 2, 1, 1, infer};

}  // namespace tessera
