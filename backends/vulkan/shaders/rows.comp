// Row ops, one work group of 256 invocations per row; row r = (o, i) of x viewed as
// [outer, len, inner] holds x[o*len*inner + a*inner + i], a < len.
//   op 0 Softmax-13:    y = exp(x - max) / sum exp(x - max)
//   op 1 LogSoftmax-13: y = (x - max) - log(sum exp(x - max))
//   op 2 LayerNormalization-17 (inner == 1): y = (x - mean) / sqrt(var + eps) * scale[a % ns] + bias[a % nb],
//        var the biased variance, computed as mean((x - mean)^2)
// (ONNX). Partial sums per invocation with Kahan compensation, then a tree in shared memory.
#version 450
#include "common.glsl"
layout(local_size_x = 256) in;
layout(push_constant) uniform P {
  Floats x;
  Floats y;
  Floats scale;
  Floats bias;
  uint rows;
  uint len;
  uint inner;
  int op;
  float eps;
  uint ns;
  uint nb;
  int has_bias;
} p;

shared float red[256];

float reduce_sum(float v) {
  uint t = gl_LocalInvocationID.x;
  barrier();
  red[t] = v;
  barrier();
  for (uint s = 128u; s > 0u; s >>= 1u) {
    if (t < s) red[t] += red[t + s];
    barrier();
  }
  return red[0];
}

float reduce_max(float v) {
  uint t = gl_LocalInvocationID.x;
  barrier();
  red[t] = v;
  barrier();
  for (uint s = 128u; s > 0u; s >>= 1u) {
    if (t < s) red[t] = max(red[t], red[t + s]);
    barrier();
  }
  return red[0];
}

void main() {
  uint r = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (r >= p.rows) return;  // uniform per work group
  uint t = gl_LocalInvocationID.x;
  uint o = r / p.inner, in_ = r % p.inner;
  uint base = o * p.len * p.inner + in_;
  if (p.op == 2) {
    precise float s = 0.0, c = 0.0;
    for (uint a = t; a < p.len; a += 256u) {
      precise float v = p.x.v[base + a * p.inner] - c;
      precise float u = s + v;
      c = (u - s) - v;
      s = u;
    }
    float mean = reduce_sum(s) / float(p.len);
    s = 0.0; c = 0.0;
    for (uint a = t; a < p.len; a += 256u) {
      float d = p.x.v[base + a * p.inner] - mean;
      precise float v = d * d - c;
      precise float u = s + v;
      c = (u - s) - v;
      s = u;
    }
    float var = reduce_sum(s) / float(p.len);
    float inv = 1.0 / sqrt(var + p.eps);
    for (uint a = t; a < p.len; a += 256u) {
      float v = (p.x.v[base + a * p.inner] - mean) * inv * p.scale.v[a % p.ns];
      if (p.has_bias != 0) v += p.bias.v[a % p.nb];
      p.y.v[base + a * p.inner] = v;
    }
    return;
  }
  float m = -1.0 / 0.0;
  for (uint a = t; a < p.len; a += 256u) m = max(m, p.x.v[base + a * p.inner]);
  m = reduce_max(m);
  precise float s = 0.0, c = 0.0;
  for (uint a = t; a < p.len; a += 256u) {
    precise float v = exp(p.x.v[base + a * p.inner] - m) - c;
    precise float u = s + v;
    c = (u - s) - v;
    s = u;
  }
  float sum = reduce_sum(s);
  if (p.op == 0) {
    float inv = 1.0 / sum;
    for (uint a = t; a < p.len; a += 256u) p.y.v[base + a * p.inner] = exp(p.x.v[base + a * p.inner] - m) * inv;
  } else {
    float ls = log(sum);
    for (uint a = t; a < p.len; a += 256u) p.y.v[base + a * p.inner] = (p.x.v[base + a * p.inner] - m) - ls;
  }
}
