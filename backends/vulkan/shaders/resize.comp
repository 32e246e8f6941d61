// Resize-19 / Upsample-9 (ONNX) over [planes, H, W] float32, modes nearest and linear (2-D),
// one output per invocation. coord: 0 half_pixel, 1 asymmetric, 2 align_corners,
// 3 pytorch_half_pixel, 4 tf_half_pixel_for_nn, 5 half_pixel_symmetric; nearest:
// 0 round_prefer_floor, 1 round_prefer_ceil, 2 floor, 3 ceil, 4 Upsample's "simple".
// exact (nearest with sizes, scale = out / in): the source index in integer arithmetic,
// exact at ties, as runtime/ops/resize_nearest.h computes it for the CPU and CUDA (the host
// checks that the products fit 32 bits).
#version 450
#include "common.glsl"
layout(local_size_x = 256) in;
layout(push_constant) uniform P {
  Floats x;
  Floats y;
  uint n;
  uint H, W, OH, OW;
  float scale_h, scale_w;
  int coord;
  int nearest;
  int linear;
  int exact;
} p;

float coord_of(uint o, uint in_, uint out_, float scale) {
  float fo = float(o);
  switch (p.coord) {
    case 0: return (fo + 0.5) / scale - 0.5;
    case 1: return fo / scale;
    case 2: return out_ == 1u ? 0.0 : fo * float(in_ - 1u) / (float(in_) * scale - 1.0);
    case 3: return out_ > 1u ? (fo + 0.5) / scale - 0.5 : 0.0;
    case 4: return (fo + 0.5) / scale;
    case 5: return float(in_ - 1u) / 2.0 + (fo + 0.5 - float(out_) / 2.0) / scale;
  }
  return 0.0;
}

uint nearest_of(float v, float scale, uint in_) {
  float r;
  switch (p.nearest) {
    case 0: r = v - floor(v) == 0.5 ? floor(v) : floor(v + 0.5); break;
    case 1: r = v - floor(v) == 0.5 ? ceil(v) : floor(v + 0.5); break;
    case 2: r = floor(v); break;
    case 3: r = ceil(v); break;
    default: r = scale < 1.0 ? ceil(v) : trunc(v); break;
  }
  return uint(clamp(r, 0.0, float(in_ - 1u)));
}

// resize_exact_coordinate and resize_exact_nearest of runtime/ops/resize_nearest.h: the
// coordinate num / den, then its rounding. num >= -out > -den, so num + den >= 0 and the
// divisions below see no negative operand.
uint exact_nearest_of(uint o, uint in_, uint out_) {
  int i = int(in_), n = int(out_), k = int(o), num, den;
  switch (p.coord) {
    case 1: num = k * i; den = n; break;
    case 2: num = n == 1 ? 0 : k * (i - 1); den = n == 1 ? 1 : n - 1; break;
    case 3: num = n == 1 ? 0 : (2 * k + 1) * i - n; den = n == 1 ? 1 : 2 * n; break;
    case 4: num = (2 * k + 1) * i; den = 2 * n; break;
    default: num = (2 * k + 1) * i - n; den = 2 * n; break;
  }
  int fl = (num + den) / den - 1, rem = (num + den) % den, r;
  switch (p.nearest) {
    case 0: r = 2 * rem <= den ? fl : fl + 1; break;
    case 1: r = 2 * rem < den ? fl : fl + 1; break;
    case 2: r = fl; break;
    case 3: r = rem != 0 ? fl + 1 : fl; break;
    default: r = n < i ? (rem != 0 ? fl + 1 : fl) : (num < 0 && rem != 0 ? fl + 1 : fl); break;
  }
  return uint(clamp(r, 0, i - 1));
}

void item(uint i);

// A grid-stride loop: the dispatch may have fewer invocations than items.
void main() {
  for (uint i = global_index(); i < p.n; i += gl_NumWorkGroups.x * gl_NumWorkGroups.y * 256u) item(i);
}

void item(uint i) {
  uint ox = i % p.OW, t = i / p.OW;
  uint oy = t % p.OH, plane = t / p.OH;
  uint base = plane * p.H * p.W;
  if (p.exact != 0) {
    p.y.v[i] = p.x.v[base + exact_nearest_of(oy, p.H, p.OH) * p.W + exact_nearest_of(ox, p.W, p.OW)];
    return;
  }
  float fy = coord_of(oy, p.H, p.OH, p.scale_h);
  float fx = coord_of(ox, p.W, p.OW, p.scale_w);
  if (p.linear == 0) {
    p.y.v[i] = p.x.v[base + nearest_of(fy, p.scale_h, p.H) * p.W + nearest_of(fx, p.scale_w, p.W)];
    return;
  }
  fy = clamp(fy, 0.0, float(p.H - 1u));
  fx = clamp(fx, 0.0, float(p.W - 1u));
  uint y0 = uint(floor(fy)), x0 = uint(floor(fx));
  uint y1 = min(y0 + 1u, p.H - 1u), x1 = min(x0 + 1u, p.W - 1u);
  float ty = fy - float(y0), tx = fx - float(x0);
  float v = (1.0 - ty) * ((1.0 - tx) * p.x.v[base + y0 * p.W + x0] + tx * p.x.v[base + y0 * p.W + x1]) +
            ty * ((1.0 - tx) * p.x.v[base + y1 * p.W + x0] + tx * p.x.v[base + y1 * p.W + x1]);
  p.y.v[i] = v;
}
