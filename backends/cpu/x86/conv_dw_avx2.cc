// The depthwise conv with the channels in the vector lanes on AVX2: 8 channels at a time,
// the AVX2 counterpart of depthwise_lanes_avx512 (conv_avx512.h has the math and the three
// steps: the 8 input planes transposed into a zero-padded tile T[r][q][8] by 8 x 8 register
// transposes; 8 outputs of a row at a time, one load and FMA per tap; transposed back with
// the residual and the clamp). The summation order per output is the reference's (bias, the
// taps row-major, then Z), so results match it exactly.
// Compiled with -mavx2 -mfma (this file only); called only when the CPU has AVX2 and FMA.
#include <immintrin.h>

#include <algorithm>
#include <limits>

#include "backends/cpu/x86/conv_avx512.h"
#include "backends/cpu/x86/simd_avx2.h"

namespace tessera::cpu {

namespace {

constexpr int kL = 8;  // channels per task: the lanes of a ymm


// N output vectors of one row, from ox0: acc[j] = bias + sum_taps w[t] * T[..].
template <int N>
inline void lanes_row(const Conv2dGeometry& g, const float* trow, int64_t tcols, const float* wl, __m256 vb, int64_t ox0,
                      float* out) {
  __m256 acc[N];
#pragma GCC unroll 8
  for (int j = 0; j < N; ++j) acc[j] = vb;
  for (int64_t kh = 0; kh < g.kh; ++kh) {
    const float* tr = trow + kh * g.dh * tcols * kL;
    for (int64_t kw = 0; kw < g.kw; ++kw) {
      const __m256 w = _mm256_loadu_ps(wl + (kh * g.kw + kw) * kL);
      const float* t0 = tr + (ox0 * g.sw + kw * g.dw) * kL;
#pragma GCC unroll 8
      for (int j = 0; j < N; ++j) acc[j] = _mm256_fmadd_ps(w, _mm256_load_ps(t0 + j * g.sw * kL), acc[j]);
    }
  }
#pragma GCC unroll 8
  for (int j = 0; j < N; ++j) _mm256_store_ps(out + (ox0 + j) * kL, acc[j]);
}

}  // namespace

size_t depthwise_lanes8_scratch_floats(const Conv2dGeometry& g) {
  const DepthwiseLanesShape sh = depthwise_lanes_shape(g);
  // T, then the outputs rounded up to whole groups of 8 positions.
  return static_cast<size_t>(kL * sh.tile_rows * sh.tile_cols + kL * ((g.oh * g.ow + kL - 1) / kL * kL));
}

void depthwise_lanes8_weights(const float* w, int64_t taps, int channels, float* wl) {
  for (int64_t t = 0; t < taps; ++t)
    for (int c = 0; c < kL; ++c) wl[t * kL + c] = c < channels ? w[c * taps + t] : 0.f;
}

void depthwise_lanes_avx2(const Conv2dGeometry& g, const float* x, const float* wl, const float* bias, const float* z,
                          float* y, int channels, float lo, float hi, float* scratch) {
  const DepthwiseLanesShape sh = depthwise_lanes_shape(g);
  const int64_t tr = sh.tile_rows, tc = sh.tile_cols, in_size = g.ih * g.iw, out_size = g.oh * g.ow;
  float* t = scratch;                  // tr x tc x 8
  float* o = scratch + kL * tr * tc;   // out_size (rounded up to 8) x 8
  const __m256 zero = _mm256_setzero_ps();
  // 1. T[r][q] = X[r - ph][q - pw] (8 channels), zero outside the plane.
  const int64_t x_lo = std::max<int64_t>(0, g.pw), x_hi = std::min<int64_t>(tc, g.pw + g.iw);  // T columns inside
  for (int64_t r = 0; r < tr; ++r) {
    float* trow = t + r * tc * kL;
    const int64_t iy = r - g.ph;
    if (iy < 0 || iy >= g.ih || x_lo >= x_hi) {
      for (int64_t q = 0; q < tc; ++q) _mm256_store_ps(trow + q * kL, zero);
      continue;
    }
    for (int64_t q = 0; q < x_lo; ++q) _mm256_store_ps(trow + q * kL, zero);
    for (int64_t q = x_hi; q < tc; ++q) _mm256_store_ps(trow + q * kL, zero);
    const float* xrow = x + iy * g.iw;
    for (int64_t q0 = x_lo; q0 < x_hi; q0 += kL) {
      const int64_t n = std::min<int64_t>(kL, x_hi - q0);
      const __m256i cols = first_lanes_avx2(n);
      __m256 v[kL];
#pragma GCC unroll 8
      for (int c = 0; c < kL; ++c)
        v[c] = c < channels ? (n == kL ? _mm256_loadu_ps(xrow + c * in_size + (q0 - g.pw))
                                       : _mm256_maskload_ps(xrow + c * in_size + (q0 - g.pw), cols))
                            : zero;
      transpose8_avx2(v);
      // Unrolled, so that v stays in registers.
#pragma GCC unroll 8
      for (int j = 0; j < kL; ++j)
        if (j < n) _mm256_store_ps(trow + (q0 + j) * kL, v[j]);
    }
  }
  // 2. The outputs, 8 of a row at a time.
  alignas(32) float bl[kL] = {};
  if (bias)
    for (int c = 0; c < channels; ++c) bl[c] = bias[c];
  const __m256 vb = _mm256_load_ps(bl);
  for (int64_t oy = 0; oy < g.oh; ++oy) {
    const float* trow = t + oy * g.sh * tc * kL;
    float* orow = o + oy * g.ow * kL;
    int64_t ox = 0;
    for (; ox + 8 <= g.ow; ox += 8) lanes_row<8>(g, trow, tc, wl, vb, ox, orow);
    for (; ox + 4 <= g.ow; ox += 4) lanes_row<4>(g, trow, tc, wl, vb, ox, orow);
    for (; ox < g.ow; ++ox) lanes_row<1>(g, trow, tc, wl, vb, ox, orow);
  }
  // 3. Back to the channel planes, 8 positions at a time: + Z, clamp. A partial group is
  // stored through a buffer (masked stores are slow on AMD CPUs).
  const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  const bool clamp = lo != -std::numeric_limits<float>::infinity() || hi != std::numeric_limits<float>::infinity();
  for (int64_t p0 = 0; p0 < out_size; p0 += kL) {
    const int64_t n = std::min<int64_t>(kL, out_size - p0);
    const __m256i pos = first_lanes_avx2(n);
    __m256 v[kL];
#pragma GCC unroll 8
    for (int j = 0; j < kL; ++j) v[j] = j < n ? _mm256_load_ps(o + (p0 + j) * kL) : zero;
    transpose8_avx2(v);
#pragma GCC unroll 8
    for (int c = 0; c < kL; ++c) {
      if (c >= channels) break;
      __m256 r = v[c];
      if (z) r = _mm256_add_ps(r, n == kL ? _mm256_loadu_ps(z + c * out_size + p0) : _mm256_maskload_ps(z + c * out_size + p0, pos));
      // max(lo, r) then min(hi, .): a NaN stays NaN, as in the plane kernel.
      if (clamp) r = _mm256_min_ps(vhi, _mm256_max_ps(vlo, r));
      float* dst = y + c * out_size + p0;
      if (n == kL) {
        _mm256_storeu_ps(dst, r);
      } else {
        alignas(32) float buf[kL];
        _mm256_store_ps(buf, r);
        for (int64_t j = 0; j < n; ++j) dst[j] = buf[j];
      }
    }
  }
}

}  // namespace tessera::cpu
