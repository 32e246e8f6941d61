// Det (ONNX opset 11; followed for opsets 11..22): the determinant of each square matrix of
// X [*, M, M], giving Y [*] (a scalar for a 2-D X). T float, double or float16 (computed in
// double, rounded to T). M = 0 gives 1 (the empty product), as numpy.linalg.det does.
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {
Status infer(InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  if (x.dtype != DType::kFloat32 && x.dtype != DType::kFloat64 && x.dtype != DType::kFloat16)
    return ctx.unsupported(std::string("X dtype ") + dtype_name(x.dtype) + " is not supported (float, double, float16)");
  const size_t r = x.shape.size();
  if (r < 2) return ctx.error("X must have rank >= 2 ([*, M, M]), got " + shape_to_string(x.shape));
  if (x.shape[r - 1] != x.shape[r - 2])
    return ctx.error("the last two dims of X " + shape_to_string(x.shape) + " must be equal (square matrices)");
  if (x.shape[r - 1] > (int64_t{1} << 15))
    return ctx.unsupported("matrices larger than 32768 x 32768 are not supported, X is " + shape_to_string(x.shape));
  ctx.output(0).dtype = x.dtype;
  ctx.output(0).shape = Shape(x.shape.begin(), x.shape.end() - 2);
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_Det = {"Det", 1, 1, 1, 1, infer};

}  // namespace tessera
