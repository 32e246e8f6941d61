// Loop (ONNX opset 1, 11, 13, 16..21; tensor values only, not sequences or optionals):
// inputs M (int64 trip count, optional), cond (bool, optional) and N loop-carried values;
// the graph attribute `body` maps (iteration number int64, cond bool, N values) to (cond, N
// values, K scan outputs). Outputs: the N final values, then the K scan outputs stacked
// along a new axis 0 (one slice per iteration). Without a cond input the body's cond output
// is ignored; with neither M nor cond the loop would never end and is rejected.
//
// The planner handles it (runtime/plan/planner.cc): when M, cond and the initial values are
// all known at plan time it runs the loop then (up to 4096 iterations), planning the body
// again each iteration, so loop-carried values may change shape; otherwise it plans the body
// once as a sub-plan, which the executor runs per iteration. That needs loop-carried values
// that keep their shape and, with scan outputs, a trip count known at plan time (M constant
// and cond either absent, constant false, or constant true with a body cond output that
// only passes cond through). A body input declared without a type (ONNX's expansion of
// Range) takes the dtype and shape of the Loop input it receives.
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {
Status infer(InferContext& ctx) {
  return internal_error(ctx.node().describe() + ": Loop is planned by the planner, not by inference");
}
}  // namespace

const OpSchema kSchema_Loop = {"Loop", 2, -1, 1, -1, infer, OpKind::kControlFlow};

}  // namespace tessera
