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

/// The tap at window position `pos` and kernel offset `k` of a sliding window (Conv, the
/// pools, ConvTranspose's scatter), in a space of size `extent` per dim:
///   p[d] = pos[d] * strides[d] - pads_begin[d] + k[d] * dilations[d].
/// Returns p's row-major linear index in `extent`, or -1 when p falls in the padding.
inline int64_t window_tap(const SpatialIndex& pos, const SpatialIndex& k, const WindowGeometry& g,
                          const std::vector<int64_t>& extent, int nd) {
  int64_t lin = 0;
  for (int d = 0; d < nd; ++d) {
    const int64_t p = pos[d] * g.strides[d] - g.pads_begin[d] + k[d] * g.dilations[d];
    if (p < 0 || p >= extent[d]) return -1;
    lin = lin * extent[d] + p;
  }
  return lin;
}

/// Product of `dims` (sizes are checked by the schema, so no overflow here).
inline int64_t product(const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= d;
  return p;
}

}  // namespace tessera::ref
