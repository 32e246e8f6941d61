// AffineGrid (ONNX opset 20, a function op the converter's ONNX 1.12 cannot expand): the
// sampling grid of an affine transform, for GridSample.
//   2-D: theta [N, 2, 3], size = (N, C, H, W)    -> grid [N, H, W, 2]
//   3-D: theta [N, 3, 4], size = (N, C, D, H, W) -> grid [N, D, H, W, 3]
// grid[n, ..., :] = theta[n] @ (x, y[, z], 1), with the normalized base coordinates of each
// spatial index i of a dim of length L:
//   align_corners = 1: -1 + i * 2 / (L - 1)   (-1 when L = 1);   0: -1 + (2 i + 1) / L.
// `size` (int64, plan-time constant) fixes the output shape. theta float or double.
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {
Status infer(InferContext& ctx) {
  const ValueInfo& theta = ctx.input(0);
  if (theta.dtype != DType::kFloat32 && theta.dtype != DType::kFloat64)
    return ctx.unsupported(std::string("theta dtype ") + dtype_name(theta.dtype) + " is not supported (float, double)");
  if (ctx.input(1).dtype != DType::kInt64)
    return ctx.error(std::string("size has dtype ") + dtype_name(ctx.input(1).dtype) + "; expected int64");
  TSR_ASSIGN_OR_RETURN(std::vector<int64_t> size, ctx.const_ints(1));
  if (size.size() != 4 && size.size() != 5)
    return ctx.error("size must have 4 (N, C, H, W) or 5 (N, C, D, H, W) values, got " + std::to_string(size.size()));
  const int64_t r = static_cast<int64_t>(size.size()) - 2;
  if (theta.shape.size() != 3 || theta.shape[1] != r || theta.shape[2] != r + 1)
    return ctx.error("theta must be [N, " + std::to_string(r) + ", " + std::to_string(r + 1) + "] for a size of " +
                     std::to_string(size.size()) + " values, got " + shape_to_string(theta.shape));
  if (size[0] != theta.shape[0])
    return ctx.error("size[0] = " + std::to_string(size[0]) + " differs from theta's batch " + std::to_string(theta.shape[0]));
  for (int64_t d : size)
    if (d < 0 || d > (int64_t{1} << 40)) return ctx.error("size " + shape_to_string(size) + " has a bad value");
  const int64_t align = ctx.node().attr_i("align_corners", 0);
  if (align != 0 && align != 1) return ctx.error("align_corners must be 0 or 1, got " + std::to_string(align));
  Shape out = {size[0]};
  out.insert(out.end(), size.begin() + 2, size.end());
  out.push_back(r);
  ctx.output(0) = {theta.dtype, out, nullptr};
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_AffineGrid = {"AffineGrid", 2, 2, 1, 1, infer};

}  // namespace tessera
