// ScatterND (ONNX opset 11, 13, 16, 18): output = data, then for each k-tuple t in indices
// (int64, rank q >= 1, last dim k in 1..rank(data)), the slice output[t, :] is set to (or,
// with `reduction` "add"/"mul" (16+) or "max"/"min" (18+), combined with) the matching
// slice of updates. updates shape must be indices.shape[:-1] + data.shape[k:]. Negative
// indices count from the back; out-of-range ones are a run-time error. With reduction
// "none" and repeated tuples the last update wins (the spec leaves it undefined).
#include "runtime/ops/dtype_rules.h"
#include "runtime/ops/op_schema.h"
#include "runtime/ops/scatter_reduction_attr.h"

namespace tessera {

namespace {
Status infer(InferContext& ctx) {
  const Shape& data = ctx.input(0).shape;
  const Shape& idx = ctx.input(1).shape;
  const int64_t r = static_cast<int64_t>(data.size()), q = static_cast<int64_t>(idx.size());
  if (dtype_size(ctx.input(0).dtype) == 0) return ctx.unsupported(std::string("dtype ") + dtype_name(ctx.input(0).dtype) + " is not supported");
  if (ctx.input(1).dtype != DType::kInt64) return ctx.error(std::string("indices have dtype ") + dtype_name(ctx.input(1).dtype) + "; expected int64");
  if (ctx.input(2).dtype != ctx.input(0).dtype) return ctx.error("updates dtype differs from data dtype");
  if (r < 1 || q < 1) return ctx.error("data and indices must have rank >= 1");
  const int64_t k = idx[q - 1];
  if (k < 1 || k > r) return ctx.error("indices last dim " + std::to_string(k) + " must be in [1, " + std::to_string(r) + "]");
  Shape want(idx.begin(), idx.end() - 1);
  want.insert(want.end(), data.begin() + k, data.end());
  if (ctx.input(2).shape != want)
    return ctx.error("updates shape " + shape_to_string(ctx.input(2).shape) + " must be " + shape_to_string(want));
  TSR_RETURN_IF_ERROR(check_scatter_reduction(ctx));
  ctx.output(0) = {ctx.input(0).dtype, data, nullptr};
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_ScatterND = {"ScatterND", 3, 3, 1, 1, infer};

}  // namespace tessera
