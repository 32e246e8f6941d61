// 2-D convolution (ONNX Conv-11, NCHW, cross-correlation) as an implicit GEMM, tiled in
// shared memory like matmul.comp: per image n and group g,
//   y[n][g*Mg+m][q] = bias[g*Mg+m] + sum_k W[g*Mg+m][k] * X̂[k][q]
// with q = (oh, ow), k = (ic, kh, kw) over Cg = C/group input channels and
// X̂[k][q] = x[n][g*Cg+ic][oh*sh - ph + kh*dh][ow*sw - pw + kw*dw] (0 outside the image).
// No im2col buffer: the tile of X̂ is gathered straight from x. Sums in float32, k order.
#version 450
#include "common.glsl"
layout(local_size_x = 16, local_size_y = 16) in;
layout(push_constant) uniform P {
  Floats x;
  Floats w;
  Floats bias;
  Floats y;
  uint C, H, W, Mg;       // input channels, input height/width, output channels per group
  uint OH, OW, KH, KW;
  uint sh, sw, ph, pw;
  uint dh, dw, group;
  int has_bias;
} p;

shared float As[16][65];
shared float Bs[16][64];
// Per k of the current K step: the offset of tap (ic, kh, kw) in the image, ic*H*W +
// kh*dh*W + kw*dw, and its (kh*dh, kw*dw) for the bounds check; -1: past K.
shared int koff[16];
shared int kdh[16];
shared int kdw[16];

void main() {
  uint Cg = p.C / p.group;
  uint Kdim = Cg * p.KH * p.KW, Q = p.OH * p.OW;
  uint z = gl_WorkGroupID.z;
  uint n = z / p.group, g = z % p.group;
  uint xbase = (n * p.C + g * Cg) * p.H * p.W;
  uint wbase = g * p.Mg * Kdim;
  uint m0 = gl_WorkGroupID.y * 64u, q0 = gl_WorkGroupID.x * 64u;
  uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
  uint tid = ty * 16u + tx;
  float acc[4][4];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) acc[i][j] = 0.0;
  uint khw = p.KH * p.KW;
  // The output position this invocation gathers for is fixed: column qq = tid % 64 of the
  // tile, rows kb = tid / 64 + 4r (r < 4) of the K step.
  uint qq = tid % 64u;
  uint gq = q0 + qq;
  bool q_in = gq < Q;
  uint oh = q_in ? gq / p.OW : 0u, ow = q_in ? gq % p.OW : 0u;
  int ih0 = int(oh * p.sh) - int(p.ph), iw0 = int(ow * p.sw) - int(p.pw);
  uint kk_a = tid % 16u, mm_a = tid / 16u;  // A: rows mm_a + 16r, column kk_a
  for (uint k0 = 0u; k0 < Kdim; k0 += 16u) {
    if (tid < 16u) {
      uint gk = k0 + tid;
      if (gk < Kdim) {
        uint ic = gk / khw, r = gk % khw;
        uint kh = r / p.KW, kw = r % p.KW;
        kdh[tid] = int(kh * p.dh);
        kdw[tid] = int(kw * p.dw);
        koff[tid] = int(ic * p.H * p.W + kh * p.dh * p.W + kw * p.dw);
      } else {
        koff[tid] = -1;
      }
    }
    barrier();
    for (uint r = 0u; r < 4u; ++r) {
      uint gm = m0 + mm_a + 16u * r, gk = k0 + kk_a;
      As[kk_a][mm_a + 16u * r] = (gm < p.Mg && gk < Kdim) ? p.w.v[wbase + gm * Kdim + gk] : 0.0;
      uint kb = tid / 64u + 4u * r;
      float v = 0.0;
      int off = koff[kb];
      if (q_in && off >= 0) {
        int ih = ih0 + kdh[kb], iw = iw0 + kdw[kb];
        if (ih >= 0 && ih < int(p.H) && iw >= 0 && iw < int(p.W))
          v = p.x.v[xbase + uint(off + ih0 * int(p.W) + iw0)];
      }
      Bs[kb][qq] = v;
    }
    barrier();
    for (uint kk = 0u; kk < 16u; ++kk) {
      float av[4], bv[4];
      for (int i = 0; i < 4; ++i) av[i] = As[kk][ty + 16u * uint(i)];
      for (int j = 0; j < 4; ++j) bv[j] = Bs[kk][tx + 16u * uint(j)];
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) acc[i][j] = fma(av[i], bv[j], acc[i][j]);
    }
    barrier();
  }
  uint M = p.Mg * p.group;
  for (int i = 0; i < 4; ++i) {
    uint gm = m0 + ty + 16u * uint(i);
    if (gm >= p.Mg) continue;
    uint oc = g * p.Mg + gm;
    float b = p.has_bias != 0 ? p.bias.v[oc] : 0.0;
    for (int j = 0; j < 4; ++j) {
      uint gq = q0 + tx + 16u * uint(j);
      if (gq >= Q) continue;
      p.y.v[(n * M + oc) * Q + gq] = acc[i][j] + b;
    }
  }
}
