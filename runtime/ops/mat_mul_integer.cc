// MatMulInteger (ONNX opset 10; followed for opsets 10..21):
//   Y = (A - a_zero_point) x (B - b_zero_point) as numpy.matmul, in int32,
// A and B int8 or uint8; a_zero_point (A's dtype) per-tensor or per-row of A [M];
// b_zero_point (B's dtype) per-tensor or per-column of B [N]; both optional (0).
#include "runtime/ops/integer_matmul_shape.h"
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {

bool is_8bit(DType d) { return d == DType::kInt8 || d == DType::kUInt8; }

Status infer(InferContext& ctx) {
  const ValueInfo& a = ctx.input(0);
  const ValueInfo& b = ctx.input(1);
  if (!is_8bit(a.dtype) || !is_8bit(b.dtype))
    return ctx.unsupported(std::string("dtypes ") + dtype_name(a.dtype) + " x " + dtype_name(b.dtype) + " are not supported (int8, uint8)");
  for (size_t i = 2; i < 4; ++i)
    if (ctx.has_input(i) && ctx.input(i).dtype != ctx.input(i - 2).dtype)
      return ctx.error("zero point " + std::to_string(i) + " must have the dtype of its operand");
  TSR_ASSIGN_OR_RETURN(Shape y, integer_matmul_shape(ctx, a.shape, b.shape));
  const int64_t m = a.shape.size() > 1 ? a.shape[a.shape.size() - 2] : 1, n = b.shape.size() > 1 ? b.shape.back() : 1;
  TSR_RETURN_IF_ERROR(check_matmul_param(ctx, 2, "a_zero_point", m));
  TSR_RETURN_IF_ERROR(check_matmul_param(ctx, 3, "b_zero_point", n));
  ctx.output(0).dtype = DType::kInt32;
  ctx.output(0).shape = y;
  return Status::ok();
}

}  // namespace

const OpSchema kSchema_MatMulInteger = {"MatMulInteger", 2, 4, 1, 1, infer};

}  // namespace tessera
