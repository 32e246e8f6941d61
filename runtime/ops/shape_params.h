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

/// The input coordinate that Pad reads for the unfolded coordinate i (output coordinate
/// minus begin) along an axis of n >= 1 elements: i itself inside [0, n); outside it, by
/// `mode`: edge clamps, reflect folds with period 2(n - 1) (numpy "reflect"; n == 1 gives
/// 0), wrap takes i mod n, and constant gives -1 (the pad value).
inline int64_t pad_source_index(int64_t i, int64_t n, PadParams::Mode mode) {
  if (i >= 0 && i < n) return i;
  switch (mode) {
    case PadParams::Mode::kEdge: return i < 0 ? 0 : n - 1;
    case PadParams::Mode::kWrap: return ((i % n) + n) % n;
    case PadParams::Mode::kReflect: {
      if (n == 1) return 0;
      const int64_t period = 2 * (n - 1);
      const int64_t m = ((i % period) + period) % period;
      return m < n ? m : period - m;
    }
    default: return -1;  // constant
  }
}

/// Reduce* (ReduceSum opset 1, 11, 13; others 1, 11, 13, 18): which axes are reduced and
/// the output shape. `noop` (noop_with_empty_axes with no axes) means the output is the input.
struct ReduceParams {
  std::vector<bool> reduced;   // per input axis
  bool noop = false;
  Shape out;
};
Result<ReduceParams> resolve_reduce(const Node& node, const Shape& data, const ConstIntInputs& in);

}  // namespace tessera
