// ReduceSum-13 / ReduceMean-18 / ReduceMax-18 (ONNX) and GlobalAveragePool-1 over x viewed as
// [outer, len, inner]: y[o][i] = reduce_a x[o][a][i], one output per invocation. Sums use
// Kahan compensation in float32 (error independent of len to first order); op 0 sum,
// 1 mean (sum / len), 2 max (NaN propagates).
#version 450
#include "common.glsl"
layout(local_size_x = 256) in;
layout(push_constant) uniform P {
  Floats x;
  Floats y;
  uint n;      // outer * inner
  uint len;
  uint inner;
  int op;
} p;

void item(uint i);

// A grid-stride loop: the dispatch may have fewer invocations than items.
void main() {
  for (uint i = global_index(); i < p.n; i += gl_NumWorkGroups.x * gl_NumWorkGroups.y * 256u) item(i);
}

void item(uint i) {
  uint o = i / p.inner, in_ = i % p.inner;
  uint base = o * p.len * p.inner + in_;
  if (p.op == 2) {
    float m = -1.0 / 0.0;
    bool nan = false;
    for (uint a = 0u; a < p.len; ++a) {
      float v = p.x.v[base + a * p.inner];
      if (v != v) nan = true;
      m = max(m, v);
    }
    p.y.v[i] = nan ? 0.0 / 0.0 : m;
    return;
  }
  precise float s = 0.0, c = 0.0;
  for (uint a = 0u; a < p.len; ++a) {
    precise float v = p.x.v[base + a * p.inner] - c;
    precise float t = s + v;
    c = (t - s) - v;
    s = t;
  }
  p.y.v[i] = p.op == 1 ? s / float(p.len) : s;
}
