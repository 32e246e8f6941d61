// Conv (ONNX Conv-1/11) for 2-D 3x3 kernels, stride 1, dilation 1, one group, float32,
// NCHW, by Winograd's minimal filtering F(4x4, 3x3) (Lavin & Gray, "Fast Algorithms for
// Convolutional Neural Networks", CVPR 2016):
//
//   Y tile (4x4) = A^T [ sum_c U[m, c] (.) V[c, tile] ] A,   U = G w[m, c] G^T,  V = B^T d B,
//
// with d the 6x6 input patch (zero in the padding) whose top-left corner is at
// (4*ty - pad_top, 4*tx - pad_left), (.) the elementwise product, and the matrices of the
// paper for the interpolation points 0, 1, -1, 2, -2 (B^T 6x6, G 6x3, A^T 4x6; see bt6,
// at6 and transform_weights). The sum over c is, for each of the 36 positions xi of the 6x6,
// one GEMM:  M[xi] (M x T) = U[xi] (M x C) * V[xi] (C x T),  T = the tiles of a block. It
// takes 36 * C * M multiplications per 16 outputs where im2col takes 9 * 16 * C * M: 4x
// fewer. U is computed once at load (in double, rounded to float) and packed as sgemm's A,
// one matrix per xi (36 * C * M floats, 4x the weights).
//
// Blocking: the tiles of one image are taken a block of whole tile rows at a time, so that
// V (36 x C x Tb) and M (36 x M x Tb) of a block together stay near 2 MiB (L2). Per block:
//   1. input transform: per channel, each of the block's 4*rows + 2 input rows is padded and
//      split by column phase (x mod 4) into Q[x mod 4][row][x / 4], so the 36 values of 16
//      neighbouring tiles are 36 contiguous 16-float loads (x = 4*tx + c reads
//      Q[c mod 4][row][tx + c / 4]); B^T d B is then 2 x 6 six-term combinations of vectors
//      over 16 tiles, stored to V[xi][c][t];
//   2. the 36 GEMMs on the SGEMM (one thread each);
//   3. output transform: per output channel, A^T M A on vectors over 16 tiles, the four
//      columns of each output row interleaved back (x = 4*tx + j), then the bias, the fused
//      residual and activation (CompileContext::epilogue), stored.
// Threads: each step is split over the pool (channels, the 36 GEMMs, output channels).
//
// Error: the transforms' coefficients (up to 8 in A^T, 5 in B^T, 1/24 in G) make the
// rounding error of F(4x4, 3x3) in float a few times that of the direct sum; on random
// data it is about 1e-6 of sum |x||w| (tests/unit/conv_x86_test.cc checks 1e-4 of it).
//
// The vector code is written on GCC vectors of 16 floats (v16.h) and built per ISA with
// TSR_V16_VARIANTS (AVX-512F, AVX2, baseline; once on aarch64), like the depthwise kernel.
#include "backends/cpu/x86/conv_winograd.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "backends/cpu/thread_pool.h"
#include "backends/cpu/x86/fused_tail.h"
#include "backends/cpu/x86/parallel_x86.h"
#include "backends/cpu/x86/sgemm.h"
#include "backends/cpu/x86/v16.h"
#include "backends/cpu/x86/winograd_f43.h"
#include "runtime/ops/spatial_attrs.h"

namespace tessera::x86 {

namespace {


typedef int32_t I16 __attribute__((vector_size(64)));
typedef int32_t I8 __attribute__((vector_size(32)));

constexpr int64_t kTiles = 16;                 // tiles per vector
constexpr int64_t kXi = 36;                    // positions of the 6x6 transformed tile
constexpr size_t kBlockBytes = 2u << 20;       // target bytes of V and M of one block

inline size_t align64(size_t bytes) { return (bytes + 63) / 64 * 64; }
inline int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

// Where column t of one row of a packed-B matrix lives (sgemm_pack_b's layout: NR-wide
// panels of kc x NR floats per KC block of rows): row + (t / nr) * panel + t % nr, with
// `row` the row's place in its block's first panel and panel = kc * NR.
struct PackedRow {
  float* row;
  int64_t nr, panel;
  int64_t cols;  // columns of the matrix (whole panels): lanes at or past it are dropped
};

// Stores columns t .. t + 15 of a packed row, `off` floats further (the matrix of another
// xi); a run that crosses a panel boundary is split, columns past the last are dropped.
template <class V>
__attribute__((always_inline)) inline void store_panels(const PackedRow& pr, int64_t off, int64_t t, V v) {
  const int64_t j = t % pr.nr;
  float* dst = pr.row + off + (t / pr.nr) * pr.panel + j;
  if (j + kTiles <= pr.nr && t + kTiles <= pr.cols) {
    store16(dst, v);
    return;
  }
  alignas(64) float lanes[kTiles];
  store16(lanes, v);
  const int64_t end = std::min<int64_t>(kTiles, pr.cols - t);
  for (int64_t done = 0; done < end;) {
    const int64_t n = std::min<int64_t>(end - done, pr.nr - (t + done) % pr.nr);
    float* d = pr.row + off + ((t + done) / pr.nr) * pr.panel + (t + done) % pr.nr;
    for (int64_t k = 0; k < n; ++k) d[k] = lanes[done + k];
    done += n;
  }
}

// Lane k of the result is element 4k + P of the 64 floats a, b, c, d (the input
// transform's column phase P).
template <int P>
__attribute__((always_inline)) inline V16 phase_lanes(V16 a, V16 b, V16 c, V16 d) {
  // 8 lanes from each pair of vectors, then the two halves joined.
  const I16 pick = {P, P + 4, P + 8, P + 12, P + 16, P + 20, P + 24, P + 28,
                    P, P + 4, P + 8, P + 12, P + 16, P + 20, P + 24, P + 28};
  const I16 join = {0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23};
  return __builtin_shuffle(__builtin_shuffle(a, b, pick), __builtin_shuffle(c, d, pick), join);
}
template <int P>
__attribute__((always_inline)) inline V16x2 phase_lanes(V16x2 a, V16x2 b, V16x2 c, V16x2 d) {
  // 4 lanes from each vector of 16, then pairs joined.
  const I8 pick = {P, P + 4, P + 8, P + 12, P, P + 4, P + 8, P + 12};
  const I8 join = {0, 1, 2, 3, 8, 9, 10, 11};
  const V8 ab = __builtin_shuffle(__builtin_shuffle(a.lo, a.hi, pick), __builtin_shuffle(b.lo, b.hi, pick), join);
  const V8 cd = __builtin_shuffle(__builtin_shuffle(c.lo, c.hi, pick), __builtin_shuffle(d.lo, d.hi, pick), join);
  return {ab, cd};
}

template <int P>
__attribute__((always_inline)) inline V16x4 phase_lanes(V16x4 a, V16x4 b, V16x4 c, V16x4 d) {
  // Lane P of each quarter: of a's four quarters for lanes 0-3, of b's for 4-7, ...
  typedef int32_t I4 __attribute__((vector_size(16)));
  const I4 pick = {P, P + 4, P, P + 4}, join = {0, 1, 4, 5};
  auto quarter = [&](V16x4 v) {
    return __builtin_shuffle(__builtin_shuffle(v.a, v.b, pick), __builtin_shuffle(v.c, v.d, pick), join);
  };
  return {quarter(a), quarter(b), quarter(c), quarter(d)};
}

// out[0 .. 3] (64 lanes) with lane 4k + j = lane k of o_j: the output transform's four
// columns of 16 tiles interleaved back into a row.
__attribute__((always_inline)) inline void interleave4(V16 o0, V16 o1, V16 o2, V16 o3, V16* out) {
  const I16 lo = {0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23};
  const I16 hi = {8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31};
  const I16 q0 = {0, 1, 16, 17, 2, 3, 18, 19, 4, 5, 20, 21, 6, 7, 22, 23};
  const I16 q1 = {8, 9, 24, 25, 10, 11, 26, 27, 12, 13, 28, 29, 14, 15, 30, 31};
  const V16 a = __builtin_shuffle(o0, o1, lo), b = __builtin_shuffle(o0, o1, hi);
  const V16 c = __builtin_shuffle(o2, o3, lo), d = __builtin_shuffle(o2, o3, hi);
  out[0] = __builtin_shuffle(a, c, q0);
  out[1] = __builtin_shuffle(a, c, q1);
  out[2] = __builtin_shuffle(b, d, q0);
  out[3] = __builtin_shuffle(b, d, q1);
}
// The same on 8 tiles (o_j of 8 lanes) into two vectors of 16 (tiles 0-3, 4-7).
__attribute__((always_inline)) inline void interleave4_8(V8 o0, V8 o1, V8 o2, V8 o3, V16x2& r0, V16x2& r1) {
  const I8 lo = {0, 8, 1, 9, 2, 10, 3, 11}, hi = {4, 12, 5, 13, 6, 14, 7, 15};
  const I8 q0 = {0, 1, 8, 9, 2, 3, 10, 11}, q1 = {4, 5, 12, 13, 6, 7, 14, 15};
  const V8 a = __builtin_shuffle(o0, o1, lo), b = __builtin_shuffle(o0, o1, hi);  // (j0, j1) of tiles 0-3, 4-7
  const V8 c = __builtin_shuffle(o2, o3, lo), d = __builtin_shuffle(o2, o3, hi);  // (j2, j3)
  r0 = {__builtin_shuffle(a, c, q0), __builtin_shuffle(a, c, q1)};
  r1 = {__builtin_shuffle(b, d, q0), __builtin_shuffle(b, d, q1)};
}
__attribute__((always_inline)) inline void interleave4(V16x2 o0, V16x2 o1, V16x2 o2, V16x2 o3, V16x2* out) {
  interleave4_8(o0.lo, o1.lo, o2.lo, o3.lo, out[0], out[1]);
  interleave4_8(o0.hi, o1.hi, o2.hi, o3.hi, out[2], out[3]);
}
// On quarters: out[m] is the 4 x 4 transpose of quarter m of o_0 .. o_3 (tiles 4m .. 4m + 3).
__attribute__((always_inline)) inline V16x4 transpose4(V4 r0, V4 r1, V4 r2, V4 r3) {
  typedef int32_t I4 __attribute__((vector_size(16)));
  const I4 lo = {0, 4, 1, 5}, hi = {2, 6, 3, 7}, first = {0, 1, 4, 5}, second = {2, 3, 6, 7};
  const V4 a = __builtin_shuffle(r0, r1, lo), b = __builtin_shuffle(r0, r1, hi);
  const V4 c = __builtin_shuffle(r2, r3, lo), d = __builtin_shuffle(r2, r3, hi);
  return {__builtin_shuffle(a, c, first), __builtin_shuffle(a, c, second), __builtin_shuffle(b, d, first),
          __builtin_shuffle(b, d, second)};
}
__attribute__((always_inline)) inline void interleave4(V16x4 o0, V16x4 o1, V16x4 o2, V16x4 o3, V16x4* out) {
  out[0] = transpose4(o0.a, o1.a, o2.a, o3.a);
  out[1] = transpose4(o0.b, o1.b, o2.b, o3.b);
  out[2] = transpose4(o0.c, o1.c, o2.c, o3.c);
  out[3] = transpose4(o0.d, o1.d, o2.d, o3.d);
}

// True if every |x[i]| <= limit, x[0 .. n) (no Inf, no NaN): x - x is 0 for finite x and
// NaN otherwise, summed over 16 lanes (a NaN anywhere makes the sum NaN, which is not equal
// to itself), and the largest |x| kept per lane.
template <class V>
__attribute__((always_inline)) inline bool all_within_body(const float* x, int64_t n, float limit) {
  const V zero = {};
  V acc = {}, big = {};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const V v = load<V>(x + i);
    acc += v - v;
    const V a = lt_select(v, zero, zero - v, v);
    big = gt_select(a, big, a, big);
  }
  float tail = 0.f, most = 0.f;
  for (; i < n; ++i) {
    tail += x[i] - x[i];
    most = std::max(most, std::fabs(x[i]));
  }
  alignas(64) float lanes[16], maxes[16];
  store16(lanes, acc);
  store16(maxes, big);
  float s = tail;
  for (int k = 0; k < 16; ++k) {
    s += lanes[k];
    most = std::max(most, maxes[k]);
  }
  return s == s && most <= limit;
}
TSR_V16_VARIANTS(, bool, all_within, (const float* x, int64_t n, float limit), (x, n, limit))

// Input transform of one channel for the tile rows [ty0, ty1):
//   V[xi] column t (xi = 6 * r + c, t = (ty - ty0) * tw + tx) = (B^T d B)[r][c],
// written into sgemm's packed-B layout of V[xi] (see store_panels): `v` points at this
// channel's row of the layout, V[xi] starts xi * v_xi floats after V[0]. q: 4 * (4 * rows +
// 2) * qw floats of scratch (the phase-split rows), then 4 * qw floats (one padded row).
// Writes 16 tiles at a time: the lanes past a tile row's end land on the next row's tiles
// (written after) or in the padding columns of the last panel.
template <class V>
__attribute__((always_inline)) inline void input_transform_body(const float* x, int64_t ih, int64_t iw, int64_t pad_t,
                                                                int64_t pad_l, int64_t ty0, int64_t ty1, int64_t tw,
                                                                int64_t qw, float* q, const PackedRow& v,
                                                                int64_t v_xi) {
  const int64_t rows = 4 * (ty1 - ty0) + 2, phase = rows * qw;
  float* row = q + 4 * phase;
  const int64_t x0 = std::max<int64_t>(0, pad_l), x1 = std::min<int64_t>(4 * qw, pad_l + iw);  // valid columns
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t y = 4 * ty0 + r - pad_t;
    std::memset(row, 0, static_cast<size_t>(4 * qw) * sizeof(float));
    if (y >= 0 && y < ih && x1 > x0)
      std::memcpy(row + x0, x + y * iw + (x0 - pad_l), static_cast<size_t>(x1 - x0) * sizeof(float));
    for (int64_t k = 0; k < qw; k += kTiles) {
      // Lane j of phase p takes element 4j + p of 64 consecutive floats.
      const V a = load<V>(row + 4 * k), b = load<V>(row + 4 * k + 16), c = load<V>(row + 4 * k + 32),
              d = load<V>(row + 4 * k + 48);
      float* dst = q + r * qw + k;
      store16(dst, phase_lanes<0>(a, b, c, d));
      store16(dst + phase, phase_lanes<1>(a, b, c, d));
      store16(dst + 2 * phase, phase_lanes<2>(a, b, c, d));
      store16(dst + 3 * phase, phase_lanes<3>(a, b, c, d));
    }
  }
  for (int64_t ty = ty0; ty < ty1; ++ty) {
    const float* base = q + 4 * (ty - ty0) * qw;
    const int64_t tx0 = (ty - ty0) * tw;  // the block's tile index of the row's first tile
    for (int64_t tx = 0; tx < tw; tx += kTiles) {
      V t[6][6];  // t[r] = (d B)[r] = B^T applied along the row
      for (int r = 0; r < 6; ++r) {
        const float* br = base + r * qw + tx;
        bt6(load<V>(br), load<V>(br + phase), load<V>(br + 2 * phase), load<V>(br + 3 * phase), load<V>(br + 1),
            load<V>(br + phase + 1), t[r]);
      }
      for (int c = 0; c < 6; ++c) {
        V z[6];
        bt6(t[0][c], t[1][c], t[2][c], t[3][c], t[4][c], t[5][c], z);
        for (int r = 0; r < 6; ++r) store_panels(v, (6 * r + c) * v_xi, tx0 + tx, z[r]);
      }
    }
  }
}

TSR_V16_VARIANTS(, void, input_transform,
                 (const float* x, int64_t ih, int64_t iw, int64_t pad_t, int64_t pad_l, int64_t ty0, int64_t ty1,
                  int64_t tw, int64_t qw, float* q, const PackedRow& v, int64_t v_xi),
                 (x, ih, iw, pad_t, pad_l, ty0, ty1, tw, qw, q, v, v_xi))

// Output transform of one output channel for the tile rows [ty0, ty1): from
// M[xi][t] (row stride m_xi) to Y rows 4 * ty .. 4 * ty + 3 (oh x ow plane, clipped), then
// + bias, + z (the fused residual, same plane layout; may be null), the activation.
template <class V>
__attribute__((always_inline)) inline void output_transform_body(const float* m, int64_t m_xi, int64_t ty0,
                                                                 int64_t ty1, int64_t tw, int64_t oh, int64_t ow,
                                                                 float bias, const float* z, float* y,
                                                                 const FusedActivation& act) {
  const bool activate = act.kind != FusedActivation::Kind::kNone || act.has_affine();
  alignas(64) float buf[4 * kTiles];
  for (int64_t ty = ty0; ty < ty1; ++ty) {
    const float* mt = m + (ty - ty0) * tw;
    for (int64_t tx = 0; tx < tw; tx += kTiles) {
      V s[6][4];  // s[r] = (M A)[r]: A^T applied along the row
      for (int r = 0; r < 6; ++r) {
        const float* mr = mt + 6 * r * m_xi + tx;
        at6(load<V>(mr), load<V>(mr + m_xi), load<V>(mr + 2 * m_xi), load<V>(mr + 3 * m_xi),
            load<V>(mr + 4 * m_xi), load<V>(mr + 5 * m_xi), s[r]);
      }
      V o[4][4];  // o[j][i]: row i, column j of 16 tiles
      for (int j = 0; j < 4; ++j) at6(s[0][j], s[1][j], s[2][j], s[3][j], s[4][j], s[5][j], o[j]);
      const int64_t ox0 = 4 * tx, n = std::min<int64_t>(4 * kTiles, ow - ox0);
      for (int i = 0; i < 4; ++i) {
        const int64_t oy = 4 * ty + i;
        if (oy >= oh) break;
        V out[4];  // lane 4k + j: column j of tile k
        interleave4(o[0][i], o[1][i], o[2][i], o[3][i], out);
        float* yr = y + oy * ow + ox0;
        const float* zr = z ? z + oy * ow + ox0 : nullptr;
        if (n == 4 * kTiles) {
          for (int k = 0; k < 4; ++k) {
            V r = out[k] + bias;
            if (zr) r += load<V>(zr + 16 * k);
            store16(yr + 16 * k, r);
          }
        } else {
          for (int k = 0; k < 4; ++k) store16(buf + 16 * k, out[k] + bias);
          for (int64_t j = 0; j < n; ++j) yr[j] = buf[j] + (zr ? zr[j] : 0.f);
        }
        if (activate) activate_row<V>(act, yr, n);
      }
    }
  }
}

TSR_V16_VARIANTS(, void, output_transform,
                 (const float* m, int64_t m_xi, int64_t ty0, int64_t ty1, int64_t tw, int64_t oh, int64_t ow,
                  float bias, const float* z, float* y, const FusedActivation& act),
                 (m, m_xi, ty0, ty1, tw, oh, ow, bias, z, y, act))

// U[xi][m][c] = (G w[m, c] G^T)[xi], in double, for the 3x3 filters w (M x C x 3 x 3).
void transform_weights(const float* w, int64_t m_out, int64_t c_in, float* u) {
  static const double G[6][3] = {{1.0 / 4, 0, 0},
                                 {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                 {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                 {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                 {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                 {0, 0, 1}};
  const int64_t plane = m_out * c_in;
  for (int64_t mc = 0; mc < plane; ++mc) {
    const float* g = w + mc * 9;
    double gw[6][3];  // G g
    for (int a = 0; a < 6; ++a)
      for (int j = 0; j < 3; ++j) gw[a][j] = G[a][0] * g[j] + G[a][1] * g[3 + j] + G[a][2] * g[6 + j];
    for (int a = 0; a < 6; ++a)
      for (int b = 0; b < 6; ++b)
        u[(6 * a + b) * plane + mc] = static_cast<float>(gw[a][0] * G[b][0] + gw[a][1] * G[b][1] + gw[a][2] * G[b][2]);
  }
}

class WinogradConvKernel final : public Kernel {
 public:
  int64_t batch = 0, c_in = 0, m_out = 0, ih = 0, iw = 0, oh = 0, ow = 0, pad_t = 0, pad_l = 0;
  int64_t th = 0, tw = 0;       // tile rows and columns per image (4x4 output tiles)
  int64_t block_rows = 0;       // tile rows per block
  int64_t ld = 0;               // row stride of M: round_up(block_rows * tw, NR) + kTiles (slack)
  int64_t nr = 0, kc = 0;       // the SGEMM path's NR and KC (V is written as its packed B)
  int64_t v_xi = 0;             // floats per V[xi]: C * round_up(block_rows * tw, NR)
  int64_t qw = 0;               // phase-split row length: round_up(tw, 16) + 16
  bool has_bias = false;
  int addend_input = -1;
  FusedActivation act;
  int threads = 1;
  cpu::SgemmIsa isa = cpu::SgemmIsa::kAuto;
  cpu::PackedGroups packed_u;  // per xi: U[xi] (M x C) packed as sgemm's A
  size_t v_bytes = 0, m_bytes = 0, q_slot = 0, gemm_slot = 0, scratch = 0;
  float x_limit = 0.f;               // winograd_input_limit: larger |X| runs the fallback
  std::unique_ptr<Kernel> fallback;  // make_Conv_gemm's kernel: for inputs with Inf or NaN

  size_t scratch_bytes() const override { return std::max(scratch, fallback->scratch_bytes()); }
  const char* algorithm() const override { return "Winograd F(4x4, 3x3)"; }

  Status run(const KernelContext& ctx) const override {
    const float* x = ctx.input(0).data_as<float>();
    if (!all_within(x, batch * c_in * ih * iw, x_limit)) return fallback->run(ctx);
    const float* b = has_bias ? ctx.input(2).data_as<float>() : nullptr;
    const float* z = addend_input >= 0 ? ctx.input(static_cast<size_t>(addend_input)).data_as<float>() : nullptr;
    float* y = ctx.output(0).data_as<float>();
    ThreadPool* pool = threads > 1 ? ctx.thread_pool : nullptr;
    char* base = static_cast<char*>(ctx.scratch);
    float* v = reinterpret_cast<float*>(base);
    float* mm = reinterpret_cast<float*>(base + v_bytes);
    char* slots = base + v_bytes + m_bytes;
    const int64_t in_plane = ih * iw, out_plane = oh * ow;
    for (int64_t n = 0; n < batch; ++n) {
      for (int64_t ty0 = 0; ty0 < th; ty0 += block_rows) {
        const int64_t ty1 = std::min(th, ty0 + block_rows), tiles = (ty1 - ty0) * tw;
        // V[xi] (C x tiles) in sgemm's packed-B layout, `cols` columns (whole panels).
        const int64_t cols = round_up(tiles, nr);
        // Each phase's units are claimed at run time (run_slots_claimed), a few per claim:
        // an equal static share held the layer up whenever one core ran slower.
        run_slots_claimed(pool, threads, c_in, 8, [&](int64_t slot, int64_t c0, int64_t c1) {
          float* q = reinterpret_cast<float*>(slots + static_cast<size_t>(slot) * (q_slot + gemm_slot));
          for (int64_t c = c0; c < c1; ++c) {
            const int64_t pc = c / kc * kc, depth = std::min(kc, c_in - pc);
            const PackedRow row{v + pc * cols + (c - pc) * nr, nr, depth * nr, cols};
            input_transform(x + (n * c_in + c) * in_plane, ih, iw, pad_t, pad_l, ty0, ty1, tw, qw, q, row, v_xi);
          }
        });
        run_slots_claimed(pool, threads, kXi, 1, [&](int64_t slot, int64_t x0, int64_t x1) {
          void* gs = slots + static_cast<size_t>(slot) * (q_slot + gemm_slot) + q_slot;
          for (int64_t xi = x0; xi < x1; ++xi) {
            cpu::SgemmArgs a;
            a.m = m_out;
            a.n = cols;  // whole panels: the micro-kernel writes M directly (no edge tiles)
            a.k = c_in;
            a.packed_a = packed_u.group(xi);
            a.packed_b = v + xi * v_xi;
            a.c = mm + xi * m_out * ld;
            a.ldc = ld;
            a.isa = isa;
            cpu::sgemm(a, gs, nullptr, 1);
          }
        });
        run_slots_claimed(pool, threads, m_out, 8, [&](int64_t, int64_t m0, int64_t m1) {
          for (int64_t m = m0; m < m1; ++m) {
            const int64_t p = (n * m_out + m) * out_plane;
            output_transform(mm + m * ld, m_out * ld, ty0, ty1, tw, oh, ow, b ? b[m] : 0.f, z ? z + p : nullptr, y + p,
                             act);
          }
        });
      }
    }
    return Status::ok();
  }
};

}  // namespace

namespace {

// make_Conv_winograd's checks, before anything is allocated: false to decline; else k's
// geometry, the fused tail and whether the node has a B.
bool winograd_form(const CompileContext& ctx, bool heuristic, WinogradConvKernel* k, FusedTail* tail, bool* has_bias) {
  if (!float_conv_operands(ctx, has_bias)) return false;
  const Shape& xs = ctx.input(0).shape;
  const Shape& ws = ctx.input(1).shape;
  if (xs.size() != 4 || ws.size() != 4 || ws[2] != 3 || ws[3] != 3 || !ctx.input(1).constant) return false;
  if (ctx.node.attr_i("group", 1) != 1 || ws[1] != xs[1] || xs[0] < 1 || xs[1] < 1 || ws[0] < 1) return false;
  if (*has_bias && (ctx.input(2).shape.size() != 1 || ctx.input(2).shape[0] != ws[0])) return false;
  auto geom = window_geometry(ctx.node, xs, {3, 3}, false);
  if (!geom.is_ok()) return false;  // the reference reports the error
  const WindowGeometry& g = geom.value();
  for (int d = 0; d < 2; ++d)
    if (g.strides[d] != 1 || g.dilations[d] != 1 || g.out[d] < 1) return false;
  if (!read_fused_tail(ctx, /*allow_col_bias=*/false, tail)) return false;
  k->batch = xs[0];
  k->c_in = xs[1];
  k->m_out = ws[0];
  k->ih = g.in[0];
  k->iw = g.in[1];
  k->oh = g.out[0];
  k->ow = g.out[1];
  k->pad_t = g.pads_begin[0];
  k->pad_l = g.pads_begin[1];
  k->th = (k->oh + 3) / 4;
  k->tw = (k->ow + 3) / 4;
  // The heuristic: at least 2 x 16 tiles per image on AVX-512 (a 14 x 14 output has 16,
  // whose GEMMs fill half of each 32-wide panel; im2col's transposed product fills its
  // tiles, 1.87 -> 1.53 ms for ResNet-50's 256-channel 14 x 14 layer), 16 on AVX2, whose
  // panels are 16 wide (that layer on a Zen 3: 5.1 -> 2.6 ms; onnxruntime 2.9; a 7 x 7
  // output, 4 tiles, stays on im2col: 5.3 against 5.8-7.1 ms by Winograd).
  if (heuristic) {
    const int64_t min_tiles = cpu::sgemm_best_isa() == cpu::SgemmIsa::kAvx512 ? 2 * kTiles : kTiles;
    const char* env = std::getenv("TESSERA_WINOGRAD");
    const bool simd = cpu::sgemm_isa_available(cpu::SgemmIsa::kAvx512) || cpu::sgemm_isa_available(cpu::SgemmIsa::kAvx2);
    if ((env && std::strcmp(env, "0") == 0) || !simd ||
        (*has_bias && !ctx.input(2).constant) || k->c_in < 16 || k->m_out < 16 || k->th * k->tw < min_tiles)
      return false;
  }
  return true;
}

}  // namespace

bool winograd_heuristic_takes(const CompileContext& ctx) {
  WinogradConvKernel k;
  FusedTail tail;
  bool has_bias = false;
  return winograd_form(ctx, /*heuristic=*/true, &k, &tail, &has_bias);
}

Result<std::unique_ptr<Kernel>> make_Conv_winograd(const CompileContext& ctx, bool heuristic) {
  const auto decline = [] { return Result<std::unique_ptr<Kernel>>(std::unique_ptr<Kernel>()); };
  auto k = std::make_unique<WinogradConvKernel>();
  FusedTail tail;
  bool has_bias = false;
  if (!winograd_form(ctx, heuristic, k.get(), &tail, &has_bias)) return decline();
  k->has_bias = has_bias;
  k->addend_input = tail.addend;
  k->act = tail.act;
  k->threads = std::max(1, ctx.threads);
  k->isa = cpu::sgemm_best_isa();
  // Tile rows per block: V and M of a block near kBlockBytes, at least one row.
  const size_t row_bytes = static_cast<size_t>(kXi * (k->c_in + k->m_out) * k->tw) * sizeof(float);
  k->block_rows = std::clamp<int64_t>(static_cast<int64_t>(kBlockBytes / row_bytes), 1, k->th);
  const cpu::SgemmBlocking blk = cpu::sgemm_blocking(k->isa);
  k->nr = blk.nr;
  k->kc = blk.kc;
  const int64_t cols = round_up(k->block_rows * k->tw, k->nr);
  k->ld = cols + kTiles;
  k->v_xi = k->c_in * cols;
  k->qw = round_up(k->tw, kTiles) + kTiles;
  k->v_bytes = align64(static_cast<size_t>(kXi * k->v_xi) * sizeof(float));
  k->m_bytes = align64(static_cast<size_t>(kXi * k->m_out * k->ld) * sizeof(float));
  k->q_slot = align64(static_cast<size_t>(4 * (4 * k->block_rows + 2) * k->qw + 4 * k->qw) * sizeof(float));
  k->gemm_slot = align64(cpu::sgemm_scratch_bytes(k->m_out, cols, k->c_in, 1, k->isa, /*b_prepacked=*/true));
  k->scratch = k->v_bytes + k->m_bytes + (k->q_slot + k->gemm_slot) * static_cast<size_t>(k->threads);
  // U, then packed per xi as sgemm's A (M x C).
  std::unique_ptr<float, void (*)(void*)> u{
      static_cast<float*>(std::malloc(static_cast<size_t>(kXi * k->c_in * k->m_out) * sizeof(float))), &std::free};
  if (!u) return out_of_memory(ctx.node.describe() + ": cannot allocate the Winograd-transformed weights");
  const float* w = ctx.input(1).constant->data_as<float>();
  if (!all_within(w, k->m_out * k->c_in * 9, std::numeric_limits<float>::max())) return decline();  // conv_winograd.h
  TSR_ASSIGN_OR_RETURN(k->fallback, make_Conv_gemm(ctx));
  if (!k->fallback) return decline();
  transform_weights(w, k->m_out, k->c_in, u.get());
  k->x_limit = winograd_input_limit(u.get(), kXi * k->c_in * k->m_out, k->c_in);
  if (!(k->x_limit > 0.f)) return decline();
  TSR_RETURN_IF_ERROR(k->packed_u.pack(u.get(), kXi, k->m_out * k->c_in, k->c_in, false, k->m_out, k->c_in, k->isa,
                                       ctx.node.describe()));
  return std::unique_ptr<Kernel>(std::move(k));
}

bool winograd_all_within(const float* x, int64_t n, float limit) { return all_within(x, n, limit); }

float winograd_input_limit(const float* u, int64_t n, int64_t c_in) {
  double most = 0;
  for (int64_t i = 0; i < n; ++i) most = std::max(most, std::fabs(static_cast<double>(u[i])));
  if (!std::isfinite(most)) return 0.f;
  const double big = std::numeric_limits<float>::max();
  // |V| <= 100 max|X| (B^T's rows sum to at most 10 in absolute value, applied twice);
  // |M| <= C max|V| max|U|; |Y - bias| <= 361 max|M| (A^T's rows: at most 19). The limit
  // keeps every intermediate at most half the float range (and V so when U is 0).
  const double limit = std::min(big / 200.0, big / (2.0 * 100.0 * 361.0 * static_cast<double>(c_in) * most));
  return static_cast<float>(limit);
}

void winograd_f43_weights(const float* w, int64_t m_out, int64_t c_in, float* u) { transform_weights(w, m_out, c_in, u); }

}  // namespace tessera::x86
