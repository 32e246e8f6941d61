// Elementwise binary ops on float32 with multidirectional (numpy) broadcast:
// y[o] = f(a[sa . idx(o)], b[sb . idx(o)]) over the output's dims (rank <= 6, leading dims
// padded with 1); a broadcast dim has stride 0. Math: Add-14, Sub-14, Mul-14, Div-14,
// Pow-15, Max-13, Min-13, PRelu-16 (ONNX), in float32.
#version 450
#include "common.glsl"
layout(local_size_x = 256) in;
layout(push_constant) uniform P {
  Floats a;
  Floats b;
  Floats y;
  uint n;
  int op;
  int rank;
  uint dims[6];
  uint sa[6];
  uint sb[6];
} p;

float pow_f(float x, float e) {
  // ONNX Pow follows C's pow: a negative base needs an integral exponent.
  if (e == 2.0) return x * x;
  if (e == 1.0) return x;
  if (e == 0.0) return 1.0;
  if (e == 0.5) return sqrt(x);
  if (x < 0.0) {
    if (e != floor(e)) return 0.0 / 0.0;
    float r = pow(-x, e);
    return mod(e, 2.0) == 1.0 ? -r : r;
  }
  if (x == 0.0) return e < 0.0 ? 1.0 / 0.0 : 0.0;
  return pow(x, e);
}

void item(uint i);

// A grid-stride loop: the dispatch may have fewer invocations than items.
void main() {
  for (uint i = global_index(); i < p.n; i += gl_NumWorkGroups.x * gl_NumWorkGroups.y * 256u) item(i);
}

void item(uint i) {
  uint ia = 0u, ib = 0u, rest = i;
  for (int d = p.rank - 1; d >= 0; --d) {
    uint c = rest % p.dims[d];
    rest /= p.dims[d];
    ia += c * p.sa[d];
    ib += c * p.sb[d];
  }
  float x = p.a.v[ia], z = p.b.v[ib], r;
  switch (p.op) {
    case 0: r = x + z; break;
    case 1: r = x - z; break;
    case 2: r = x * z; break;
    case 3: r = x / z; break;
    case 4: r = pow_f(x, z); break;
    case 5: r = (x != x || z != z) ? x + z : max(x, z); break;
    case 6: r = (x != x || z != z) ? x + z : min(x, z); break;
    case 7: r = x < 0.0 ? z * x : x; break;
    default: r = x; break;
  }
  p.y.v[i] = r;
}
