// MaxPool-12 / AveragePool-19 (ONNX) over [planes, H, W] float32, one output per invocation:
// the window of (oh, ow) starts at (oh*sh - ph, ow*sw - pw) with taps every (dh, dw);
// taps outside the image are skipped. Max keeps the first of equal values (NaN never wins);
// the average divides by KH*KW with count_include_pad, else by the taps inside the image.
#version 450
#include "common.glsl"
layout(local_size_x = 256) in;
layout(push_constant) uniform P {
  Floats x;
  Floats y;
  uint n;
  uint H, W, OH, OW;
  uint KH, KW, sh, sw;
  uint ph, pw, dh, dw;
  int is_max;
  int count_include_pad;
} p;

void item(uint i);

// A grid-stride loop: the dispatch may have fewer invocations than items.
void main() {
  for (uint i = global_index(); i < p.n; i += gl_NumWorkGroups.x * gl_NumWorkGroups.y * 256u) item(i);
}

void item(uint i) {
  uint ow = i % p.OW, t = i / p.OW;
  uint oh = t % p.OH, plane = t / p.OH;
  uint base = plane * p.H * p.W;
  float best = -3.402823466e38;
  float sum = 0.0;
  uint inside = 0u;
  for (uint kh = 0u; kh < p.KH; ++kh) {
    int ih = int(oh * p.sh + kh * p.dh) - int(p.ph);
    if (ih < 0 || ih >= int(p.H)) continue;
    for (uint kw = 0u; kw < p.KW; ++kw) {
      int iw = int(ow * p.sw + kw * p.dw) - int(p.pw);
      if (iw < 0 || iw >= int(p.W)) continue;
      float v = p.x.v[base + uint(ih) * p.W + uint(iw)];
      if (v > best) best = v;
      sum += v;
      ++inside;
    }
  }
  if (p.is_max != 0) {
    p.y.v[i] = best;
  } else {
    uint count = p.count_include_pad != 0 ? p.KH * p.KW : inside;
    p.y.v[i] = count > 0u ? sum / float(count) : 0.0;
  }
}
