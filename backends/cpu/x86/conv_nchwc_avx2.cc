// AVX2 instance of the NCHW16c convolution and pools (conv_nchwc_impl.h: one block of 16
// channels in two ymm) and its layout conversions. Compiled with -mavx2 -mfma; called only
// on CPUs that have them. onnxruntime's AVX2 path blocks channels by 8 (NCHWc8); this one
// keeps the blocks of 16 of the AVX-512 path, so the planner, the pools, Resize, Concat and
// the elementwise ops on blocked values are the same on both (a 24-channel tensor pads to
// 32 here, to 24 in NCHWc8).
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "backends/cpu/x86/conv_nchwc.h"
#include "backends/cpu/x86/conv_nchwc_impl.h"
#include "backends/cpu/x86/simd_avx2.h"

namespace tessera::cpu {
namespace {

// One block of 16 floats in two ymm registers.
struct Ymm2 {
  __m256 lo, hi;
};

// The first 8 lanes of a block in one ymm: the tiles of an output block with at most 8
// channels (conv_nchwc_impl.h's Half). A store writes the other 8 lanes 0 (padding).
struct NchwcVec8of16 : Vec8Avx2 {
  using Mask = int64_t;  // lanes [0, n), n <= 8
  static void store(float* p, T v) {
    _mm256_storeu_ps(p, v);
    _mm256_storeu_ps(p + 8, _mm256_setzero_ps());
  }
  static Mask first(int64_t n) { return n; }
  static T keep(Mask n, T v) { return n >= 8 ? v : _mm256_and_ps(v, _mm256_castsi256_ps(first_lanes_avx2(n))); }
  static void store_first(float* p, T v, int64_t n) { _mm256_maskstore_ps(p, first_lanes_avx2(n), v); }
  static constexpr const int* kMaxPw = kNchwcMaxPwAvx2;
  static constexpr int kDwMaxPw = 6;
};

// The block-vector operations of conv_nchwc_impl.h (and EpilogueSimd's) on Ymm2.
struct NchwcVec16x2 {
  using Half = NchwcVec8of16;
  using T = Ymm2;
  using Mask = int64_t;  // lanes [0, n) of a block
  static T zero() { return {_mm256_setzero_ps(), _mm256_setzero_ps()}; }
  static T set1(float v) {
    const __m256 b = _mm256_set1_ps(v);
    return {b, b};
  }
  static T load(const float* p) { return {_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8)}; }
  static void store(float* p, T v) {
    _mm256_storeu_ps(p, v.lo);
    _mm256_storeu_ps(p + 8, v.hi);
  }
  static T add(T a, T b) { return {_mm256_add_ps(a.lo, b.lo), _mm256_add_ps(a.hi, b.hi)}; }
  static T mul(T a, T b) { return {_mm256_mul_ps(a.lo, b.lo), _mm256_mul_ps(a.hi, b.hi)}; }
  static T div(T a, T b) { return {_mm256_div_ps(a.lo, b.lo), _mm256_div_ps(a.hi, b.hi)}; }
  static T fmadd(T a, T b, T c) { return {_mm256_fmadd_ps(a.lo, b.lo, c.lo), _mm256_fmadd_ps(a.hi, b.hi, c.hi)}; }
  static T max(T a, T b) { return {_mm256_max_ps(a.lo, b.lo), _mm256_max_ps(a.hi, b.hi)}; }
  static T min(T a, T b) { return {_mm256_min_ps(a.lo, b.lo), _mm256_min_ps(a.hi, b.hi)}; }
  static T select_ge0(T x, T if_ge0, T otherwise) {
    const __m256 z = _mm256_setzero_ps();
    return {_mm256_blendv_ps(otherwise.lo, if_ge0.lo, _mm256_cmp_ps(x.lo, z, _CMP_GE_OQ)),
            _mm256_blendv_ps(otherwise.hi, if_ge0.hi, _mm256_cmp_ps(x.hi, z, _CMP_GE_OQ))};
  }
  static Mask first(int64_t n) { return n; }
  static T keep(Mask n, T v) {
    if (n >= 16) return v;
    return {_mm256_and_ps(v.lo, _mm256_castsi256_ps(first_lanes_avx2(n))),
            _mm256_and_ps(v.hi, _mm256_castsi256_ps(first_lanes_avx2(n - 8)))};
  }
  static void store_first(float* p, T v, int64_t n) {
    _mm256_maskstore_ps(p, first_lanes_avx2(n), v.lo);
    if (n > 8) _mm256_maskstore_ps(p + 8, first_lanes_avx2(n - 8), v.hi);
  }
  static constexpr const int* kMaxPw = kNchwcMaxPwAvx2;
  static constexpr int kDwMaxPw = 6;  // 12 accumulators
};
using K = NchwcKernels<NchwcVec16x2>;

// 8 channels x 8 pixels at a time, each half of a block: loads of up to 8 plane rows (or
// pixels; masked past hw), an 8 x 8 register transpose, stores of up to 8 pixels (or plane
// rows).
template <bool kToBlocked>
void reorder_blocks(const float* x, int64_t c, int64_t hw, int64_t cb0, int64_t cb1, float* y) {
  for (int64_t cb = cb0; cb < cb1; ++cb) {
    const float* xb = x + cb * 16 * hw;
    float* yb = y + cb * 16 * hw;
    for (int64_t p0 = 0; p0 < hw; p0 += 8) {
      const int64_t np = std::min<int64_t>(8, hw - p0);
      const __m256i m = first_lanes_avx2(np);
      for (int h = 0; h < 2; ++h) {
        const int64_t nc = std::clamp<int64_t>(c - cb * 16 - h * 8, 0, 8);
        __m256 r[8];
#pragma GCC unroll 8
        for (int i = 0; i < 8; ++i) {
          if (kToBlocked)
            r[i] = i < nc ? (np == 8 ? _mm256_loadu_ps(xb + (h * 8 + i) * hw + p0)
                                     : _mm256_maskload_ps(xb + (h * 8 + i) * hw + p0, m))
                          : _mm256_setzero_ps();
          else
            r[i] = i < np ? _mm256_loadu_ps(xb + (p0 + i) * 16 + h * 8) : _mm256_setzero_ps();
        }
        transpose8_avx2(r);
        if (kToBlocked) {
          for (int j = 0; j < np; ++j) _mm256_storeu_ps(yb + (p0 + j) * 16 + h * 8, r[j]);
        } else {
          for (int i = 0; i < nc; ++i) {
            float* dst = yb + (h * 8 + i) * hw + p0;
            if (np == 8) _mm256_storeu_ps(dst, r[i]);
            else _mm256_maskstore_ps(dst, m, r[i]);
          }
        }
      }
    }
  }
}

}  // namespace

void nchwc_conv_task_avx2(const NchwcConvPlan& p, const float* x, const float* z, float* y, int64_t t, float* tile) {
  K::conv_task(p, x, z, y, t, tile);
}

void nchwc_max_pool_avx2(const Conv2dGeometry& g, const float* x, int64_t cb0, int64_t cb1, float* y) {
  K::max_pool(g, x, cb0, cb1, y);
}

void nchwc_global_average_pool_avx2(const float* x, int64_t c, int64_t hw, int64_t cb0, int64_t cb1, float* y) {
  K::global_average_pool(x, c, hw, cb0, cb1, y);
}

void nchwc_from_nchw_avx2(const float* x, int64_t c, int64_t hw, int64_t cb0, int64_t cb1, float* y) {
  reorder_blocks<true>(x, c, hw, cb0, cb1, y);
}

void nchw_from_nchwc_avx2(const float* x, int64_t c, int64_t hw, int64_t cb0, int64_t cb1, float* y) {
  reorder_blocks<false>(x, c, hw, cb0, cb1, y);
}

}  // namespace tessera::cpu
