// DepthToSpace (ONNX opset 1, 11, 13) and SpaceToDepth (opset 1, 13), on 4-D NCHW tensors
// of any dtype. `blocksize` b (required, >= 1).
//   DepthToSpace: [N, C, H, W] -> [N, C / b^2, H * b, W * b]; C must be a multiple of b^2.
//     mode (opset 11+) "DCR" (default): depth is read as [b, b, C / b^2];
//     "CRD": as [C / b^2, b, b].
//   SpaceToDepth: [N, C, H, W] -> [N, C * b^2, H / b, W / b]; H and W multiples of b; depth
//     is written as [b, b, C] (the inverse of DCR).
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {
Result<int64_t> blocksize_of(InferContext& ctx) {
  const Attribute* a = ctx.node().find_attr("blocksize");
  if (!a || a->type != AttrType::kInt) return ctx.error("attribute 'blocksize' (int) is required");
  if (a->i < 1 || a->i > (int64_t{1} << 20)) return ctx.error("blocksize " + std::to_string(a->i) + " must be in [1, 2^20]");
  return a->i;
}

Status check_input(InferContext& ctx) {
  if (ctx.input(0).shape.size() != 4) return ctx.error("input must be 4-D NCHW, got " + shape_to_string(ctx.input(0).shape));
  if (dtype_size(ctx.input(0).dtype) == 0) return ctx.unsupported(std::string("dtype ") + dtype_name(ctx.input(0).dtype) + " is not supported");
  return Status::ok();
}

Status infer_d2s(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(check_input(ctx));
  TSR_ASSIGN_OR_RETURN(int64_t b, blocksize_of(ctx));
  const std::string mode = ctx.node().attr_s("mode", "DCR");
  if (mode != "DCR" && mode != "CRD") return ctx.error("attribute mode is '" + mode + "'; expected DCR or CRD");
  const Shape& x = ctx.input(0).shape;
  if (x[1] % (b * b) != 0)
    return ctx.error("channels " + std::to_string(x[1]) + " are not a multiple of blocksize^2 = " + std::to_string(b * b));
  Shape out = {x[0], x[1] / (b * b), x[2] * b, x[3] * b};
  TSR_RETURN_IF_ERROR(shape_numel(out).status());
  ctx.output(0) = {ctx.input(0).dtype, out, nullptr};
  return Status::ok();
}

Status infer_s2d(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(check_input(ctx));
  TSR_ASSIGN_OR_RETURN(int64_t b, blocksize_of(ctx));
  const Shape& x = ctx.input(0).shape;
  if (x[2] % b != 0 || x[3] % b != 0)
    return ctx.error("H and W of " + shape_to_string(x) + " are not multiples of blocksize " + std::to_string(b));
  Shape out = {x[0], x[1] * b * b, x[2] / b, x[3] / b};
  TSR_RETURN_IF_ERROR(shape_numel(out).status());
  ctx.output(0) = {ctx.input(0).dtype, out, nullptr};
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_DepthToSpace = {"DepthToSpace", 1, 1, 1, 1, infer_d2s};
const OpSchema kSchema_SpaceToDepth = {"SpaceToDepth", 1, 1, 1, 1, infer_s2d};

}  // namespace tessera
