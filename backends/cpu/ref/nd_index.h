// Small helpers the reference kernels use to walk n-d index spaces without allocating.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "runtime/ops/spatial_attrs.h"

namespace tessera::ref {

/// A fixed-capacity multi-index over at most kMaxSpatialDims dims (no heap use in run()).
using SpatialIndex = std::array<int64_t, kMaxSpatialDims>;

/// Advances `idx` over the box `dims[0..n)` in row-major order (last dim fastest).
/// Returns false once it wraps around past the last index. With n == 0 the box has one
/// point, so a do { } while (next_index(...)) loop runs exactly once.
inline bool next_index(SpatialIndex& idx, const std::vector<int64_t>& dims, int n) {
  for (int i = n - 1; i >= 0; --i) {
    if (++idx[i] < dims[i]) return true;
    idx[i] = 0;
  }
  return false;
}

/// Product of `dims` (sizes are checked by the schema, so no overflow here).
inline int64_t product(const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= d;
  return p;
}

}  // namespace tessera::ref
