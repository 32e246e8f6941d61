// 2-D convolution (ONNX Conv-11, NCHW), one output element per invocation: for depthwise
// and other convolutions with few output channels per group, where the tiles of
// conv2d.comp would be mostly empty.
//   y[n][oc][oh][ow] = bias[oc] + sum_{ic<Cg, kh, kw} W[oc][ic][kh][kw] *
//                      x[n][g*Cg+ic][oh*sh - ph + kh*dh][ow*sw - pw + kw*dw],  g = oc / Mg
// Sums in float32 in (ic, kh, kw) order; taps outside the image count as 0.
#version 450
#include "common.glsl"
layout(local_size_x = 256) in;
layout(push_constant) uniform P {
  Floats x;
  Floats w;
  Floats bias;
  Floats y;
  uint C, H, W, Mg;
  uint OH, OW, KH, KW;
  uint sh, sw, ph, pw;
  uint dh, dw, group;
  int has_bias;
  uint n;   // output elements
} p;

void item(uint i);

// A grid-stride loop: the dispatch may have fewer invocations than items.
void main() {
  for (uint i = global_index(); i < p.n; i += gl_NumWorkGroups.x * gl_NumWorkGroups.y * 256u) item(i);
}

void item(uint i) {
  uint ow = i % p.OW, t = i / p.OW;
  uint oh = t % p.OH; t /= p.OH;
  uint M = p.Mg * p.group;
  uint oc = t % M, nb = t / M;
  uint Cg = p.C / p.group, g = oc / p.Mg;
  uint xbase = (nb * p.C + g * Cg) * p.H * p.W;
  uint wbase = oc * Cg * p.KH * p.KW;
  float acc = 0.0;
  int ih0 = int(oh * p.sh) - int(p.ph), iw0 = int(ow * p.sw) - int(p.pw);
  for (uint ic = 0u; ic < Cg; ++ic) {
    for (uint kh = 0u; kh < p.KH; ++kh) {
      int ih = ih0 + int(kh * p.dh);
      if (ih < 0 || ih >= int(p.H)) continue;
      uint xrow = xbase + (ic * p.H + uint(ih)) * p.W;
      uint wrow = wbase + (ic * p.KH + kh) * p.KW;
      for (uint kw = 0u; kw < p.KW; ++kw) {
        int iw = iw0 + int(kw * p.dw);
        if (iw < 0 || iw >= int(p.W)) continue;
        acc = fma(p.w.v[wrow + kw], p.x.v[xrow + uint(iw)], acc);
      }
    }
  }
  if (p.has_bias != 0) acc += p.bias.v[oc];
  p.y.v[i] = acc;
}
