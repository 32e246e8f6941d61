// OneHot (ONNX opset 9, 11): output has indices' shape with a new dim of size `depth`
// inserted at `axis` (default -1 = last; in [-r-1, r] for indices of rank r). Element
// (.., d, ..) is values[1] (on) where indices[..] == d and values[0] (off) elsewhere.
// depth: numeric scalar or 1-element tensor, known at plan time, converted to int64, > 0.
// values: 2 elements [off, on]; the output has values' dtype. indices numeric, converted to
// int64 (truncating); negative indices count from depth (opset 11); out-of-range ones give
// a row of `off`.
#include <cmath>

#include "runtime/ops/dtype_rules.h"
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {
Status infer(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(check_input_dtype(ctx, 0, dtype_is_numeric, "a numeric dtype"));
  TSR_RETURN_IF_ERROR(check_input_dtype(ctx, 1, dtype_is_numeric, "a numeric dtype"));
  TSR_RETURN_IF_ERROR(check_input_dtype(ctx, 2, dtype_is_computable, "a numeric dtype or bool"));
  const Shape& ind = ctx.input(0).shape;
  const int64_t r = static_cast<int64_t>(ind.size());
  TSR_ASSIGN_OR_RETURN(std::vector<float> dv, ctx.const_floats(1));
  if (dv.size() != 1) return ctx.error("depth must hold one value, got " + std::to_string(dv.size()));
  if (!(std::isfinite(dv[0]) && dv[0] >= 1 && dv[0] <= 1e12f))
    return ctx.error("depth " + std::to_string(dv[0]) + " must be a positive number");
  const int64_t depth = static_cast<int64_t>(dv[0]);
  int64_t n = 1;
  for (int64_t d : ctx.input(2).shape) n *= d;
  if (ctx.input(2).shape.size() != 1 || n != 2)
    return ctx.error("values must be a 1-D tensor of 2 elements [off, on], got " + shape_to_string(ctx.input(2).shape));
  TSR_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.node().attr_i("axis", -1), r + 1, ctx.node()));
  Shape out = ind;
  out.insert(out.begin() + axis, depth);
  TSR_RETURN_IF_ERROR(shape_numel(out).status());
  ctx.output(0) = {ctx.input(2).dtype, out, nullptr};
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_OneHot = {"OneHot", 3, 3, 1, 1, infer};

}  // namespace tessera
