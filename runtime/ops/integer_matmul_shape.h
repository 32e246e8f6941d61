// Shape rules shared by MatMulInteger (ONNX opset 10) and QLinearMatMul (opsets 10, 21):
// numpy.matmul shapes (as MatMul), and the quantization parameters: a zero point or scale
// of A is per-tensor (1 element) or per-row (M elements); of B per-tensor or per-column
// (N elements).
#pragma once

#include <string>

#include "runtime/ops/op_schema.h"

namespace tessera {

/// Output shape of numpy.matmul(A, B): 1-D operands promoted and the added dim removed,
/// batch dims broadcast. Errors name the node.
inline Result<Shape> integer_matmul_shape(InferContext& ctx, const Shape& a, const Shape& b) {
  if (a.empty() || b.empty())
    return ctx.error("operands must have rank >= 1, got " + shape_to_string(a) + " and " + shape_to_string(b));
  Shape as = a, bs = b;
  if (as.size() == 1) as.insert(as.begin(), 1);
  if (bs.size() == 1) bs.push_back(1);
  if (as.back() != bs[bs.size() - 2])
    return ctx.error("inner dims differ: A " + shape_to_string(a) + ", B " + shape_to_string(b));
  Result<Shape> batch = broadcast_shapes(Shape(as.begin(), as.end() - 2), Shape(bs.begin(), bs.end() - 2));
  if (!batch.is_ok()) return ctx.error("batch dims: " + batch.status().message());
  Shape y = batch.value();
  if (a.size() > 1) y.push_back(as[as.size() - 2]);
  if (b.size() > 1) y.push_back(bs.back());
  return y;
}

/// Checks that input `i` (a zero point or scale named `name`, when present) has 1 element
/// or `per` elements (M for A's, N for B's) in a vector-like shape.
inline Status check_matmul_param(InferContext& ctx, size_t i, const char* name, int64_t per) {
  if (!ctx.has_input(i)) return Status::ok();
  const Shape& s = ctx.input(i).shape;
  int64_t n = 1, non1 = 0;
  for (int64_t d : s) {
    n *= d;
    non1 += d != 1;
  }
  if (n == 1 || (n == per && non1 <= 1)) return Status::ok();
  return ctx.unsupported(std::string(name) + " of shape " + shape_to_string(s) + " is not supported (1 or " +
                         std::to_string(per) + " elements)");
}

}  // namespace tessera
