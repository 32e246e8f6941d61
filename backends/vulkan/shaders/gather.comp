// Gather-13 (ONNX) of 32-bit words: x viewed as [outer, axis_len, inner], indices (int32,
// or int64 read as two words, little-endian) already checked in range and made
// non-negative when planning: y[o][j][i] = x[o][idx[j]][i], j < n_idx.
#version 450
#include "common.glsl"
layout(local_size_x = 256) in;
layout(push_constant) uniform P {
  Uints x;
  Ints idx;
  Uints y;
  uint n;
  uint axis_len;
  uint n_idx;
  uint inner;
  int idx64;
} p;

void item(uint i);

// A grid-stride loop: the dispatch may have fewer invocations than items.
void main() {
  for (uint i = global_index(); i < p.n; i += gl_NumWorkGroups.x * gl_NumWorkGroups.y * 256u) item(i);
}

void item(uint i) {
  uint in_ = i % p.inner, t = i / p.inner;
  uint j = t % p.n_idx, o = t / p.n_idx;
  int k = p.idx.v[p.idx64 != 0 ? 2u * j : j];
  if (k < 0) k += int(p.axis_len);
  p.y.v[i] = p.x.v[(o * p.axis_len + uint(k)) * p.inner + in_];
}
