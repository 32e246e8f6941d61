// Unique's shared algorithm (runtime/ops/unique.cc, backends/cpu/ref/unique.cc).
#pragma once

#include <cstdint>

#include "tessera/graph.h"

namespace tessera {

/// X seen as [outer, len, inner] around `axis` (flattened X: outer = inner = 1).
struct UniqueLayout {
  int64_t axis = -1;  // -1: flattened
  int64_t outer = 1, len = 1, inner = 1;
};

UniqueLayout unique_layout(const Shape& x, const Node& node);

/// Finds the unique slices of X (len slices). Writes, for k < n (the return value):
/// first[k] (first occurrence) and counts[k] of the k-th unique slice, in ascending order
/// (sorted) or in order of first occurrence, and inverse[i] for each slice i < len.
/// `scratch` holds 4 * len int64 values. Allocates nothing.
int64_t unique_slices(const void* x, DType dtype, const UniqueLayout& l, bool sorted, int64_t* first, int64_t* counts,
                      int64_t* inverse, int64_t* scratch);

}  // namespace tessera
