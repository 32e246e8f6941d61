// GatherND (ONNX opset 11, 12, 13): data rank r >= 1, indices (int64) rank q >= 1 whose
// last dim k (1..r - batch_dims) indexes data's dims batch_dims..batch_dims+k-1.
// batch_dims (opset 12+, default 0) leading dims are shared by data and indices.
// Output shape: indices.shape[:-1] + data.shape[batch_dims + k:]. Negative indices count
// from the back; out-of-range ones are a run-time error.
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {
Status infer(InferContext& ctx) {
  const Shape& data = ctx.input(0).shape;
  const Shape& idx = ctx.input(1).shape;
  const int64_t r = static_cast<int64_t>(data.size()), q = static_cast<int64_t>(idx.size());
  if (dtype_size(ctx.input(0).dtype) == 0) return ctx.unsupported(std::string("dtype ") + dtype_name(ctx.input(0).dtype) + " is not supported");
  if (ctx.input(1).dtype != DType::kInt64) return ctx.error(std::string("indices have dtype ") + dtype_name(ctx.input(1).dtype) + "; expected int64");
  if (r < 1 || q < 1) return ctx.error("data and indices must have rank >= 1");
  const int64_t b = ctx.node().attr_i("batch_dims", 0);
  if (b < 0 || b >= std::min(r, q)) return ctx.error("batch_dims " + std::to_string(b) + " must be in [0, min(rank(data), rank(indices)))");
  for (int64_t i = 0; i < b; ++i)
    if (data[i] != idx[i]) return ctx.error("batch dim " + std::to_string(i) + " differs: data " + shape_to_string(data) + ", indices " + shape_to_string(idx));
  const int64_t k = idx[q - 1];
  if (k < 1 || k > r - b) return ctx.error("indices last dim " + std::to_string(k) + " must be in [1, " + std::to_string(r - b) + "]");
  Shape out(idx.begin(), idx.end() - 1);
  out.insert(out.end(), data.begin() + b + k, data.end());
  ctx.output(0) = {ctx.input(0).dtype, out, nullptr};
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_GatherND = {"GatherND", 2, 2, 1, 1, infer};

}  // namespace tessera
