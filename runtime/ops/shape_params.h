// Concrete parameters of the section-B ops whose output shape depends on attributes and
// plan-time integer inputs (Slice, Pad, the Reduce* family). The schema computes them to
// infer the output shape; the reference kernel factory computes them again from the same
// inputs, so both always agree. Each resolve_* function is defined in its op's schema file.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "runtime/ops/op_schema.h"

namespace tessera {

/// Access to a node's plan-time integer inputs: from an InferContext (const_ints) or from a
/// kernel factory's CompileContext (the inputs' `constant` tensors).
struct ConstIntInputs {
  std::function<bool(size_t)> has;                                  // input present
  std::function<Result<std::vector<int64_t>>(size_t)> ints;         // its value, or an error
};

/// ConstIntInputs over an InferContext.
inline ConstIntInputs const_inputs_of(const InferContext& ctx) {
  return {[&ctx](size_t i) { return ctx.has_input(i); }, [&ctx](size_t i) { return ctx.const_ints(i); }};
}

/// Slice (opset 1, 10, 11, 13): element `o` of the output (coords c) reads input coords
/// start[a] + c[a] * step[a] for every axis a (unsliced axes: start 0, step 1).
struct SliceParams {
  std::vector<int64_t> start;
  std::vector<int64_t> step;
  Shape out;
};
Result<SliceParams> resolve_slice(const Node& node, const Shape& data, const ConstIntInputs& in);

/// Pad (opset 2, 11, 13, 18, 19): output coord c[a] maps to input coord c[a] - begin[a];
/// coords outside the input take `value` (constant), the nearest edge (edge), the mirror
/// image without repeating the edge (reflect) or the periodic image (wrap).
struct PadParams {
  enum class Mode { kConstant, kReflect, kEdge, kWrap } mode = Mode::kConstant;
  std::vector<int64_t> begin;
  Shape out;
  float attr_value = 0;   // opset < 11 `value` attribute; later opsets read input 2
};
Result<PadParams> resolve_pad(const Node& node, const Shape& data, const ConstIntInputs& in);

/// Reduce* (ReduceSum opset 1, 11, 13; others 1, 11, 13, 18): which axes are reduced and
/// the output shape. `noop` (noop_with_empty_axes with no axes) means the output is the input.
struct ReduceParams {
  std::vector<bool> reduced;   // per input axis
  bool noop = false;
  Shape out;
};
Result<ReduceParams> resolve_reduce(const Node& node, const Shape& data, const ConstIntInputs& in);

}  // namespace tessera
