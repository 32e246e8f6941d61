// The NCHW16c convolution's micro-tiles and tasks, and its pools (conv_nchwc.h), written
// once over a block-vector type VB: one 16-channel block of one pixel is VB::T, a zmm in
// conv_nchwc_avx512.cc (Vec16) and two ymm in conv_nchwc_avx2.cc (Vec16x2). Include only
// from those two files; everything here is a member of the class template NchwcKernels<VB>,
// so the two instances (compiled with different -m flags) never share a definition.
//
// VB provides what EpilogueSimd needs (sgemm_epilogue_simd.h: T, zero, set1, load, store,
// add, mul, div, fmadd, max, min, select_ge0), and:
//   Mask, first(n): the lanes below n (0..16) of a block; keep(m, v): v's lanes in m, the
//   others 0; store_first(p, v, n): lanes [0, n) of v to p;
//   kMaxPw[nob]: the most pixels of a conv micro-tile of nob = 1..4 channel blocks (the
//   accumulators fill the register file); kDwMaxPw: of a depthwise micro-tile.
#pragma once

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#include "backends/cpu/x86/conv_nchwc.h"
#include "backends/cpu/x86/sgemm_epilogue_simd.h"

namespace tessera::cpu {

// VB::Half where VB declares one (a half-block type: the first 8 lanes of a block in one
// register, for an output block with at most 8 channels), else void.
template <class V, class = void>
struct NchwcHalfOf {
  using type = void;
};
template <class V>
struct NchwcHalfOf<V, std::void_t<typename V::Half>> {
  using type = typename V::Half;
};

// The arguments of one micro-tile call that do not depend on the vector type (data only:
// shared by the full- and half-block instances of NchwcKernels, which copy it across).
struct NchwcTileGeometry {
  const float* a;        // pixel 0's base in the source
  const int64_t* goff;   // tap groups
  int64_t groups;
  int inner;
  int64_t istride;
  int64_t rs;            // floats between pixels (run-time RS)
  const int64_t* pix;    // RS < 0: each pixel's offset from a (a tile that wraps rows)
  const float* w;        // first block's packed weights
  int64_t wstride;       // floats between blocks' weights
  const float* bias;     // first block's 16 biases
  const float* z;        // first block's pixel 0 in Z, or null (added before the store in one pass, by
                         // the first block of taps in several)
  float* y;              // first block's pixel 0 in Y
  int64_t ystride;       // floats between output channel blocks
  bool accumulate;       // a later block of taps: start from Y's partial sums, not the bias
  bool finish;           // the last block of taps: activate (one pass: add Z first)
  int partial_b;         // the tile's block that holds the channels past c_out (-1: none)
  // Blocked X whose last channel block is partial (c_in % 16 != 0): the tap groups from
  // `partial_from` on (counted from this call's first group) read that block, and only its
  // first `partial_inner` steps are summed (the others are padding lanes, weight 0).
  int64_t partial_from = std::numeric_limits<int64_t>::max();
  int partial_inner = 16;
};

template <class VB>
struct NchwcKernels {
using T = typename VB::T;

// Arguments of one micro-tile call.
struct TileArgs : NchwcTileGeometry {
  const EpilogueSimd<VB>* act;     // the activation and affine map applied in registers
  typename VB::Mask partial_mask;  // the lanes below c_out of block partial_b (of the last rep)
  // Groups of NOB channel blocks computed for the same pixels: group r's weights, bias, Y
  // and Z are r * NOB blocks after the first's (w + r NOB wstride, bias + 16 r NOB, y and
  // z + r NOB ystride); partial_b refers to the last group.
  int64_t reps = 1;
};

// The fused activation and its affine map on one vector, as the SGEMM's epilogue applies
// them (EpilogueSimd: the reference's math, NaN propagating); Sigmoid, Tanh and Gelu pass
// through (the plan's post_act applies them per row).
__attribute__((always_inline)) static T activate(const EpilogueSimd<VB>* e, T r) {
  r = e->activate(r);
  return e->affine ? VB::fmadd(r, e->scale, e->shift) : r;
}

// Stores a finished tile: y[b * ystride + j * 16] = act(acc[b][j] + z[same]) (z may be
// null), then the activation's affine map, block partial_b (-1: none) kept to its lanes
// below c_out (the others written 0: a padding lane of 0 * Inf would put NaN in every
// output of the next Conv, whose weight 0 does not cancel a NaN). The arguments are values,
// not TileArgs fields: a store through Y may alias TileArgs as far as the compiler knows,
// so reading the fields after each store made GCC reload t.y, t.z and the activation for
// every vector, and the activation's switch ran per vector (a jump table per store;
// MobileNetV2's 1x1 24 -> 144, whose tiles have 24 steps, spent ~18% of its time here).
// The activation is chosen once per tile (EpilogueSimd::with_activation).
template <int NOB, int PW>
__attribute__((always_inline)) static void store_tile(T (&acc)[NOB][PW], float* y, int64_t ystride, const float* z,
                                                      int partial_b, typename VB::Mask partial_mask,
                                                      const EpilogueSimd<VB>& e) {
  const bool affine = e.affine;
  const T scale = e.scale, shift = e.shift;
  e.with_activation([&](auto act) __attribute__((always_inline)) {
#pragma GCC unroll 4
    for (int b = 0; b < NOB; ++b)
#pragma GCC unroll 16
      for (int j = 0; j < PW; ++j) {
        T v = acc[b][j];
        if (z) v = VB::add(v, VB::load(z + b * ystride + j * 16));
        v = act(v);
        if (affine) v = VB::fmadd(v, scale, shift);
        if (b == partial_b) v = VB::keep(partial_mask, v);
        VB::store(y + b * ystride + j * 16, v);
      }
  });
}

// PW pixels x NOB channel blocks. RS: floats between pixels (0: args.rs; -1: pixel j at
// args.pix[j]); INNER: steps per tap group at stride 1 (16, blocked), or 0 (args.inner at
// args.istride, plain).
template <int PW, int NOB, int RS, int INNER>
static void conv_tile(const TileArgs& t) {
  // t.reps groups of NOB blocks over the same pixels, one after the other (the input tile
  // stays in L1; one call instead of one per group saves the call and its setup: the
  // driver's loop was 8% of MobileNetV2).
  // Long reductions (more than kChainTerms products per output) are summed in two levels,
  // as the SGEMM sums its KC blocks: each chunk of tap groups from zero in registers, then
  // added to the running total, kept in this tile of Y (in L1). One chain over C_in x taps
  // had 10-20x the rounding error of the GEMM path and onnxruntime at 14,700 terms (a
  // fuzzer's deep conv chains went out of tolerance).
  const int64_t chunk = std::max<int64_t>(1, kChainTerms / (INNER > 0 ? INNER : t.inner));
  const bool two_level = t.groups > chunk;
  // Z with the bias, before Y is first written: Y may be Z's own memory (the planner's
  // in-place residual). In one pass it is added before the store instead, where its loads
  // do not hold up the FMA chains.
  const bool z_first = t.z && !t.accumulate && (!t.finish || two_level);
  const int64_t rs = RS > 0 ? RS : t.rs;
  int64_t off[PW];  // pixel j's offset
#pragma GCC unroll 14
  for (int j = 0; j < PW; ++j) off[j] = RS < 0 ? t.pix[j] : j * rs;
  for (int64_t rep = 0; rep < t.reps; ++rep) {
    const int64_t boff = rep * NOB;
    const float* const tw = t.w + boff * t.wstride;
    const float* const tbias = t.bias + boff * 16;
    const float* const tz = t.z ? t.z + boff * t.ystride : nullptr;
    float* const ty = t.y + boff * t.ystride;
    const int partial_b = rep + 1 == t.reps ? t.partial_b : -1;
    T acc[NOB][PW];
    if (t.accumulate) {
#pragma GCC unroll 4
      for (int b = 0; b < NOB; ++b)
#pragma GCC unroll 14
        for (int j = 0; j < PW; ++j) acc[b][j] = VB::load(ty + b * t.ystride + j * 16);
    } else if (z_first) {
#pragma GCC unroll 4
      for (int b = 0; b < NOB; ++b) {
        const T bv = VB::load(tbias + b * 16);
#pragma GCC unroll 14
        for (int j = 0; j < PW; ++j) acc[b][j] = VB::add(bv, VB::load(tz + b * t.ystride + j * 16));
      }
    } else {
#pragma GCC unroll 4
      for (int b = 0; b < NOB; ++b) {
        const T bv = VB::load(tbias + b * 16);
#pragma GCC unroll 14
        for (int j = 0; j < PW; ++j) acc[b][j] = bv;
      }
    }
    auto y_tile = [&](auto&& f) {
#pragma GCC unroll 4
      for (int b = 0; b < NOB; ++b)
#pragma GCC unroll 14
        for (int j = 0; j < PW; ++j) f(acc[b][j], ty + b * t.ystride + j * 16);
    };
    if (two_level && !t.accumulate) y_tile([](T& v, float* p) { VB::store(p, v); });
    const float* wp = tw;
    // One chunk of all the groups, or chunks of `chunk` groups each summed from zero.
    for (int64_t g0 = 0, g1 = 0; g0 < t.groups; g0 = g1) {
      g1 = two_level ? std::min(t.groups, g0 + chunk) : t.groups;
      if (two_level) y_tile([](T& v, float*) { v = VB::zero(); });
      for (int64_t gi = g0; gi < g1; ++gi) {
        const float* ap = t.a + t.goff[gi];
        if constexpr (INNER > 0) {
          // Each pixel's pointer once per group, the steps at constant displacements from it.
          // Indexing ap[off[j] + i] instead, GCC kept the 6 x 16 sums off[j] + i on the stack
          // for the tiles that wrap rows (RS < 0), a load before every broadcast.
          const float* xp[PW];
#pragma GCC unroll 14
          for (int j = 0; j < PW; ++j) xp[j] = ap + off[j];
          auto step = [&](int i) __attribute__((always_inline)) {
            T wv[NOB];
#pragma GCC unroll 4
            for (int b = 0; b < NOB; ++b) wv[b] = VB::load(wp + b * t.wstride + i * 16);
#pragma GCC unroll 14
            for (int j = 0; j < PW; ++j) {
              // Wide tiles at a constant pixel stride (AVX-512's 9 to 14 pixels, RS > 0):
              // one base pointer, pixel and step at constant displacements from it. Their
              // 14 pointers are more than the free registers: GCC reloaded them from the
              // stack and shuffled the accumulators between registers, 76 instructions per
              // 28 FMAs (ResNet-50 on a Xeon, 1 and 2 threads, alternated: 0.94 and 0.93 of
              // the time with them).
              const T xv = RS > 0 && PW > 8 ? VB::set1(ap[j * RS + i]) : VB::set1(xp[j][i]);
#pragma GCC unroll 4
              for (int b = 0; b < NOB; ++b) acc[b][j] = VB::fmadd(wv[b], xv, acc[b][j]);
            }
          };
          if (gi < t.partial_from) {
#pragma GCC unroll 16
            for (int i = 0; i < INNER; ++i) step(i);
          } else {
            // A partial channel block (MobileNetV2's 24 channels: 24 steps, not 32).
            for (int i = 0; i < t.partial_inner; ++i) step(i);
          }
          wp += INNER * 16;
        } else {
          for (int i = 0; i < t.inner; ++i) {
            T wv[NOB];
#pragma GCC unroll 4
            for (int b = 0; b < NOB; ++b) wv[b] = VB::load(wp + b * t.wstride);
            const float* ai = ap + i * t.istride;
#pragma GCC unroll 14
            for (int j = 0; j < PW; ++j) {
              const T xv = VB::set1(ai[off[j]]);
#pragma GCC unroll 4
              for (int b = 0; b < NOB; ++b) acc[b][j] = VB::fmadd(wv[b], xv, acc[b][j]);
            }
            wp += 16;
          }
        }
      }
      if (two_level) {
        y_tile([](T& v, float* p) { v = VB::add(v, VB::load(p)); });
        if (g1 < t.groups) y_tile([](T& v, float* p) { VB::store(p, v); });
      }
    }
    // Y in a local (see store_tile).
    float* const y = ty;
    const int64_t ystride = t.ystride;
    if (!t.finish) {
#pragma GCC unroll 4
      for (int b = 0; b < NOB; ++b)
#pragma GCC unroll 14
        for (int j = 0; j < PW; ++j) VB::store(y + b * ystride + j * 16, acc[b][j]);
      continue;
    }
    store_tile<NOB, PW>(acc, y, ystride, tz && !t.accumulate && !z_first ? tz : nullptr, partial_b, t.partial_mask,
                        *t.act);
  }
}

// Depthwise: PW pixels of one 16-channel block, taps (ky, kx) at aoff[tap] from a pixel's
// base; w: taps x 16.
struct DwArgs {
  const float* a;
  const int64_t* aoff;
  int64_t taps;
  const float* w;
  const float* bias;
  const float* z;
  float* y;
  const EpilogueSimd<VB>* act;  // as TileArgs::act
  typename VB::Mask mask;  // the block's lanes below c_out (the others are written 0)
};

template <int PW, int RS>
static void dw_tile(const DwArgs& t) {
  T acc[1][PW];
  const T bv = VB::load(t.bias);
#pragma GCC unroll 16
  for (int j = 0; j < PW; ++j) acc[0][j] = bv;
  for (int64_t k = 0; k < t.taps; ++k) {
    const T wv = VB::load(t.w + k * 16);
    const float* ap = t.a + t.aoff[k];
#pragma GCC unroll 16
    for (int j = 0; j < PW; ++j) acc[0][j] = VB::fmadd(VB::load(ap + j * RS), wv, acc[0][j]);
  }
  store_tile<1, PW>(acc, t.y, 0, t.z, 0, t.mask, *t.act);
}

using TileFn = void (*)(const TileArgs&);
using DwFn = void (*)(const DwArgs&);

template <int NOB, int RS, int INNER, int... P>
static constexpr auto tile_row(std::integer_sequence<int, P...>) {
  return std::array<TileFn, sizeof...(P)>{&conv_tile<P + 1, NOB, RS, INNER>...};
}

// The micro-tiles of one (RS, INNER): get(nob, pw), pw <= VB::kMaxPw[nob], nob 1 to 4.
struct TileTable {
  std::array<TileFn, VB::kMaxPw[1]> row1;
  std::array<TileFn, VB::kMaxPw[2]> row2;
  std::array<TileFn, VB::kMaxPw[3]> row3;
  std::array<TileFn, VB::kMaxPw[4]> row4;
  TileFn get(int nob, int pw) const {
    switch (nob) {
      case 1: return row1[static_cast<size_t>(pw - 1)];
      case 2: return row2[static_cast<size_t>(pw - 1)];
      case 3: return row3[static_cast<size_t>(pw - 1)];
      default: return row4[static_cast<size_t>(pw - 1)];
    }
  }
};

template <int RS, int INNER>
static TileTable make_tile_table() {
  return {tile_row<1, RS, INNER>(std::make_integer_sequence<int, VB::kMaxPw[1]>{}),
          tile_row<2, RS, INNER>(std::make_integer_sequence<int, VB::kMaxPw[2]>{}),
          tile_row<3, RS, INNER>(std::make_integer_sequence<int, VB::kMaxPw[3]>{}),
          tile_row<4, RS, INNER>(std::make_integer_sequence<int, VB::kMaxPw[4]>{})};
}

template <int RS, int... P>
static constexpr auto dw_row(std::integer_sequence<int, P...>) {
  return std::array<DwFn, sizeof...(P)>{&dw_tile<P + 1, RS>...};
}
static constexpr int kDwMaxPw = VB::kDwMaxPw;

// The table for p's input: blocked at 16 or 32 floats a pixel (stride 1 or 2) or any
// other stride; plain (the stem) at stride 2 or any other.
static const TileTable& tile_table(const NchwcConvPlan& p) {
  static const TileTable s1 = make_tile_table<16, 16>(), s2 = make_tile_table<32, 16>();
  static const TileTable blocked_any = make_tile_table<0, 16>();
  static const TileTable plain = make_tile_table<0, 0>(), plain_s2 = make_tile_table<2, 0>();
  if (p.wrap_rows) {
    static const TileTable wrap_blocked = make_tile_table<-1, 16>(), wrap_plain = make_tile_table<-1, 0>();
    return p.x_blocked ? wrap_blocked : wrap_plain;
  }
  if (!p.x_blocked) return p.g.sw == 2 ? plain_s2 : plain;
  const int64_t rs = p.g.sw * p.src_pitch;
  return rs == 16 ? s1 : rs == 32 ? s2 : blocked_any;
}

// The depthwise micro-tiles for p's stride along W (1 or 2): [pw - 1].
static const std::array<DwFn, kDwMaxPw>& dw_table(const NchwcConvPlan& p) {
  static const auto s1 = dw_row<16>(std::make_integer_sequence<int, kDwMaxPw>{});
  static const auto s2 = dw_row<32>(std::make_integer_sequence<int, kDwMaxPw>{});
  return p.g.sw == 1 ? s1 : s2;
}

// Copies the input rows [iy0, iy0 + p.tile_rows) of channel blocks [cb0, cb1) (blocked) or
// every channel (plain) into the zero-bordered tile.
static void fill_tile(const NchwcConvPlan& p, const float* x, int64_t iy0, int64_t cb0, int64_t cb1, float* tile) {
  const Conv2dGeometry& g = p.g;
  const int64_t pitch = p.x_blocked ? 16 : 1;
  const int64_t planes = p.x_blocked ? cb1 - cb0 : p.c_in;
  const int64_t xplane = g.ih * g.iw * pitch;
  const int64_t qlo = std::min(p.tile_cols, g.pw), qhi = std::clamp<int64_t>(g.pw + g.iw, qlo, p.tile_cols);
  for (int64_t c = 0; c < planes; ++c) {
    const float* xc = x + (p.x_blocked ? cb0 + c : c) * xplane;
    float* tc = tile + c * p.src_plane;
    for (int64_t r = 0; r < p.tile_rows; ++r) {
      float* tr = tc + r * p.src_row;
      const int64_t iy = iy0 + r;
      if (iy < 0 || iy >= g.ih) {
        std::memset(tr, 0, static_cast<size_t>(p.tile_cols * pitch) * sizeof(float));
        continue;
      }
      std::memset(tr, 0, static_cast<size_t>(qlo * pitch) * sizeof(float));
      std::memcpy(tr + qlo * pitch, xc + (iy * g.iw + (qlo - g.pw)) * pitch, static_cast<size_t>((qhi - qlo) * pitch) * sizeof(float));
      std::memset(tr + qhi * pitch, 0, static_cast<size_t>((p.tile_cols - qhi) * pitch) * sizeof(float));
    }
  }
}

// The lanes of output block ob that hold channels below c_out.
static typename VB::Mask lane_mask(const NchwcConvPlan& p, int64_t ob) {
  return VB::first(std::min<int64_t>(16, p.c_out - ob * 16));
}


// One task of the conv (nchwc_conv_task_avx512 and _avx2 in conv_nchwc.h).
static void conv_task(const NchwcConvPlan& p, const float* x, const float* z, float* y, int64_t t, float* tile) {
  const Conv2dGeometry& g = p.g;
  const int64_t row_tasks = (g.oh + p.rows_per_task - 1) / p.rows_per_task;
  const int64_t r0 = (t % row_tasks) * p.rows_per_task, r1 = std::min(g.oh, r0 + p.rows_per_task);
  const int64_t ob0 = (t / row_tasks) * p.ocb_per_task, ob1 = std::min(p.ocb, ob0 + p.ocb_per_task);
  const int64_t out_plane = p.pixels * 16;  // floats between output channel blocks
  // The activation in registers: none when the plan applies it per row (post_act).
  SgemmEpilogue sep;
  if (!p.post_act) sep.act = p.act;
  const EpilogueSimd<VB> ep(sep);
  const float* src = x;
  int64_t row_base = 0;  // the source row of output row r0 (its first tap row)
  if (p.tiled) {
    fill_tile(p, x, r0 * g.sh - g.ph, p.depthwise ? ob0 : 0, p.depthwise ? ob1 : p.icb, tile);
    src = tile;
  } else {
    row_base = r0 * g.sh;
  }
  const int64_t px = g.sw * p.src_pitch;  // floats between output pixels' bases
  if (p.depthwise) {
    // X read in place: per output row the kernel rows inside X; the pixels whose kernel
    // columns all fall inside X in micro-tiles, the others one by one, each skipping the
    // taps outside X (zero padding adds nothing: the sums are the reference's, in its
    // order).
    const int64_t taps = g.kh * g.kw;
    int64_t aoff[kNchwcDwMaxTaps];
    const int64_t ox_lo = std::min(g.ow, (g.pw + g.sw - 1) / g.sw);
    const int64_t right = g.iw - 1 - (g.kw - 1) * g.dw + g.pw;  // the last interior pixel's first column, times sw
    const int64_t ox_hi = right < 0 ? ox_lo : std::clamp(right / g.sw + 1, ox_lo, g.ow);
    const auto& dw_tiles = dw_table(p);
    DwArgs a;
    a.act = &ep;
    for (int64_t ob = ob0; ob < ob1; ++ob) {
      const float* xb = x + ob * p.src_plane;
      const float* wb = p.w.get() + ob * taps * 16;
      a.bias = p.bias.data() + ob * 16;
      a.mask = lane_mask(p, ob);
      const T bias = VB::load(a.bias);
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t iy0 = r * g.sh - g.ph;
        const int64_t ky0 = iy0 >= 0 ? 0 : (-iy0 + g.dh - 1) / g.dh;
        const int64_t ky1 = g.ih - 1 - iy0 < 0 ? 0 : std::min(g.kh, (g.ih - 1 - iy0) / g.dh + 1);
        const int64_t ybase = ob * out_plane + r * g.ow * 16;
        // Pixel ox alone: the taps inside X.
        auto pixel = [&](int64_t ox) {
          const int64_t ix0 = ox * g.sw - g.pw;
          T acc = bias;
          for (int64_t ky = ky0; ky < ky1; ++ky)
            for (int64_t kx = 0; kx < g.kw; ++kx) {
              const int64_t ix = ix0 + kx * g.dw;
              if (ix < 0 || ix >= g.iw) continue;
              acc = VB::fmadd(VB::load(xb + (iy0 + ky * g.dh) * p.src_row + ix * 16),
                                    VB::load(wb + (ky * g.kw + kx) * 16), acc);
            }
          if (z) acc = VB::add(acc, VB::load(z + ybase + ox * 16));
          VB::store(y + ybase + ox * 16, VB::keep(a.mask, activate(a.act, acc)));
        };
        for (int64_t ox = 0; ox < ox_lo; ++ox) pixel(ox);
        if (ky0 < ky1 && ox_lo < ox_hi) {
          int64_t t = 0;
          for (int64_t ky = ky0; ky < ky1; ++ky)
            for (int64_t kx = 0; kx < g.kw; ++kx) aoff[t++] = (ky - ky0) * g.dh * p.src_row + kx * g.dw * 16;
          a.aoff = aoff;
          a.taps = t;
          a.w = wb + ky0 * g.kw * 16;
          const float* arow = xb + (iy0 + ky0 * g.dh) * p.src_row;
          for (int64_t ox = ox_lo; ox < ox_hi; ox += kDwMaxPw) {
            const int pw = static_cast<int>(std::min<int64_t>(kDwMaxPw, ox_hi - ox));
            a.a = arow + (ox * g.sw - g.pw) * 16;
            a.y = y + ybase + ox * 16;
            a.z = z ? z + ybase + ox * 16 : nullptr;
            dw_tiles[static_cast<size_t>(pw - 1)](a);
          }
        } else {
          for (int64_t ox = ox_lo; ox < ox_hi; ++ox) pixel(ox);
        }
        for (int64_t ox = ox_hi; ox < g.ow; ++ox) pixel(ox);
        if (p.post_act) p.act.apply(y + ybase, g.ow * 16);
      }
    }
    return;
  }
  const TileTable& tiles = tile_table(p);
  // The last output block holds at most 8 channels (MobileNetV2's 144 -> 24): on a path
  // with a half-block type, its tiles compute those 8 lanes only (the other 8 are written
  // 0), half the FMAs of a full block.
  using Half = typename NchwcHalfOf<VB>::type;
  const bool half_last = !std::is_void_v<Half> && p.nob == 1 && p.c_out % 16 != 0 && p.c_out % 16 <= 8;
  TileArgs a;
  const int64_t groups = static_cast<int64_t>(p.goff.size());
  a.inner = p.inner;
  a.istride = p.istride;
  a.rs = px;
  a.wstride = groups * p.inner * 16;
  a.ystride = out_plane;
  a.act = &ep;
  a.partial_mask = lane_mask(p, p.ocb - 1);
  const bool partial_in = p.x_blocked && p.c_in % 16 != 0;
  // The tap groups of the last input channel block: the last kh x kw (conv_nchwc.cc's order).
  const int64_t partial_from = partial_in ? (p.icb - 1) * p.g.kh * p.g.kw : std::numeric_limits<int64_t>::max();
  a.partial_inner = partial_in ? static_cast<int>(p.c_in % 16) : 16;
  a.partial_from = partial_from;
  // The task's output pixels in micro-tiles of up to p.pw: along each row (a tile's pixels
  // px floats apart), or, when p.wrap_rows, along the task's pixels in order, a tile
  // wrapping from one row to the next (each pixel's offset in `off`).
  // The half block's tiles, activation and arguments (set up once; run_tile copies a's
  // geometry into them).
  using HK = NchwcKernels<std::conditional_t<std::is_void_v<Half>, VB, Half>>;
  using HalfVec = std::conditional_t<std::is_void_v<Half>, VB, Half>;
  const typename HK::TileTable* half_tiles = half_last ? &HK::tile_table(p) : nullptr;
  const EpilogueSimd<HalfVec> hep(sep);
  typename HK::TileArgs h;
  h.act = &hep;
  h.partial_mask = HalfVec::first(p.c_out % 16);
  // Runs the micro-tile of nob blocks and pw pixels whose first block is ob, with a.
  auto run_tile = [&](int nob, int pw, int64_t ob) {
    if (half_last && ob == p.ocb - 1) {
      static_cast<NchwcTileGeometry&>(h) = a;
      h.partial_b = 0;
      half_tiles->get(1, pw)(h);
      return;
    }
    tiles.get(nob, pw)(a);
  };
  const int64_t q0 = r0 * g.ow, q1 = (r1 - 1) * g.ow + (r1 == g.oh ? p.last_ow : g.ow);
  int64_t off[16];
  auto for_each_tile = [&](auto&& fn) {  // fn(source, pixel offsets or null, first pixel, pixels)
    if (p.wrap_rows) {
      for (int64_t q = q0; q < q1; q += p.pw) {
        const int pw = static_cast<int>(std::min<int64_t>(p.pw, q1 - q));
        for (int j = 0; j < pw; ++j) {
          const int64_t r = (q + j) / g.ow, ox = (q + j) % g.ow;
          off[j] = ((r - r0) * g.sh + row_base) * p.src_row + ox * px;
        }
        fn(src, off, q, pw);
      }
      return;
    }
    for (int64_t r = r0; r < r1; ++r) {
      const float* arow = src + ((r - r0) * g.sh + row_base) * p.src_row;
      const int64_t ow = r + 1 == g.oh ? p.last_ow : g.ow;
      for (int64_t ox = 0; ox < ow; ox += p.pw)
        fn(arow + ox * px, static_cast<const int64_t*>(nullptr), r * g.ow + ox, static_cast<int>(std::min<int64_t>(p.pw, ow - ox)));
    }
  };
  if (p.rows_outer) {
    a.goff = p.goff.data();
    a.groups = groups;
    a.accumulate = false;
    a.finish = true;
    for_each_tile([&](const float* at, const int64_t* pix, int64_t q, int pw) {
      a.a = at;
      a.pix = pix;
      for (int64_t ob = ob0; ob < ob1;) {
        const int nob = static_cast<int>(std::min<int64_t>(p.nob, ob1 - ob));
        // Consecutive full groups of nob blocks in one call (TileArgs::reps), up to a short
        // last group or a last block run by the half-block tiles.
        int64_t reps = 1;
        if (nob == p.nob && !(half_last && ob == p.ocb - 1)) {
          const int64_t end = half_last && ob1 == p.ocb ? ob1 - 1 : ob1;
          reps = std::max<int64_t>(1, (end - ob) / p.nob);
        }
        a.partial_b = ob + reps * nob == p.ocb && p.c_out % 16 ? nob - 1 : -1;
        const int64_t ybase = ob * out_plane + q * 16;
        a.bias = p.bias.data() + ob * 16;
        a.w = p.w.get() + ob * a.wstride;
        a.y = y + ybase;
        a.z = z ? z + ybase : nullptr;
        a.reps = reps;
        run_tile(nob, pw, ob);
        a.reps = 1;
        ob += reps * nob;
      }
    });
    if (p.post_act)
      for (int64_t ob = ob0; ob < ob1; ++ob) p.act.apply(y + ob * out_plane + q0 * 16, (q1 - q0) * 16);
    return;
  }
  // Blocks of kc_groups tap groups, so that their weights stay in L2 over the task's rows;
  // the partial sums go through Y.
  for (int64_t ob = ob0; ob < ob1; ob += p.nob) {
    const int nob = static_cast<int>(std::min<int64_t>(p.nob, ob1 - ob));
    a.partial_b = ob + nob == p.ocb && p.c_out % 16 ? nob - 1 : -1;
    a.bias = p.bias.data() + ob * 16;
    for (int64_t gb = 0; gb < groups; gb += p.kc_groups) {
      a.goff = p.goff.data() + gb;
      a.groups = std::min(p.kc_groups, groups - gb);
      a.partial_from = partial_in ? partial_from - gb : std::numeric_limits<int64_t>::max();
      a.w = p.w.get() + ob * a.wstride + gb * p.inner * 16;
      a.accumulate = gb > 0;
      a.finish = gb + a.groups == groups;
      for_each_tile([&](const float* at, const int64_t* pix, int64_t q, int pw) {
        a.a = at;
        a.pix = pix;
        a.y = y + ob * out_plane + q * 16;
        a.z = z ? z + ob * out_plane + q * 16 : nullptr;
        run_tile(nob, pw, ob);
      });
    }
    if (p.post_act)
      for (int b = 0; b < nob; ++b) p.act.apply(y + (ob + b) * out_plane + q0 * 16, (q1 - q0) * 16);
  }
}

// MaxPool of channel blocks [cb0, cb1) (nchwc_max_pool_avx512 in conv_nchwc.h).
static void max_pool(const Conv2dGeometry& g, const float* x, int64_t cb0, int64_t cb1, float* y) {
  const T lowest = VB::set1(std::numeric_limits<float>::lowest());
  // Output columns whose taps all lie inside the row: [ox_lo, ox_hi), read without checks.
  int64_t ox_lo = 0, ox_hi = g.ow;
  while (ox_lo < g.ow && ox_lo * g.sw - g.pw < 0) ++ox_lo;
  while (ox_hi > ox_lo && (ox_hi - 1) * g.sw - g.pw + (g.kw - 1) * g.dw >= g.iw) --ox_hi;
  const int64_t row = g.iw * 16, tap = g.dw * 16;
  for (int64_t cb = cb0; cb < cb1; ++cb) {
    const float* xb = x + cb * g.ih * g.iw * 16;
    float* yb = y + cb * g.oh * g.ow * 16;
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      // The kernel rows inside X: [ky0, ky1).
      const int64_t iy0 = oy * g.sh - g.ph;
      int64_t ky0 = 0, ky1 = g.kh;
      while (ky0 < ky1 && iy0 + ky0 * g.dh < 0) ++ky0;
      while (ky1 > ky0 && iy0 + (ky1 - 1) * g.dh >= g.ih) --ky1;
      float* yr = yb + oy * g.ow * 16;
      // MAXPS returns its second operand when either is NaN: a NaN tap is skipped, as the
      // reference's `x > best` skips it.
      auto border = [&](int64_t ox) {
        T best = lowest;
        for (int64_t ky = ky0; ky < ky1; ++ky) {
          const int64_t iy = iy0 + ky * g.dh;
          for (int64_t kx = 0; kx < g.kw; ++kx) {
            const int64_t ix = ox * g.sw - g.pw + kx * g.dw;
            if (ix < 0 || ix >= g.iw) continue;
            best = VB::max(VB::load(xb + (iy * g.iw + ix) * 16), best);
          }
        }
        VB::store(yr + ox * 16, best);
      };
      for (int64_t ox = 0; ox < ox_lo; ++ox) border(ox);
      const float* r0 = ky0 < ky1 ? xb + (iy0 + ky0 * g.dh) * row - g.pw * 16 : xb;  // (no rows: not read)
      for (int64_t ox = ox_lo; ox < ox_hi; ++ox) {
        const float* p = r0 + ox * g.sw * 16;
        T best = lowest;
        for (int64_t ky = ky0; ky < ky1; ++ky, p += g.dh * row)
          for (int64_t kx = 0; kx < g.kw; ++kx) best = VB::max(VB::load(p + kx * tap), best);
        VB::store(yr + ox * 16, best);
      }
      for (int64_t ox = std::max(ox_lo, ox_hi); ox < g.ow; ++ox) border(ox);
    }
  }
}

// GlobalAveragePool of channel blocks [cb0, cb1) (nchwc_global_average_pool_avx512).
static void global_average_pool(const float* x, int64_t c, int64_t hw, int64_t cb0, int64_t cb1, float* y) {
  const T inv = VB::set1(1.f / static_cast<float>(hw));
  for (int64_t cb = cb0; cb < cb1; ++cb) {
    const float* xb = x + cb * hw * 16;
    T s0 = VB::zero(), s1 = VB::zero();
    int64_t p = 0;
    for (; p + 2 <= hw; p += 2) {
      s0 = VB::add(s0, VB::load(xb + p * 16));
      s1 = VB::add(s1, VB::load(xb + (p + 1) * 16));
    }
    if (p < hw) s0 = VB::add(s0, VB::load(xb + p * 16));
    VB::store_first(y + cb * 16, VB::mul(VB::add(s0, s1), inv), std::min<int64_t>(16, c - cb * 16));
  }
}
};

}  // namespace tessera::cpu
