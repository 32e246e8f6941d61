// AVX-512 pieces of the 2-D convolution (conv_avx512.h); compiled with this ISA's flags
// (CMakeLists.txt), called only when the CPU has it.
//
// Depthwise plane:
// Each output row is cut into blocks of 16 columns, one zmm register each, and tiles of R
// rows x NB blocks (6 to 8 independent FMA chains; the shape per geometry, DepthwisePlan)
// are computed together. A tap's 16 (stride 1) or 32 (stride 2, then the even lanes) input
// floats are read with a masked load whose mask holds the lanes inside the input row:
// masked-off lanes read zero and do not touch memory (AVX-512 suppresses faults on them),
// so the zero padding along W costs nothing and the input plane is read in place, with no
// padded copy; a row in the padding along H reads a row of zeros. Per block and kernel
// column the mask is looked up once for all kernel rows. Bias, the fused residual and a
// Relu/Clip clamp are applied in registers, and the block is stored with a masked store
// straight into the output.

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "backends/cpu/x86/conv_avx512.h"
#include "backends/cpu/x86/transpose16_avx512.h"

namespace tessera::cpu {

namespace {

// Lanes [lo, hi) of a 16- or 32-lane mask (empty when hi <= lo).
inline uint32_t lane_range(int64_t lo, int64_t hi, int lanes) {
  lo = std::max<int64_t>(lo, 0);
  hi = std::min<int64_t>(hi, lanes);
  if (hi <= lo) return 0;
  const uint64_t upto_hi = hi >= 64 ? ~0ull : (1ull << hi) - 1, upto_lo = (1ull << lo) - 1;
  return static_cast<uint32_t>(upto_hi & ~upto_lo);
}

// The 16 input floats of one tap, lane e = row[c + S e] where the mask `m` (lane_range)
// lets it, zero elsewhere; masked-off lanes do not touch memory. Stride 1: one masked load
// (mask bits 0-15). Stride 2: two masked loads of 16 (bits 0-15, 16-31) and the even lanes
// of the pair picked by `even` (0, 2, ..., 30).
template <int S>
inline __m512 load_tap(const float* row, int64_t c, uint32_t m, __m512i even) {
  if constexpr (S == 1) {
    return _mm512_maskz_loadu_ps(static_cast<__mmask16>(m), row + c);
  } else {
    const __m512 x0 = _mm512_maskz_loadu_ps(static_cast<__mmask16>(m), row + c);
    const __m512 x1 = _mm512_maskz_loadu_ps(static_cast<__mmask16>(m >> 16), row + c + 16);
    return _mm512_permutex2var_ps(x0, even, x1);
  }
}

}  // namespace

DepthwisePlan make_depthwise_plan(const Conv2dGeometry& g) {
  DepthwisePlan p;
  p.g = g;
  p.blocks = (g.ow + 15) / 16;
  // Tile shapes with 6 to 8 accumulators (see plane()); the one computing the fewest
  // outputs in all (partial tiles included), the first of equals.
  static constexpr int kShapes[][2] = {{4, 2}, {2, 4}, {1, 8}, {3, 2}, {2, 3}, {8, 1}};
  int64_t best = -1;
  for (const auto& sh : kShapes) {
    const int64_t work = (g.oh + sh[0] - 1) / sh[0] * sh[0] * ((p.blocks + sh[1] - 1) / sh[1] * sh[1]);
    if (best < 0 || work < best) best = work, p.tile_rows = sh[0], p.tile_blocks = sh[1];
  }
  const int64_t padded = (p.blocks + p.tile_blocks - 1) / p.tile_blocks * p.tile_blocks;
  // A row of zeros that every tap of a row in the padding may read (c >= -margin, up to
  // 32 floats past iw).
  p.zeros.assign(static_cast<size_t>(g.iw + 2 * kDepthwiseAvx512ZeroMargin), 0.f);
  const int64_t s = g.sw;
  for (int64_t b = 0; b < padded; ++b) {
    const int64_t n = std::max<int64_t>(0, std::min<int64_t>(16, g.ow - b * 16));
    p.store_mask.push_back(static_cast<uint16_t>(lane_range(0, n, 16)));
    for (int64_t kw = 0; kw < g.kw; ++kw) {
      const int64_t c = b * 16 * s + kw * g.dw - g.pw;
      p.base.push_back(c);
      // Lane e reads column c + e: inside the row, and (stride 2) an even lane below 2n.
      p.mask.push_back(n == 0 ? 0u : lane_range(-c, std::min(g.iw - c, s == 1 ? n : 2 * n - 1), static_cast<int>(16 * s)));
    }
  }
  return p;
}

namespace {

// K: the kernel's side when it is a compile-time K x K (3: MobileNet's, every loop over the
// taps unrolled and the 9 weights kept in registers; a 14 x 14 plane went from ~500 to
// ~250 cycles), 0 for any kh x kw.
template <int S, int R, int NB, int K>
void plane(const DepthwisePlan& p, const float* xp, const float* wp, float bias, const float* zp, float* yp, float lo,
           float hi) {
  const Conv2dGeometry& g = p.g;
  const int64_t g_kh = K ? K : g.kh, g_kw = K ? K : g.kw;
  const int64_t taps = g_kh * g_kw;
  __m512 w[kDepthwiseAvx512MaxTaps];
#pragma GCC unroll 16
  for (int64_t t = 0; t < taps; ++t) w[t] = _mm512_set1_ps(wp[t]);
  const __m512 vb = _mm512_set1_ps(bias), vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  const bool clamp = lo != -std::numeric_limits<float>::infinity() || hi != std::numeric_limits<float>::infinity();
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const int64_t* base = p.base.data();
  const uint32_t* mask = p.mask.data();
  const uint16_t* store_mask = p.store_mask.data();
  const float* zero_row = p.zeros.data() + kDepthwiseAvx512ZeroMargin;
  for (int64_t oy0 = 0; oy0 < g.oh; oy0 += R) {
    const int rows = static_cast<int>(std::min<int64_t>(R, g.oh - oy0));
    for (int64_t b0 = 0; b0 < p.blocks; b0 += NB) {
      // Branch-free over the tile, so that the R x NB accumulators stay in registers (a
      // padding block reads with an empty mask: zeros, no memory touched).
      __m512 acc[R][NB];
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
        for (int j = 0; j < NB; ++j) acc[r][j] = vb;
      // Per kernel row and tile row, the input row, or a row of zeros in the padding and
      // past the plane's end; then per block and kernel column one table lookup, and the
      // taps over (kh, r) share its mask.
      const float* rows_of[kDepthwiseAvx512MaxKh][R];
#pragma GCC unroll 16
      for (int64_t kh = 0; kh < g_kh; ++kh)
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) {
          const int64_t iy = (oy0 + r) * g.sh + kh * g.dh - g.ph;
          rows_of[kh][r] = r < rows && iy >= 0 && iy < g.ih ? xp + iy * g.iw : zero_row;
        }
#pragma GCC unroll 8
      for (int j = 0; j < NB; ++j)
#pragma GCC unroll 16
        for (int64_t kw = 0; kw < g_kw; ++kw) {
          const int64_t c = base[(b0 + j) * g_kw + kw];
          const uint32_t m = mask[(b0 + j) * g_kw + kw];
#pragma GCC unroll 16
          for (int64_t kh = 0; kh < g_kh; ++kh) {
            const __m512 wt = w[kh * g_kw + kw];
#pragma GCC unroll 8
            for (int r = 0; r < R; ++r) acc[r][j] = _mm512_fmadd_ps(wt, load_tap<S>(rows_of[kh][r], c, m, even), acc[r][j]);
          }
        }
      for (int r = 0; r < rows; ++r)
#pragma GCC unroll 8
        for (int j = 0; j < NB; ++j) {
          const int64_t b = b0 + j;
          float* out = yp + (oy0 + r) * g.ow + b * 16;
          __m512 v = acc[r][j];
          if (zp) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(store_mask[b], zp + (oy0 + r) * g.ow + b * 16));
          // max(lo, v) then min(hi, .): a NaN v stays NaN (MAXPS/MINPS return the second operand).
          if (clamp) v = _mm512_min_ps(vhi, _mm512_max_ps(vlo, v));
          _mm512_mask_storeu_ps(out, store_mask[b], v);
        }
    }
  }
}

template <int S, int K>
void plane_shaped(const DepthwisePlan& p, const float* xp, const float* wp, float bias, const float* zp, float* yp,
                  float lo, float hi) {
  switch (p.tile_rows * 16 + p.tile_blocks) {
    case 4 * 16 + 2: return plane<S, 4, 2, K>(p, xp, wp, bias, zp, yp, lo, hi);
    case 2 * 16 + 4: return plane<S, 2, 4, K>(p, xp, wp, bias, zp, yp, lo, hi);
    case 1 * 16 + 8: return plane<S, 1, 8, K>(p, xp, wp, bias, zp, yp, lo, hi);
    case 3 * 16 + 2: return plane<S, 3, 2, K>(p, xp, wp, bias, zp, yp, lo, hi);
    case 2 * 16 + 3: return plane<S, 2, 3, K>(p, xp, wp, bias, zp, yp, lo, hi);
    default: return plane<S, 8, 1, K>(p, xp, wp, bias, zp, yp, lo, hi);
  }
}

template <int S>
void plane_tiled(const DepthwisePlan& p, const float* xp, const float* wp, float bias, const float* zp, float* yp, float lo,
                 float hi) {
  if (p.g.kh == 3 && p.g.kw == 3) return plane_shaped<S, 3>(p, xp, wp, bias, zp, yp, lo, hi);
  plane_shaped<S, 0>(p, xp, wp, bias, zp, yp, lo, hi);
}

}  // namespace

void depthwise_plane_avx512(const DepthwisePlan& p, const float* xp, const float* wp, float bias, const float* zp,
                            float* yp, float lo, float hi) {
  if (p.g.sw == 1) plane_tiled<1>(p, xp, wp, bias, zp, yp, lo, hi);
  else plane_tiled<2>(p, xp, wp, bias, zp, yp, lo, hi);
}

namespace {

template <int S>
void im2col_row(const Conv2dGeometry& g, const float* xc, int64_t ky, int64_t kx, int64_t j0, int64_t nb, float* dst) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512 zero = _mm512_setzero_ps();
  const int64_t c = kx * g.dw - g.pw;  // input column of output column 0
  int64_t oy = j0 / g.ow, a = j0 % g.ow, j = 0;
  while (j < nb) {
    const int64_t e = std::min(g.ow, a + (nb - j));  // this run: output columns [a, e)
    float* d = dst + j - a;                            // d[ox]
    const int64_t iy = oy * g.sh - g.ph + ky * g.dh;
    if (iy < 0 || iy >= g.ih) {
      for (int64_t ox = a; ox < e; ox += 16) _mm512_storeu_ps(d + ox, zero);
    } else {
      const float* row = xc + iy * g.iw;
      for (int64_t ox = a; ox < e; ox += 16) {
        const int64_t col = ox * S + c;  // input column of lane 0
        // Lanes inside the row and (stride 2: even lanes) below the run's end.
        const uint32_t m = lane_range(-col, std::min(g.iw - col, S == 1 ? e - ox : 2 * (e - ox) - 1), 16 * S);
        _mm512_storeu_ps(d + ox, load_tap<S>(row, col, m, even));
      }
    }
    j += e - a;
    a = 0;
    ++oy;
  }
}

}  // namespace

void im2col_row_avx512(const Conv2dGeometry& g, const float* xc, int64_t ky, int64_t kx, int64_t j0, int64_t nb,
                       float* dst) {
  if (g.sw == 1) im2col_row<1>(g, xc, ky, kx, j0, nb, dst);
  else im2col_row<2>(g, xc, ky, kx, j0, nb, dst);
}

void im2col_packed_a_avx512(const Conv2dGeometry& g, const float* x, int64_t channels, int64_t images,
                            int64_t image_stride, int mr, int64_t kc, float* dst) {
  const int64_t positions = g.oh * g.ow, m = images * positions, taps = g.kh * g.kw, k = channels * taps;
  const int64_t in_size = g.ih * g.iw, m_pad = (m + mr - 1) / mr * mr;
  const __mmask16 panel_mask = static_cast<__mmask16>((1u << mr) - 1u);
  const __m512i zero_i = _mm512_setzero_si512(), ih = _mm512_set1_epi32(static_cast<int32_t>(g.ih)),
                iw = _mm512_set1_epi32(static_cast<int32_t>(g.iw));
  // Per tap of the panel: the lanes' element offsets within a channel plane and the lanes
  // inside the plane.
  __m512i tap_idx[kIm2colPackedMaxTaps];
  __mmask16 tap_mask[kIm2colPackedMaxTaps];
  for (int64_t j0 = 0; j0 < m; j0 += mr) {
    alignas(64) int32_t iy0[16] = {}, ix0[16] = {}, img[16] = {};
    __mmask16 rows = 0;
    for (int r = 0; r < mr && j0 + r < m; ++r) {
      const int64_t j = j0 + r, i = j / positions, q = j % positions;
      iy0[r] = static_cast<int32_t>(q / g.ow * g.sh - g.ph);
      ix0[r] = static_cast<int32_t>(q % g.ow * g.sw - g.pw);
      img[r] = static_cast<int32_t>(i * image_stride);
      rows = static_cast<__mmask16>(rows | (1u << r));
    }
    const __m512i vy0 = _mm512_load_si512(iy0), vx0 = _mm512_load_si512(ix0), vimg = _mm512_load_si512(img);
    for (int64_t ky = 0; ky < g.kh; ++ky) {
      const __m512i iy = _mm512_add_epi32(vy0, _mm512_set1_epi32(static_cast<int32_t>(ky * g.dh)));
      const __mmask16 my = _mm512_mask_cmpge_epi32_mask(rows, iy, zero_i) & _mm512_cmplt_epi32_mask(iy, ih);
      for (int64_t kx = 0; kx < g.kw; ++kx) {
        const __m512i ix = _mm512_add_epi32(vx0, _mm512_set1_epi32(static_cast<int32_t>(kx * g.dw)));
        const int64_t t = ky * g.kw + kx;
        tap_mask[t] = _mm512_mask_cmpge_epi32_mask(my, ix, zero_i) & _mm512_cmplt_epi32_mask(ix, iw);
        tap_idx[t] = _mm512_add_epi32(vimg, _mm512_add_epi32(_mm512_mullo_epi32(iy, iw), ix));
      }
    }
    // Column p = (c, tap) of the panel: in KC block pc = p - p % kc, whose panels are
    // kc_block x MR floats each (sgemm_pack_a's layout).
    for (int64_t pc = 0; pc < k; pc += kc) {
      const int64_t kcb = std::min(kc, k - pc);
      float* d = dst + pc * m_pad + j0 * kcb;
      int64_t c = pc / taps, t = pc % taps;
      for (int64_t p = 0; p < kcb; ++p, d += mr) {
        const __m512 v = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), tap_mask[t],
                                                  tap_idx[t], x + c * in_size, 4);
        _mm512_mask_storeu_ps(d, panel_mask, v);
        if (++t == taps) t = 0, ++c;
      }
    }
  }
}

DepthwiseLanesShape depthwise_lanes_shape(const Conv2dGeometry& g) {
  DepthwiseLanesShape sh;
  sh.tile_rows = (g.oh - 1) * g.sh + (g.kh - 1) * g.dh + 1;
  sh.tile_cols = (g.ow - 1) * g.sw + (g.kw - 1) * g.dw + 1;
  return sh;
}

size_t depthwise_lanes_scratch_floats(const Conv2dGeometry& g) {
  const DepthwiseLanesShape sh = depthwise_lanes_shape(g);
  // T, then the outputs rounded up to whole groups of 16 positions.
  return static_cast<size_t>(16 * sh.tile_rows * sh.tile_cols + 16 * ((g.oh * g.ow + 15) / 16 * 16));
}

namespace {

// N output vectors of one row, from ox0: acc[j] = bias + sum_taps w[t] * T[..].
template <int N>
inline void lanes_row(const Conv2dGeometry& g, const float* trow, int64_t tcols, const __m512* wt, __m512 vb, int64_t ox0,
                      float* out) {
  __m512 acc[N];
#pragma GCC unroll 8
  for (int j = 0; j < N; ++j) acc[j] = vb;
  for (int64_t kh = 0; kh < g.kh; ++kh) {
    const float* tr = trow + kh * g.dh * tcols * 16;
    for (int64_t kw = 0; kw < g.kw; ++kw) {
      const __m512 w = wt[kh * g.kw + kw];
      const float* t0 = tr + (ox0 * g.sw + kw * g.dw) * 16;
#pragma GCC unroll 8
      for (int j = 0; j < N; ++j) acc[j] = _mm512_fmadd_ps(w, _mm512_load_ps(t0 + j * g.sw * 16), acc[j]);
    }
  }
#pragma GCC unroll 8
  for (int j = 0; j < N; ++j) _mm512_store_ps(out + (ox0 + j) * 16, acc[j]);
}

}  // namespace

void depthwise_lanes_weights(const float* w, int64_t taps, int channels, float* wl) {
  for (int64_t t = 0; t < taps; ++t)
    for (int c = 0; c < 16; ++c) wl[t * 16 + c] = c < channels ? w[c * taps + t] : 0.f;
}

void depthwise_lanes_avx512(const Conv2dGeometry& g, const float* x, const float* wl, const float* bias, const float* z,
                            float* y, int channels, float lo, float hi, float* scratch) {
  const DepthwiseLanesShape sh = depthwise_lanes_shape(g);
  const int64_t tr = sh.tile_rows, tc = sh.tile_cols, in_size = g.ih * g.iw, out_size = g.oh * g.ow;
  const int64_t taps = g.kh * g.kw;
  float* t = scratch;                  // tr x tc x 16
  float* o = scratch + 16 * tr * tc;   // out_size (rounded up to 16) x 16
  const __m512 zero = _mm512_setzero_ps();
  // 1. T[r][q] = X[r - ph][q - pw] (16 channels), zero outside the plane.
  const int64_t x_lo = std::max<int64_t>(0, g.pw), x_hi = std::min<int64_t>(tc, g.pw + g.iw);  // T columns inside
  for (int64_t r = 0; r < tr; ++r) {
    float* trow = t + r * tc * 16;
    const int64_t iy = r - g.ph;
    if (iy < 0 || iy >= g.ih || x_lo >= x_hi) {
      for (int64_t q = 0; q < tc; ++q) _mm512_store_ps(trow + q * 16, zero);
      continue;
    }
    for (int64_t q = 0; q < x_lo; ++q) _mm512_store_ps(trow + q * 16, zero);
    for (int64_t q = x_hi; q < tc; ++q) _mm512_store_ps(trow + q * 16, zero);
    const float* xrow = x + iy * g.iw;
    for (int64_t q0 = x_lo; q0 < x_hi; q0 += 16) {
      const int64_t n = std::min<int64_t>(16, x_hi - q0);
      const __mmask16 cols = static_cast<__mmask16>((1u << n) - 1u);
      __m512 v[16];
#pragma GCC unroll 16
      for (int c = 0; c < 16; ++c) v[c] = c < channels ? _mm512_maskz_loadu_ps(cols, xrow + c * in_size + (q0 - g.pw)) : zero;
      transpose16_avx512(v);
      // Unrolled, so that v stays in registers (a loop to n became a memcpy from the stack).
#pragma GCC unroll 16
      for (int j = 0; j < 16; ++j)
        if (j < n) _mm512_store_ps(trow + (q0 + j) * 16, v[j]);
    }
  }
  // 2. The outputs, 8 of a row at a time.
  __m512 wt[kDepthwiseAvx512MaxTaps];
  for (int64_t k = 0; k < taps; ++k) wt[k] = _mm512_loadu_ps(wl + k * 16);
  alignas(64) float bl[16] = {};
  if (bias)
    for (int c = 0; c < channels; ++c) bl[c] = bias[c];
  const __m512 vb = _mm512_load_ps(bl);
  for (int64_t oy = 0; oy < g.oh; ++oy) {
    const float* trow = t + oy * g.sh * tc * 16;
    float* orow = o + oy * g.ow * 16;
    int64_t ox = 0;
    for (; ox + 8 <= g.ow; ox += 8) lanes_row<8>(g, trow, tc, wt, vb, ox, orow);
    for (; ox + 4 <= g.ow; ox += 4) lanes_row<4>(g, trow, tc, wt, vb, ox, orow);
    for (; ox < g.ow; ++ox) lanes_row<1>(g, trow, tc, wt, vb, ox, orow);
  }
  // 3. Back to the channel planes, 16 positions at a time: + Z, clamp.
  const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  const bool clamp = lo != -std::numeric_limits<float>::infinity() || hi != std::numeric_limits<float>::infinity();
  for (int64_t p0 = 0; p0 < out_size; p0 += 16) {
    const int64_t n = std::min<int64_t>(16, out_size - p0);
    const __mmask16 pos = static_cast<__mmask16>((1u << n) - 1u);
    __m512 v[16];
#pragma GCC unroll 16
    for (int j = 0; j < 16; ++j) v[j] = j < n ? _mm512_load_ps(o + (p0 + j) * 16) : zero;
    transpose16_avx512(v);
#pragma GCC unroll 16
    for (int c = 0; c < 16; ++c) {
      if (c >= channels) break;
      __m512 r = v[c];
      if (z) r = _mm512_add_ps(r, _mm512_maskz_loadu_ps(pos, z + c * out_size + p0));
      // max(lo, r) then min(hi, .): a NaN stays NaN, as in the plane kernel.
      if (clamp) r = _mm512_min_ps(vhi, _mm512_max_ps(vlo, r));
      _mm512_mask_storeu_ps(y + c * out_size + p0, pos, r);
    }
  }
}

}  // namespace tessera::cpu
