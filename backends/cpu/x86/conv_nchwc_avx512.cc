// AVX-512 instance of the NCHW16c convolution and pools (conv_nchwc_impl.h: one block of
// 16 channels in one zmm) and its layout conversions. Compiled with -mavx512f; called only
// on CPUs that have it.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "backends/cpu/x86/conv_nchwc.h"
#include "backends/cpu/x86/conv_nchwc_impl.h"
#include "backends/cpu/x86/transpose16_avx512.h"
#include "backends/cpu/x86/vec16_avx512.h"

namespace tessera::cpu {
namespace {

// One block in one zmm: micro-tiles of up to 28 accumulators (kNchwcMaxPw512), 3 registers
// left for the weights and the broadcast.
struct NchwcVec16 : Vec16 {
  using Mask = __mmask16;
  static Mask first(int64_t n) { return static_cast<Mask>((1u << n) - 1u); }
  static T keep(Mask m, T v) { return _mm512_maskz_mov_ps(m, v); }
  static void store_first(float* p, T v, int64_t n) { _mm512_mask_storeu_ps(p, first(n), v); }
  static constexpr const int* kMaxPw = kNchwcMaxPw512;
  static constexpr int kDwMaxPw = 14;
};
using K = NchwcKernels<NchwcVec16>;

}  // namespace

void nchwc_conv_task_avx512(const NchwcConvPlan& p, const float* x, const float* z, float* y, int64_t t, float* tile) {
  K::conv_task(p, x, z, y, t, tile);
}

void nchwc_max_pool_avx512(const Conv2dGeometry& g, const float* x, int64_t cb0, int64_t cb1, float* y) {
  K::max_pool(g, x, cb0, cb1, y);
}

void nchwc_global_average_pool_avx512(const float* x, int64_t c, int64_t hw, int64_t cb0, int64_t cb1, float* y) {
  K::global_average_pool(x, c, hw, cb0, cb1, y);
}

namespace {

// 16 channels x 16 pixels at a time: masked loads of up to 16 plane rows (or pixels), a
// 16 x 16 register transpose, stores of up to 16 pixels (or plane rows).
template <bool kToBlocked>
void reorder_blocks(const float* x, int64_t c, int64_t hw, int64_t cb0, int64_t cb1, float* y) {
  for (int64_t cb = cb0; cb < cb1; ++cb) {
    const int64_t nc = std::min<int64_t>(16, c - cb * 16);
    const float* xb = x + cb * 16 * hw;
    float* yb = y + cb * 16 * hw;
    for (int64_t p0 = 0; p0 < hw; p0 += 16) {
      const int np = static_cast<int>(std::min<int64_t>(16, hw - p0));
      const __mmask16 m = static_cast<__mmask16>((1u << np) - 1u);
      __m512 r[16];
#pragma GCC unroll 16
      for (int i = 0; i < 16; ++i) {
        if (kToBlocked) r[i] = i < nc ? _mm512_maskz_loadu_ps(m, xb + i * hw + p0) : _mm512_setzero_ps();
        else r[i] = i < np ? _mm512_loadu_ps(xb + (p0 + i) * 16) : _mm512_setzero_ps();
      }
      transpose16_avx512(r);
      if (kToBlocked)
        for (int j = 0; j < np; ++j) _mm512_storeu_ps(yb + (p0 + j) * 16, r[j]);
      else
        for (int i = 0; i < nc; ++i) _mm512_mask_storeu_ps(yb + i * hw + p0, m, r[i]);
    }
  }
}

}  // namespace

void nchwc_from_nchw_avx512(const float* x, int64_t c, int64_t hw, int64_t cb0, int64_t cb1, float* y) {
  reorder_blocks<true>(x, c, hw, cb0, cb1, y);
}

void nchw_from_nchwc_avx512(const float* x, int64_t c, int64_t hw, int64_t cb0, int64_t cb1, float* y) {
  reorder_blocks<false>(x, c, hw, cb0, cb1, y);
}

}  // namespace tessera::cpu
