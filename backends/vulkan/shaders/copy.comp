// Strided copy of 32-bit words (Transpose, Slice, Expand, Concat, Split, Reshape and the
// other byte-preserving ops): for each output element o < n with coordinates c over
// dims[0..rank) (row-major), y[yo + sum c[d] * so[d]] = x[xo + sum c[d] * si[d]].
// Strides and offsets are in words; an 8-byte dtype is copied as two words per element
// (the innermost dim of size 2, stride 1).
#version 450
#include "common.glsl"
layout(local_size_x = 256) in;
layout(push_constant) uniform P {
  Uints x;
  Uints y;
  uint n;
  int rank;
  uint xo;
  uint yo;
  uint dims[6];
  int si[6];   // may be negative (Slice with a negative step)
  uint so[6];
} p;

void item(uint i);

// A grid-stride loop: the dispatch may have fewer invocations than items.
void main() {
  for (uint i = global_index(); i < p.n; i += gl_NumWorkGroups.x * gl_NumWorkGroups.y * 256u) item(i);
}

void item(uint i) {
  int ix = int(p.xo);
  uint iy = p.yo, rest = i;
  for (int d = p.rank - 1; d >= 0; --d) {
    uint c = rest % p.dims[d];
    rest /= p.dims[d];
    ix += int(c) * p.si[d];
    iy += c * p.so[d];
  }
  p.y.v[iy] = p.x.v[uint(ix)];
}
