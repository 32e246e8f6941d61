// MatMul (ONNX opset 1, 9, 13; followed for opsets 7..21): numpy.matmul. A 1-D A is
// treated as [1, K] and a 1-D B as [K, 1], the added dim being removed from the result;
// the batch dims (all but the last two) broadcast numpy-style:
//   A [..., M, K] x B [..., K, N] -> Y [broadcast(...), M, N].
// float, double, int32, int64, uint32, uint64.
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {

Status infer(InferContext& ctx) {
  const ValueInfo& a = ctx.input(0);
  const ValueInfo& b = ctx.input(1);
  if (a.dtype != b.dtype)
    return ctx.error(std::string("A and B must have the same dtype, got ") + dtype_name(a.dtype) + " and " + dtype_name(b.dtype));
  switch (a.dtype) {
    case DType::kFloat32: case DType::kFloat64: case DType::kInt32: case DType::kInt64: case DType::kUInt32: case DType::kUInt64:
      break;
    default:
      return ctx.unsupported(std::string("dtype ") + dtype_name(a.dtype) + " is not supported");
  }
  if (a.shape.empty() || b.shape.empty())
    return ctx.error("MatMul operands must have rank >= 1, got " + shape_to_string(a.shape) + " and " + shape_to_string(b.shape));
  Shape as = a.shape, bs = b.shape;
  if (as.size() == 1) as.insert(as.begin(), 1);
  if (bs.size() == 1) bs.push_back(1);
  const int64_t k_a = as.back(), k_b = bs[bs.size() - 2];
  if (k_a != k_b)
    return ctx.error("inner dims differ: A " + shape_to_string(a.shape) + " has K = " + std::to_string(k_a) + ", B " +
                     shape_to_string(b.shape) + " has K = " + std::to_string(k_b));
  Result<Shape> batch = broadcast_shapes(Shape(as.begin(), as.end() - 2), Shape(bs.begin(), bs.end() - 2));
  if (!batch.is_ok()) return ctx.error("batch dims: " + batch.status().message());
  Shape y = batch.value();
  if (a.shape.size() > 1) y.push_back(as[as.size() - 2]);
  if (b.shape.size() > 1) y.push_back(bs.back());
  ctx.output(0).dtype = a.dtype;
  ctx.output(0).shape = y;
  return Status::ok();
}

}  // namespace

const OpSchema kSchema_MatMul = {"MatMul", 2, 2, 1, 1, infer};

}  // namespace tessera
