// The Resize reference kernel, shared by Resize and Upsample (defined in resize.cc).
#pragma once

#include "backends/backend.h"
#include "runtime/ops/resize_attrs.h"

namespace tessera::ref {

/// A kernel computing Y from X as `p` describes (shapes p.in -> p.out, float).
Result<std::unique_ptr<Kernel>> make_resize_kernel(const ResizeParams& p);

}  // namespace tessera::ref
