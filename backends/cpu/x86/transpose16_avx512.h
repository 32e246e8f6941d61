// In-register transpose of a 16 x 16 float block for the AVX-512 kernels (SGEMM panel
// packing, the depthwise conv's channel-lane tiles). Include only from files compiled with
// -mavx512f (the *_avx512.cc files).
#pragma once

#include <immintrin.h>

namespace tessera::cpu {

/// r[0..15] (16 rows of 16 floats) -> r[j] = column j. unpacklo/hi_ps pair the rows,
/// unpacklo/hi_pd make 4 x 4 blocks within each 128-bit lane, two shuffle_f32x4 rounds
/// gather the lanes: 64 shuffles for 256 floats.
__attribute__((always_inline)) inline void transpose16_avx512(__m512 r[16]) {
  __m512 t[16], u[16];
#pragma GCC unroll 8
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  // u[4 i + q], lane l: rows 4 i .. 4 i + 3 at column 4 l + q.
#pragma GCC unroll 4
  for (int i = 0; i < 16; i += 4) {
    const __m512d a = _mm512_castps_pd(t[i]), b = _mm512_castps_pd(t[i + 1]);
    const __m512d c = _mm512_castps_pd(t[i + 2]), d = _mm512_castps_pd(t[i + 3]);
    u[i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
    u[i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
    u[i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
    u[i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
  }
  // Column 4 l + q = lane l of u[q], u[4 + q], u[8 + q], u[12 + q].
#pragma GCC unroll 4
  for (int q = 0; q < 4; ++q) {
    const __m512 v0 = _mm512_shuffle_f32x4(u[q], u[4 + q], 0x44), v1 = _mm512_shuffle_f32x4(u[q], u[4 + q], 0xEE);
    const __m512 w0 = _mm512_shuffle_f32x4(u[8 + q], u[12 + q], 0x44), w1 = _mm512_shuffle_f32x4(u[8 + q], u[12 + q], 0xEE);
    r[q] = _mm512_shuffle_f32x4(v0, w0, 0x88);
    r[4 + q] = _mm512_shuffle_f32x4(v0, w0, 0xDD);
    r[8 + q] = _mm512_shuffle_f32x4(v1, w1, 0x88);
    r[12 + q] = _mm512_shuffle_f32x4(v1, w1, 0xDD);
  }
}

}  // namespace tessera::cpu
