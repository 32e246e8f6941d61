// ISA-templated 2-D transpose of transpose_x86.h; included once by transpose_avx512.cc and
// transpose_avx2.cc after simd_x86.h.
#include <cstdint>

#include "backends/cpu/x86/transpose_x86.h"

namespace tessera::x86::TSR_X86_ISA {

namespace {

constexpr int kT = Vec::kW;  // tile side: 16 (AVX-512) or 8 (AVX2)

inline bool aligned(const float* p) { return (reinterpret_cast<uintptr_t>(p) & (sizeof(Vec::T) - 1)) == 0; }

#if defined(__AVX512F__)
// r[k] = column k of the 16 x 16 tile held in rows r[0..15]. Steps: unpack lo/hi pairs rows
// (2 x 2 blocks per 128-bit lane), shuffle_ps to 4 x 4 blocks per lane, then two rounds of
// 128-bit lane shuffles (shuffle_f32x4 0x88: lanes a0 a2 b0 b2, 0xDD: a1 a3 b1 b3).
inline void transpose_tile(__m512 r[16]) {
  __m512 t[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  // r[4g + c], lane L = rows 4g..4g+3 of column 4L + c.
  for (int g = 0; g < 4; ++g) {
    r[4 * g + 0] = _mm512_shuffle_ps(t[4 * g], t[4 * g + 2], 0x44);
    r[4 * g + 1] = _mm512_shuffle_ps(t[4 * g], t[4 * g + 2], 0xEE);
    r[4 * g + 2] = _mm512_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0x44);
    r[4 * g + 3] = _mm512_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0xEE);
  }
  for (int c = 0; c < 4; ++c) {
    t[c] = _mm512_shuffle_f32x4(r[c], r[4 + c], 0x88);
    t[4 + c] = _mm512_shuffle_f32x4(r[c], r[4 + c], 0xDD);
    t[8 + c] = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0x88);
    t[12 + c] = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0xDD);
  }
  for (int c = 0; c < 8; ++c) {
    r[c] = _mm512_shuffle_f32x4(t[c], t[8 + c], 0x88);
    r[8 + c] = _mm512_shuffle_f32x4(t[c], t[8 + c], 0xDD);
  }
}
inline void store_row(float* p, __m512 v, bool stream) {
  if (stream && aligned(p)) _mm512_stream_ps(p, v);
  else _mm512_storeu_ps(p, v);
}
#else
// r[k] = column k of the 8 x 8 tile held in rows r[0..7]: unpack, shuffle_ps to 4 x 4 blocks
// per 128-bit lane, then permute2f128 joins the lanes (0x20: low halves, 0x31: high halves).
inline void transpose_tile(__m256 r[8]) {
  __m256 t[8], s[8];
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  for (int g = 0; g < 2; ++g) {
    s[4 * g + 0] = _mm256_shuffle_ps(t[4 * g], t[4 * g + 2], 0x44);
    s[4 * g + 1] = _mm256_shuffle_ps(t[4 * g], t[4 * g + 2], 0xEE);
    s[4 * g + 2] = _mm256_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0x44);
    s[4 * g + 3] = _mm256_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0xEE);
  }
  for (int c = 0; c < 4; ++c) {
    r[c] = _mm256_permute2f128_ps(s[c], s[4 + c], 0x20);
    r[4 + c] = _mm256_permute2f128_ps(s[c], s[4 + c], 0x31);
  }
}
inline void store_row(float* p, __m256 v, bool stream) {
  if (stream && aligned(p)) _mm256_stream_ps(p, v);
  else _mm256_storeu_ps(p, v);
}
#endif

inline void scalar_block(const float* src, int64_t lds, float* dst, int64_t ldd, int64_t r0, int64_t r1, int64_t c0,
                         int64_t c1) {
  for (int64_t c = c0; c < c1; ++c)
    for (int64_t r = r0; r < r1; ++r) dst[c * ldd + r] = src[r * lds + c];
}

}  // namespace

void transpose_block(const float* src, int64_t lds, float* dst, int64_t ldd, int64_t rows, int64_t cols, bool stream) {
  // Strips of 2 * kT input rows, so that each output row gets 2 * kT consecutive floats
  // (a full 64-byte line on AVX2 too) per column block: whole lines for streaming stores.
  constexpr int kS = 2 * kT;
  int64_t r = 0;
  for (; r + kS <= rows; r += kS) {
    int64_t c = 0;
    for (; c + kT <= cols; c += kT) {
      Vec::T a[kT], b[kT];
      for (int i = 0; i < kT; ++i) a[i] = Vec::load(src + (r + i) * lds + c);
      for (int i = 0; i < kT; ++i) b[i] = Vec::load(src + (r + kT + i) * lds + c);
      transpose_tile(a);
      transpose_tile(b);
      for (int i = 0; i < kT; ++i) {
        float* d = dst + (c + i) * ldd + r;
        store_row(d, a[i], stream);
        store_row(d + kT, b[i], stream);
      }
    }
    scalar_block(src, lds, dst, ldd, r, r + kS, c, cols);
  }
  for (; r + kT <= rows; r += kT) {
    int64_t c = 0;
    for (; c + kT <= cols; c += kT) {
      Vec::T a[kT];
      for (int i = 0; i < kT; ++i) a[i] = Vec::load(src + (r + i) * lds + c);
      transpose_tile(a);
      for (int i = 0; i < kT; ++i) Vec::store(dst + (c + i) * ldd + r, a[i]);
    }
    scalar_block(src, lds, dst, ldd, r, r + kT, c, cols);
  }
  scalar_block(src, lds, dst, ldd, r, rows, 0, cols);
}

}  // namespace tessera::x86::TSR_X86_ISA
