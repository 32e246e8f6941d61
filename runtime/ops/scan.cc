// Scan (ONNX opset 8, 9, 11, 16..21): inputs N state values then M scan inputs
// (num_scan_inputs = M); the graph attribute `body` maps (N states, M slices) to (N states,
// K scan outputs). Iteration t gives the body slice t of every scan input along its
// scan_input_axes entry (slice L-1-t for a scan_input_directions entry of 1); the K scan
// outputs are stacked along a new axis at their scan_output_axes entry (reversed for a
// scan_output_directions entry of 1). Outputs: the N final states, then the K scan outputs.
//
// Scan-8 has a leading batch axis on every input and output, scans axis 1 (`directions`
// attribute), and a first input sequence_lens: supported only when it is omitted or a
// constant giving every batch element the full length.
//
// The planner plans the body once as a sub-plan (runtime/plan/planner.cc) and the executor
// runs it per iteration; states must keep their shape.
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {
Status infer(InferContext& ctx) {
  return internal_error(ctx.node().describe() + ": Scan is planned by the planner, not by inference");
}
}  // namespace

const OpSchema kSchema_Scan = {"Scan", 1, -1, 1, -1, infer, OpKind::kControlFlow};

}  // namespace tessera
