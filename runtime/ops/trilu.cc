// Trilu (ONNX opset 14): keeps the upper (upper=1, default) or lower (upper=0) triangle of
// each of the last two dims' matrices and zeroes the rest. Optional input k (int64 scalar,
// default 0; read when the kernel runs) shifts the diagonal: upper keeps j - i >= k, lower
// keeps j - i <= k. Input rank >= 2, any dtype; output is the input's dtype and shape.
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {
Status infer(InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  if (x.shape.size() < 2) return ctx.error("input must have rank >= 2, got " + shape_to_string(x.shape));
  if (dtype_size(x.dtype) == 0) return ctx.unsupported(std::string("dtype ") + dtype_name(x.dtype) + " is not supported");
  if (ctx.has_input(1)) {
    if (ctx.input(1).dtype != DType::kInt64)
      return ctx.error(std::string("k has dtype ") + dtype_name(ctx.input(1).dtype) + "; expected int64");
    int64_t n = 1;
    for (int64_t d : ctx.input(1).shape) n *= d;
    if (n != 1) return ctx.error("k must be a scalar, got shape " + shape_to_string(ctx.input(1).shape));
  }
  const int64_t upper = ctx.node().attr_i("upper", 1);
  if (upper != 0 && upper != 1) return ctx.error("attribute upper is " + std::to_string(upper) + "; expected 0 or 1");
  ctx.output(0) = {x.dtype, x.shape, nullptr};
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_Trilu = {"Trilu", 1, 2, 1, 1, infer};

}  // namespace tessera
