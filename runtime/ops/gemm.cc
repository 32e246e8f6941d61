// Gemm (ONNX opset 7, 9, 11, 13; followed for opsets 7..21):
//   Y = alpha * A' * B' + beta * C,  A' = transA ? A^T : A  [M, K],  B' = transB ? B^T : B  [K, N]
// C (optional; Tessera also accepts it omitted before opset 11) broadcasts
// unidirectionally to [M, N]: its shape is [], [N], [1, N], [M, 1], [M, N], ... float only.
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {

Status infer(InferContext& ctx) {
  const Node& n = ctx.node();
  const ValueInfo& a = ctx.input(0);
  const ValueInfo& b = ctx.input(1);
  if (a.dtype != DType::kFloat32 || b.dtype != DType::kFloat32)
    return ctx.unsupported(std::string("only float is supported, got A ") + dtype_name(a.dtype) + ", B " + dtype_name(b.dtype));
  if (a.shape.size() != 2 || b.shape.size() != 2)
    return ctx.error("A " + shape_to_string(a.shape) + " and B " + shape_to_string(b.shape) + " must be 2-D");
  const bool ta = n.attr_i("transA", 0) != 0, tb = n.attr_i("transB", 0) != 0;
  const int64_t m = ta ? a.shape[1] : a.shape[0], k = ta ? a.shape[0] : a.shape[1];
  const int64_t k2 = tb ? b.shape[1] : b.shape[0], nn = tb ? b.shape[0] : b.shape[1];
  if (k != k2)
    return ctx.error("inner dims differ: A' has K = " + std::to_string(k) + ", B' has K = " + std::to_string(k2) +
                     " (transA " + std::to_string(ta) + ", transB " + std::to_string(tb) + ")");
  if (ctx.has_input(2)) {
    const ValueInfo& c = ctx.input(2);
    if (c.dtype != DType::kFloat32) return ctx.error(std::string("C must be float, got ") + dtype_name(c.dtype));
    Result<Shape> bc = broadcast_shapes(c.shape, {m, nn});
    if (c.shape.size() > 2 || !bc.is_ok() || bc.value() != Shape{m, nn})
      return ctx.error("C " + shape_to_string(c.shape) + " does not broadcast to [" + std::to_string(m) + "," + std::to_string(nn) + "]");
  }
  ctx.output(0).dtype = DType::kFloat32;
  ctx.output(0).shape = {m, nn};
  return Status::ok();
}

}  // namespace

const OpSchema kSchema_Gemm = {"Gemm", 2, 3, 1, 1, infer};

}  // namespace tessera
