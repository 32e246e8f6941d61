// Batched float32 GEMM, tiled in shared memory: for batch z = (z0, z1) (z1 < nb1),
//   y[z][m][n] = alpha * sum_k A[z][m][k] * B[z][k][n] + beta * C[m][n]
// with A[z][m][k] = a[z0*as0 + z1*as1 + m*ars + k*acs] (likewise B; a broadcast batch dim
// has stride 0, a transposed operand swaps its row and column strides) and C read through
// strides crs, ccs (0 for a broadcast dim). y is dense [batch, M, N]. Math: MatMul-13 and
// Gemm-13 (ONNX); the products of one output are summed in k order in float32.
// One work group of 16x16 invocations computes a 64x64 tile of y, 4x4 per invocation,
// stepping through K 16 at a time.
#version 450
#include "common.glsl"
layout(local_size_x = 16, local_size_y = 16) in;
layout(push_constant) uniform P {
  Floats a;
  Floats b;
  Floats c;
  Floats y;
  uint M, N, K, nb1;
  uint as0, as1, bs0, bs1;
  uint ars, acs, brs, bcs;
  uint crs, ccs;
  float alpha, beta;
  int has_c;
} p;

shared float As[16][65];
shared float Bs[16][64];

void main() {
  uint z = gl_WorkGroupID.z;
  uint z0 = z / p.nb1, z1 = z % p.nb1;
  uint abase = z0 * p.as0 + z1 * p.as1, bbase = z0 * p.bs0 + z1 * p.bs1;
  uint m0 = gl_WorkGroupID.y * 64u, n0 = gl_WorkGroupID.x * 64u;
  uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
  uint tid = ty * 16u + tx;
  float acc[4][4];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) acc[i][j] = 0.0;
  for (uint k0 = 0u; k0 < p.K; k0 += 16u) {
    // 1024 elements of each tile, 4 per invocation.
    for (uint e = tid; e < 1024u; e += 256u) {
      uint kk = e % 16u, mm = e / 16u;      // A tile: As[kk][mm] = A[m0+mm][k0+kk]
      uint gm = m0 + mm, gk = k0 + kk;
      As[kk][mm] = (gm < p.M && gk < p.K) ? p.a.v[abase + gm * p.ars + gk * p.acs] : 0.0;
      uint nn = e % 64u, kb = e / 64u;      // B tile: Bs[kb][nn] = B[k0+kb][n0+nn]
      uint gn = n0 + nn, gk2 = k0 + kb;
      Bs[kb][nn] = (gn < p.N && gk2 < p.K) ? p.b.v[bbase + gk2 * p.brs + gn * p.bcs] : 0.0;
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
  for (int i = 0; i < 4; ++i) {
    uint gm = m0 + ty + 16u * uint(i);
    if (gm >= p.M) continue;
    for (int j = 0; j < 4; ++j) {
      uint gn = n0 + tx + 16u * uint(j);
      if (gn >= p.N) continue;
      float r = p.alpha * acc[i][j];
      if (p.has_c != 0) r += p.beta * p.c.v[gm * p.crs + gn * p.ccs];
      p.y.v[(z * p.M + gm) * p.N + gn] = r;
    }
  }
}
