// The Resize reference kernel, shared by Resize and Upsample (defined in resize.cc).
#pragma once

#include <cstdint>
#include <vector>

#include "backends/backend.h"
#include "runtime/ops/resize_attrs.h"

namespace tessera::ref {

/// The taps of one dim of a Resize: output index o reads input indices idx[o * taps + j]
/// with weights w[o * taps + j], j < taps (1 for nearest, 2 for linear, 4 for cubic, more
/// with antialias; indices already clamped to the input); outside[o] is set when the
/// coordinate falls outside the input (tf_crop_and_resize: Y = extrapolation_value).
struct ResizeAxisTaps {
  int taps = 1;
  std::vector<int64_t> idx;
  std::vector<float> w;
  std::vector<uint8_t> outside;
};

/// The taps of dim d of `p` (the formulas are in resize.cc's header comment). The
/// reference kernel and the x86 Resize (backends/cpu/x86/resize_x86.cc) both use them.
ResizeAxisTaps resize_axis_taps(const ResizeParams& p, size_t d);

/// A kernel computing Y from X as `p` describes (shapes p.in -> p.out, float).
Result<std::unique_ptr<Kernel>> make_resize_kernel(const ResizeParams& p);

}  // namespace tessera::ref
