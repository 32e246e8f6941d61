// QLinearMatMul (ONNX opset 10, 21; followed for opsets 10..21):
//   Y = saturate(rint(((A - a_zp) x (B - b_zp)) * a_scale * b_scale / y_scale) + y_zp)
// with numpy.matmul shapes; A, B, Y int8 or uint8 (Y takes y_zero_point's dtype); scales
// float (or float16 from opset 21); A's scale/zero point per-tensor or per-row [M], B's
// per-tensor or per-column [N], Y's per-tensor.
#include "runtime/ops/integer_matmul_shape.h"
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {

bool is_8bit(DType d) { return d == DType::kInt8 || d == DType::kUInt8; }

Status infer(InferContext& ctx) {
  const ValueInfo& a = ctx.input(0);
  const ValueInfo& b = ctx.input(3);
  const DType yt = ctx.input(7).dtype;
  if (!is_8bit(a.dtype) || !is_8bit(b.dtype) || !is_8bit(yt))
    return ctx.unsupported(std::string("dtypes ") + dtype_name(a.dtype) + ", " + dtype_name(b.dtype) + " -> " + dtype_name(yt) +
                           " are not supported (int8, uint8)");
  if (ctx.input(2).dtype != a.dtype || ctx.input(5).dtype != b.dtype)
    return ctx.error("a_zero_point and b_zero_point must have the dtypes of a and b");
  for (size_t i : {1, 4, 6})
    if (ctx.input(i).dtype != DType::kFloat32 && ctx.input(i).dtype != DType::kFloat16)
      return ctx.error("scale input " + std::to_string(i) + " must be float or float16, got " + dtype_name(ctx.input(i).dtype));
  TSR_ASSIGN_OR_RETURN(Shape y, integer_matmul_shape(ctx, a.shape, b.shape));
  const int64_t m = a.shape.size() > 1 ? a.shape[a.shape.size() - 2] : 1, n = b.shape.size() > 1 ? b.shape.back() : 1;
  TSR_RETURN_IF_ERROR(check_matmul_param(ctx, 1, "a_scale", m));
  TSR_RETURN_IF_ERROR(check_matmul_param(ctx, 2, "a_zero_point", m));
  TSR_RETURN_IF_ERROR(check_matmul_param(ctx, 4, "b_scale", n));
  TSR_RETURN_IF_ERROR(check_matmul_param(ctx, 5, "b_zero_point", n));
  TSR_RETURN_IF_ERROR(check_matmul_param(ctx, 6, "y_scale", 1));
  TSR_RETURN_IF_ERROR(check_matmul_param(ctx, 7, "y_zero_point", 1));
  ctx.output(0).dtype = yt;
  ctx.output(0).shape = y;
  return Status::ok();
}

}  // namespace

const OpSchema kSchema_QLinearMatMul = {"QLinearMatMul", 8, 8, 1, 1, infer};

}  // namespace tessera
