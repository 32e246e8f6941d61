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

void main() {
  uint i = global_index();
  if (i >= p.n) return;
  uint c = (i / p.spatial) % p.C;
  float inv = 1.0 / sqrt(p.var.v[c] + p.eps);
  p.y.v[i] = (p.x.v[i] - p.mean.v[c]) * inv * p.scale.v[c] + p.bias.v[c];
}
