// LayerNormalization (ONNX opset 17; followed for opsets 17..21): normalizes X over the
// dims [axis, rank) (axis default -1):
//   Mean = mean(X), InvStdDev = 1 / sqrt(var(X) + epsilon)      (population variance)
//   Y = (X - Mean) * InvStdDev * Scale + B
// Scale and the optional B broadcast to the normalized shape X.shape[axis:] from the right
// (their shape, leading 1s dropped, must be a suffix of the normalized shape; other
// broadcasts are unimplemented). The optional outputs Mean and InvStdDev have shape
// X.shape[:axis] + [1] * (rank - axis) and dtype float (stash_type 1; other stash types
// are unimplemented). float only.
#include <algorithm>

#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {

Status check_param(InferContext& ctx, size_t i, const char* name, const Shape& norm) {
  const ValueInfo& p = ctx.input(i);
  if (p.dtype != DType::kFloat32) return ctx.unsupported(std::string(name) + " must be float, got " + dtype_name(p.dtype));
  Shape s = p.shape;
  while (!s.empty() && s.front() == 1) s.erase(s.begin());
  if (p.shape.size() > norm.size() || s.size() > norm.size() || !std::equal(s.begin(), s.end(), norm.end() - s.size()))
    return ctx.unsupported(std::string(name) + " " + shape_to_string(p.shape) +
                           " must broadcast to the normalized shape " + shape_to_string(norm) +
                           " as a suffix (other broadcasts are not supported)");
  return Status::ok();
}

Status infer(InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  if (x.dtype != DType::kFloat32) return ctx.unsupported(std::string("dtype ") + dtype_name(x.dtype) + " is not supported (float)");
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  if (rank < 1) return ctx.error("input X must have rank >= 1");
  TSR_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.node().attr_i("axis", -1), rank, ctx.node()));
  if (ctx.node().attr_i("stash_type", 1) != 1) return ctx.unsupported("only stash_type = 1 (float) is supported");
  const Shape norm(x.shape.begin() + axis, x.shape.end());
  TSR_RETURN_IF_ERROR(check_param(ctx, 1, "Scale", norm));
  if (ctx.has_input(2)) TSR_RETURN_IF_ERROR(check_param(ctx, 2, "B", norm));
  ctx.output(0).dtype = x.dtype;
  ctx.output(0).shape = x.shape;
  Shape stat(x.shape.begin(), x.shape.begin() + axis);
  stat.resize(static_cast<size_t>(rank), 1);
  for (size_t i = 1; i < ctx.num_outputs(); ++i) {
    ctx.output(i).dtype = DType::kFloat32;
    ctx.output(i).shape = stat;
  }
  return Status::ok();
}

}  // namespace

const OpSchema kSchema_LayerNormalization = {"LayerNormalization", 2, 3, 1, 3, infer};

}  // namespace tessera
