// The `reduction` attribute of ScatterElements and ScatterND (ONNX opset 16: none, add, mul;
// opset 18: also max, min), checked once for both schemas.
#pragma once

#include <string>

#include "runtime/ops/dtype_rules.h"
#include "runtime/ops/op_schema.h"

namespace tessera {

/// Errors (invalid_argument naming the node): an unknown reduction, or one the node's opset
/// does not define; a reduction over a dtype the kernels cannot compute on.
inline Status check_scatter_reduction(InferContext& ctx) {
  const std::string red = ctx.node().attr_s("reduction", "none");
  const int opset = ctx.node().opset;
  if (red == "none") return Status::ok();
  if (red != "add" && red != "mul" && red != "max" && red != "min")
    return ctx.error("attribute reduction is '" + red + "'; expected none, add, mul, max or min");
  if (opset < 16 || ((red == "max" || red == "min") && opset < 18))
    return ctx.error("reduction '" + red + "' is not defined in opset " + std::to_string(opset));
  return check_input_dtype(ctx, 0, dtype_is_computable, "a numeric dtype or bool");
}

}  // namespace tessera
