// ISA-templated bodies of softmax_x86.h; included once by softmax_avx512.cc and
// softmax_avx2.cc after simd_x86.h.
#include <cmath>
#include <limits>

#include "backends/cpu/x86/softmax_x86.h"
#include "backends/cpu/x86/vec_math.h"

namespace tessera::x86::TSR_X86_ISA {

namespace {

constexpr int kW = Vec::kW;
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// One row of n contiguous floats.
void softmax_row(const float* x, float* y, int64_t n, bool log) {
  // m = max_a x[a]
  Vec::T m0 = Vec::set1(kNegInf), m1 = m0;
  int64_t j = 0;
  for (; j + 2 * kW <= n; j += 2 * kW) {
    m0 = Vec::max(m0, Vec::load(x + j));
    m1 = Vec::max(m1, Vec::load(x + j + kW));
  }
  for (; j + kW <= n; j += kW) m0 = Vec::max(m0, Vec::load(x + j));
  if (j < n) m1 = Vec::max(m1, Vec::load_n(x + j, n - j, kNegInf));
  const float m = Vec::reduce_max(Vec::max(m0, m1));
  const Vec::T mv = Vec::set1(m);
  // s = sum_a exp(x[a] - m); softmax keeps exp(x[a] - m) in y for the last pass.
  Vec::T s0 = Vec::zero(), s1 = Vec::zero();
  for (j = 0; j + 2 * kW <= n; j += 2 * kW) {
    const Vec::T e0 = vec_exp(Vec::sub(Vec::load(x + j), mv));
    const Vec::T e1 = vec_exp(Vec::sub(Vec::load(x + j + kW), mv));
    if (!log) {
      Vec::store(y + j, e0);
      Vec::store(y + j + kW, e1);
    }
    s0 = Vec::add(s0, e0);
    s1 = Vec::add(s1, e1);
  }
  for (; j + kW <= n; j += kW) {
    const Vec::T e = vec_exp(Vec::sub(Vec::load(x + j), mv));
    if (!log) Vec::store(y + j, e);
    s0 = Vec::add(s0, e);
  }
  if (j < n) {
    // Missing lanes load -inf: exp(-inf - m) = 0 adds nothing.
    const Vec::T e = vec_exp(Vec::sub(Vec::load_n(x + j, n - j, kNegInf), mv));
    if (!log) Vec::store_n(y + j, e, n - j);
    s1 = Vec::add(s1, e);
  }
  const float s = Vec::reduce_add(Vec::add(s0, s1));
  if (!log) {
    // y = exp(x - m) * (1 / s)
    const Vec::T inv = Vec::set1(1.f / s);
    for (j = 0; j + kW <= n; j += kW) Vec::store(y + j, Vec::mul(Vec::load(y + j), inv));
    if (j < n) Vec::store_n(y + j, Vec::mul(Vec::load_n(y + j, n - j, 0.f), inv), n - j);
  } else {
    // y = (x - m) - log(s)
    const Vec::T ls = Vec::set1(std::log(s));
    for (j = 0; j + kW <= n; j += kW) Vec::store(y + j, Vec::sub(Vec::sub(Vec::load(x + j), mv), ls));
    if (j < n) Vec::store_n(y + j, Vec::sub(Vec::sub(Vec::load_n(x + j, n - j, 0.f), mv), ls), n - j);
  }
}

// One [n, inner] block, columns [c, c + cnt) (cnt <= kW), reducing down the n rows.
void softmax_columns(const float* x, float* y, int64_t n, int64_t inner, int64_t c, int64_t cnt, bool log) {
  auto ld = [&](const float* p) { return cnt == kW ? Vec::load(p) : Vec::load_n(p, cnt, 0.f); };
  auto st = [&](float* p, Vec::T v) {
    if (cnt == kW) Vec::store(p, v);
    else Vec::store_n(p, v, cnt);
  };
  Vec::T m = Vec::set1(kNegInf);
  for (int64_t a = 0; a < n; ++a) m = Vec::max(m, ld(x + a * inner + c));
  Vec::T s = Vec::zero();
  for (int64_t a = 0; a < n; ++a) {
    const Vec::T e = vec_exp(Vec::sub(ld(x + a * inner + c), m));
    if (!log) st(y + a * inner + c, e);
    s = Vec::add(s, e);
  }
  if (!log) {
    const Vec::T inv = Vec::div(Vec::set1(1.f), s);
    for (int64_t a = 0; a < n; ++a) st(y + a * inner + c, Vec::mul(ld(y + a * inner + c), inv));
  } else {
    alignas(64) float sl[kW];
    Vec::store(sl, s);
    for (int i = 0; i < kW; ++i) sl[i] = std::log(sl[i]);
    const Vec::T ls = Vec::load(sl);
    for (int64_t a = 0; a < n; ++a) st(y + a * inner + c, Vec::sub(Vec::sub(ld(x + a * inner + c), m), ls));
  }
}

}  // namespace

void exp_array(const float* x, float* y, int64_t n) {
  int64_t j = 0;
  for (; j + kW <= n; j += kW) Vec::store(y + j, vec_exp(Vec::load(x + j)));
  if (j < n) Vec::store_n(y + j, vec_exp(Vec::load_n(x + j, n - j, 0.f)), n - j);
}

void softmax(const SoftmaxArgs& a, int64_t begin, int64_t end) {
  const int64_t block = a.n * a.inner;
  for (int64_t o = begin; o < end; ++o) {
    const float* x = a.x + o * block;
    float* y = a.y + o * block;
    if (a.inner == 1) {
      softmax_row(x, y, a.n, a.log);
    } else {
      for (int64_t c = 0; c < a.inner; c += kW)
        softmax_columns(x, y, a.n, a.inner, c, a.inner - c < kW ? a.inner - c : kW, a.log);
    }
  }
}

void layer_norm(const LayerNormArgs& a, int64_t begin, int64_t end) {
  const int64_t n = a.n;
  const float inv_n = 1.f / static_cast<float>(n);
  for (int64_t r = begin; r < end; ++r) {
    const float* x = a.x + r * n;
    float* y = a.y + r * n;
    // mean = sum(x) / n
    Vec::T s0 = Vec::zero(), s1 = Vec::zero();
    int64_t j = 0;
    for (; j + 2 * kW <= n; j += 2 * kW) {
      s0 = Vec::add(s0, Vec::load(x + j));
      s1 = Vec::add(s1, Vec::load(x + j + kW));
    }
    for (; j + kW <= n; j += kW) s0 = Vec::add(s0, Vec::load(x + j));
    if (j < n) s1 = Vec::add(s1, Vec::load_n(x + j, n - j, 0.f));
    const float mean = Vec::reduce_add(Vec::add(s0, s1)) * inv_n;
    const Vec::T mv = Vec::set1(mean);
    // var = sum((x - mean)^2) / n; the tail's missing lanes load mean, adding 0.
    s0 = s1 = Vec::zero();
    for (j = 0; j + 2 * kW <= n; j += 2 * kW) {
      const Vec::T d0 = Vec::sub(Vec::load(x + j), mv), d1 = Vec::sub(Vec::load(x + j + kW), mv);
      s0 = Vec::fmadd(d0, d0, s0);
      s1 = Vec::fmadd(d1, d1, s1);
    }
    for (; j + kW <= n; j += kW) {
      const Vec::T d = Vec::sub(Vec::load(x + j), mv);
      s0 = Vec::fmadd(d, d, s0);
    }
    if (j < n) {
      const Vec::T d = Vec::sub(Vec::load_n(x + j, n - j, mean), mv);
      s1 = Vec::fmadd(d, d, s1);
    }
    const float var = Vec::reduce_add(Vec::add(s0, s1)) * inv_n;
    const float inv_std = 1.f / std::sqrt(var + a.epsilon);
    const Vec::T iv = Vec::set1(inv_std);
    // y = (x - mean) * inv_std * scale + bias
    for (j = 0; j + kW <= n; j += kW) {
      const Vec::T t = Vec::mul(Vec::sub(Vec::load(x + j), mv), iv);
      const Vec::T b = a.bias ? Vec::load(a.bias + j) : Vec::zero();
      Vec::store(y + j, Vec::fmadd(t, Vec::load(a.scale + j), b));
    }
    if (j < n) {
      const int64_t k = n - j;
      const Vec::T t = Vec::mul(Vec::sub(Vec::load_n(x + j, k, 0.f), mv), iv);
      const Vec::T b = a.bias ? Vec::load_n(a.bias + j, k, 0.f) : Vec::zero();
      Vec::store_n(y + j, Vec::fmadd(t, Vec::load_n(a.scale + j, k, 0.f), b), k);
    }
    if (a.mean_out) a.mean_out[r] = mean;
    if (a.inv_std_out) a.inv_std_out[r] = inv_std;
  }
}

}  // namespace tessera::x86::TSR_X86_ISA
