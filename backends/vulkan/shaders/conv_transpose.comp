// 2-D transposed convolution (ONNX ConvTranspose-11, NCHW; W is [C, Mg, KH, KW]), one
// output element per invocation, gathering the inputs that reach it:
//   y[n][oc][oh][ow] = bias[oc] + sum_{ic<Cg, kh, kw} x[n][g*Cg+ic][ih][iw] * W[g*Cg+ic][oc%Mg][kh][kw]
// over the taps with oh + ph - kh*dh = ih*sh and ow + pw - kw*dw = iw*sw inside the input,
// g = oc / Mg. Sums in float32.
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
  uint n;
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
  uint Cg = p.C / p.group, g = oc / p.Mg, ocg = oc % p.Mg;
  float acc = 0.0;
  for (uint ic = 0u; ic < Cg; ++ic) {
    uint c = g * Cg + ic;
    uint xplane = (nb * p.C + c) * p.H * p.W;
    uint wplane = (c * p.Mg + ocg) * p.KH * p.KW;
    for (uint kh = 0u; kh < p.KH; ++kh) {
      int hn = int(oh + p.ph) - int(kh * p.dh);
      if (hn < 0 || hn % int(p.sh) != 0) continue;
      int ih = hn / int(p.sh);
      if (ih >= int(p.H)) continue;
      for (uint kw = 0u; kw < p.KW; ++kw) {
        int wn = int(ow + p.pw) - int(kw * p.dw);
        if (wn < 0 || wn % int(p.sw) != 0) continue;
        int iw = wn / int(p.sw);
        if (iw >= int(p.W)) continue;
        acc = fma(p.x.v[xplane + uint(ih) * p.W + uint(iw)], p.w.v[wplane + kh * p.KW + kw], acc);
      }
    }
  }
  if (p.has_bias != 0) acc += p.bias.v[oc];
  p.y.v[i] = acc;
}
