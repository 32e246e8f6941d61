// If (ONNX opset 1..21): runs then_branch or else_branch depending on the scalar bool
// input `cond`. The planner handles it: with a plan-time-constant `cond` it plans the taken
// branch in place; otherwise it plans both branches as sub-plans and the executor picks
// one per run. Both branches must give outputs of the same dtypes and shapes.
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {
Status infer(InferContext& ctx) {
  return internal_error(ctx.node().describe() + ": If is planned by the planner, not by inference");
}
}  // namespace

const OpSchema kSchema_If = {"If", 1, 1, 1, -1, infer, OpKind::kControlFlow};

}  // namespace tessera
