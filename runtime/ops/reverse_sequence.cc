// ReverseSequence (ONNX opset 10): for each batch b, reverses the first sequence_lens[b]
// elements along time_axis and copies the rest. input rank >= 2, any dtype; time_axis
// (default 0) and batch_axis (default 1) are 0 or 1 and differ; sequence_lens is int64 of
// shape [batch]; each length must be in [0, time] (a run-time error from the kernel).
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {
Status infer(InferContext& ctx) {
  const Shape& x = ctx.input(0).shape;
  if (x.size() < 2) return ctx.error("input must have rank >= 2, got " + shape_to_string(x));
  if (dtype_size(ctx.input(0).dtype) == 0) return ctx.unsupported(std::string("dtype ") + dtype_name(ctx.input(0).dtype) + " is not supported");
  const int64_t t = ctx.node().attr_i("time_axis", 0), b = ctx.node().attr_i("batch_axis", 1);
  if ((t != 0 && t != 1) || (b != 0 && b != 1) || t == b)
    return ctx.error("time_axis " + std::to_string(t) + " and batch_axis " + std::to_string(b) + " must be 0 and 1 in some order");
  if (ctx.input(1).dtype != DType::kInt64) return ctx.error("sequence_lens must be int64");
  if (ctx.input(1).shape != Shape{x[b]})
    return ctx.error("sequence_lens shape " + shape_to_string(ctx.input(1).shape) + " must be [" + std::to_string(x[b]) + "]");
  ctx.output(0) = {ctx.input(0).dtype, x, nullptr};
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_ReverseSequence = {"ReverseSequence", 2, 2, 1, 1, infer};

}  // namespace tessera
