// Shared by the DFT schema and its reference kernel, so the two cannot disagree: the
// resolved axis, transform length and output bin count of a DFT node (ONNX DFT-17/20).
#pragma once

#include <optional>
#include <string>

#include "tessera/graph.h"
#include "tessera/status.h"

namespace tessera {

struct DftParams {
  int64_t axis = 1;      // the signal axis, in [0, rank - 2]
  int64_t length = 0;    // L, the transform length (the signal is zero-padded or cut to it)
  int64_t out_bins = 0;  // L, or floor(L / 2) + 1 when onesided
  bool inverse = false;
  bool complex_in = false;  // the last dim is 2 (real, imaginary), not 1
};

/// Resolves a DFT node for input shape `x` ([..., 1 or 2]) given the plan-time values of the
/// dft_length and axis inputs (nullopt: omitted; opset 17 takes `axis` from the attribute).
/// Errors (invalid_argument naming the node): rank < 2, a last dim other than 1 or 2, an axis
/// out of range or on the last dim, a length < 1, onesided with a complex input or inverse.
inline Result<DftParams> dft_params(const Node& n, const Shape& x, std::optional<int64_t> length,
                                    std::optional<int64_t> axis) {
  const std::string who = n.describe() + ": ";
  const int64_t rank = static_cast<int64_t>(x.size());
  if (rank < 2) return invalid_argument(who + "input must have rank >= 2 ([batch, ..., 1 or 2]), got " + shape_to_string(x));
  if (x.back() != 1 && x.back() != 2)
    return invalid_argument(who + "the last dim of the input must be 1 (real) or 2 (complex), got " + shape_to_string(x));
  DftParams p;
  p.complex_in = x.back() == 2;
  int64_t a = n.opset >= 20 ? axis.value_or(-2) : n.attr_i("axis", 1);
  if (a < -rank || a > rank - 2)
    return invalid_argument(who + "axis " + std::to_string(a) + " is out of range [" + std::to_string(-rank) + ", " +
                            std::to_string(rank - 2) + "] for input " + shape_to_string(x));
  if (a < 0) a += rank;
  if (a == rank - 1) return invalid_argument(who + "axis " + std::to_string(a) + " is the real/imaginary axis");
  p.axis = a;
  p.length = length.value_or(x[static_cast<size_t>(a)]);
  if (p.length < 1 || p.length > (int64_t{1} << 31))
    return invalid_argument(who + "dft_length " + std::to_string(p.length) + " is out of range (>= 1)");
  p.inverse = n.attr_i("inverse", 0) != 0;
  const bool onesided = n.attr_i("onesided", 0) != 0;
  if (onesided && p.complex_in) return invalid_argument(who + "onesided = 1 needs a real input (last dim 1)");
  p.out_bins = onesided ? p.length / 2 + 1 : p.length;
  return p;
}

}  // namespace tessera
