// BatchNormalization-15 (ONNX), inference: x [N, C, spatial...] float32,
//   y = (x - mean[c]) / sqrt(var[c] + eps) * scale[c] + bias[c],  c = (i / spatial) % C.
#version 450
#include "common.glsl"
layout(local_size_x = 256) in;
layout(push_constant) uniform P {
  Floats x;
  Floats y;
  Floats scale;
  Floats bias;
  Floats mean;
  Floats var;
  uint n;
  uint C;
  uint spatial;
  float eps;
} p;

void item(uint i);

// A grid-stride loop: the dispatch may have fewer invocations than items.
void main() {
  for (uint i = global_index(); i < p.n; i += gl_NumWorkGroups.x * gl_NumWorkGroups.y * 256u) item(i);
}

void item(uint i) {
  uint c = (i / p.spatial) % p.C;
  float inv = 1.0 / sqrt(p.var.v[c] + p.eps);
  p.y.v[i] = (p.x.v[i] - p.mean.v[c]) * inv * p.scale.v[c] + p.bias.v[c];
}
