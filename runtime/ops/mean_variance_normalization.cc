// MeanVarianceNormalization (ONNX opset 9, 13): Y = (X - mean) / (sqrt(var) + 1e-9), mean
// and var (population variance, E[X^2] - E[X]^2 in the spec's function body) taken over
// `axes` (default [0, 2, 3]; negative axes count from the back; repeats are errors).
// float or double; output is X's dtype and shape.
#include "runtime/ops/dtype_rules.h"
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {
Status infer(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(check_input_dtype(ctx, 0, dtype_is_float, "float or double"));
  const int64_t rank = static_cast<int64_t>(ctx.input(0).shape.size());
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t a : ctx.node().attr_ints("axes", {0, 2, 3})) {
    TSR_ASSIGN_OR_RETURN(int64_t n, normalize_axis(a, rank, ctx.node()));
    if (seen[n]) return ctx.error("axis " + std::to_string(a) + " is repeated");
    seen[n] = true;
  }
  ctx.output(0) = {ctx.input(0).dtype, ctx.input(0).shape, nullptr};
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_MeanVarianceNormalization = {"MeanVarianceNormalization", 1, 1, 1, 1, infer};

}  // namespace tessera
