// ISA-templated bodies of pool_x86.h; included once by pool_avx512.cc and pool_avx2.cc
// after simd_x86.h. Algorithm: see pool_x86.h.
#include <cmath>
#include <limits>

#include "backends/cpu/x86/pool_x86.h"

namespace tessera::x86::TSR_X86_ISA {

namespace {

constexpr int kW = Vec::kW;

template <bool kMax>
inline Vec::T op(Vec::T a, Vec::T b) {
  if constexpr (kMax) return Vec::max(a, b);
  else return Vec::add(a, b);
}
template <bool kMax>
inline float op1(float a, float b) {
  if constexpr (kMax) return b > a ? b : a;
  else return a + b;
}

template <bool kMax>
void rows_impl(const Pool2dPlan& p, const float* x, float* y, float* t, int64_t begin, int64_t end) {
  const float fill = kMax ? -std::numeric_limits<float>::infinity() : 0.f;
  // The pads of t stay `fill`; each row writes only t[pl, pl + w).
  for (int64_t j = 0; j < p.pl; ++j) t[j] = fill;
  for (int64_t j = p.pl + p.w; j < p.row_len; ++j) t[j] = fill;
  const float inv_k = 1.f / static_cast<float>(p.kh * p.kw);
  for (int64_t r = begin; r < end; ++r) {
    const int64_t plane = r / p.oh, orow = r % p.oh;
    const float* xp = x + plane * p.h * p.w;
    float* yr = y + r * p.ow;
    const int64_t h0 = orow * p.sh - p.pt;
    const int64_t ih0 = h0 < 0 ? 0 : h0, ih1 = h0 + p.kh > p.h ? p.h : h0 + p.kh;  // ih1 > ih0 (plan check)
    // Vertical: t[pl + j] = op_{ih in [ih0, ih1)} X[ih, j].
    float* tc = t + p.pl;
    int64_t j = 0;
    for (; j + kW <= p.w; j += kW) {
      Vec::T v = Vec::load(xp + ih0 * p.w + j);
      for (int64_t ih = ih0 + 1; ih < ih1; ++ih) v = op<kMax>(v, Vec::load(xp + ih * p.w + j));
      Vec::store(tc + j, v);
    }
    if (j < p.w) {
      const int64_t n = p.w - j;
      Vec::T v = Vec::load_n(xp + ih0 * p.w + j, n, fill);
      for (int64_t ih = ih0 + 1; ih < ih1; ++ih) v = op<kMax>(v, Vec::load_n(xp + ih * p.w + j, n, fill));
      Vec::store_n(tc + j, v, n);
    }
    // Horizontal: Y[oh, ow] = op_kw t[ow * sw + kw], then the average's 1 / count.
    const float rs = kMax ? 1.f : (p.count_include_pad ? inv_k : p.row_inv[orow]);
    const Vec::T rsv = Vec::set1(rs);
    int64_t o = 0;
    if (p.sw == 1) {
      for (; o + kW <= p.ow; o += kW) {
        Vec::T v = Vec::load(t + o);
        for (int64_t k = 1; k < p.kw; ++k) v = op<kMax>(v, Vec::load(t + o + k));
        if (!kMax) v = Vec::mul(Vec::mul(v, rsv), p.count_include_pad ? Vec::set1(1.f) : Vec::load(p.col_inv + o));
        Vec::store(yr + o, v);
      }
    } else if (p.sw == 2) {
      for (; o + kW <= p.ow; o += kW) {
        const float* tb = t + 2 * o;
        Vec::T v = Vec::even(Vec::load(tb), Vec::load(tb + kW));
        for (int64_t k = 1; k < p.kw; ++k) v = op<kMax>(v, Vec::even(Vec::load(tb + k), Vec::load(tb + k + kW)));
        if (!kMax) v = Vec::mul(Vec::mul(v, rsv), p.count_include_pad ? Vec::set1(1.f) : Vec::load(p.col_inv + o));
        Vec::store(yr + o, v);
      }
    }
    for (; o < p.ow; ++o) {
      const float* tb = t + o * p.sw;
      float v = tb[0];
      for (int64_t k = 1; k < p.kw; ++k) v = op1<kMax>(v, tb[k]);
      if (!kMax) v = v * rs * (p.count_include_pad ? 1.f : p.col_inv[o]);
      yr[o] = v;
    }
  }
}

}  // namespace

void pool2d_rows(const Pool2dPlan& p, const float* x, float* y, float* t, int64_t begin, int64_t end) {
  if (p.is_max) rows_impl<true>(p, x, y, t, begin, end);
  else rows_impl<false>(p, x, y, t, begin, end);
}

void reduce_rows(RowReduce op, const float* x, float* y, int64_t size, int64_t begin, int64_t end) {
  const bool is_max = op == RowReduce::kMax;
  const float div = op == RowReduce::kMean ? static_cast<float>(size) : 1.f;
  for (int64_t i = begin; i < end; ++i) {
    const float* xp = x + i * size;
    // Two accumulators per lane hide the add latency; the tail's missing lanes hold the
    // neutral element (0, or xp[0] for max).
    const float fill = is_max ? xp[0] : 0.f;
    Vec::T a0 = Vec::set1(fill), a1 = a0;
    int64_t j = 0;
    if (is_max) {
      for (; j + 2 * kW <= size; j += 2 * kW) {
        a0 = Vec::max(a0, Vec::load(xp + j));
        a1 = Vec::max(a1, Vec::load(xp + j + kW));
      }
      for (; j + kW <= size; j += kW) a0 = Vec::max(a0, Vec::load(xp + j));
      if (j < size) a1 = Vec::max(a1, Vec::load_n(xp + j, size - j, fill));
      y[i] = Vec::reduce_max(Vec::max(a0, a1));
    } else {
      for (; j + 2 * kW <= size; j += 2 * kW) {
        a0 = Vec::add(a0, Vec::load(xp + j));
        a1 = Vec::add(a1, Vec::load(xp + j + kW));
      }
      for (; j + kW <= size; j += kW) a0 = Vec::add(a0, Vec::load(xp + j));
      if (j < size) a1 = Vec::add(a1, Vec::load_n(xp + j, size - j, 0.f));
      y[i] = Vec::reduce_add(Vec::add(a0, a1)) / div;
    }
  }
}

}  // namespace tessera::x86::TSR_X86_ISA
