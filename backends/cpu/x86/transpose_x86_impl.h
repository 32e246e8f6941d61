// ISA-templated 2-D transpose of transpose_x86.h; included once by transpose_avx512.cc and
// transpose_avx2.cc after simd_x86.h.
#include <cstdint>

#include "backends/cpu/x86/transpose_x86.h"

namespace tessera::x86::TSR_X86_ISA {

namespace {

constexpr int kT = Vec::kW;  // tile side: 16 (AVX-512) or 8 (AVX2)

inline bool aligned(const float* p) { return (reinterpret_cast<uintptr_t>(p) & (sizeof(Vec::T) - 1)) == 0; }

// In-register transposes as recursive block swaps: transposing swaps each bit of the row
// index with the same bit of the column index. The bits that select a 128-bit lane are
// swapped for free while loading: register i0 + 4 L' gets, in lane L, the 4 floats of input
// row i0 + 4 L at columns 4 L' .. 4 L' + 3 (128-bit loads inserted into lanes: load ports,
// not the shuffle port). The two bits inside a lane are then swapped per register pair
// (i, i + s), s = 2 and 1:
//   a'[k] = k & s ? b[k - s] : a[k],   b'[k] = k & s ? b[k] : a[k + s]
// s = 2: shuffle_ps (a0 a1 b0 b1 / a2 a3 b2 b3 per lane); s = 1: the odd lanes of a take
// moveldup(b), the even lanes of b take movehdup(a). Afterwards r[k] is column k.
#if defined(__AVX512F__)
__attribute__((always_inline)) inline void load_transposed(const float* s, int64_t lds, __m512 r[16]) {
#pragma GCC unroll 4
  for (int i0 = 0; i0 < 4; ++i0)
#pragma GCC unroll 4
    for (int lp = 0; lp < 4; ++lp) {
      __m512 v = _mm512_castps128_ps512(_mm_loadu_ps(s + i0 * lds + 4 * lp));
      v = _mm512_insertf32x4(v, _mm_loadu_ps(s + (i0 + 4) * lds + 4 * lp), 1);
      v = _mm512_insertf32x4(v, _mm_loadu_ps(s + (i0 + 8) * lds + 4 * lp), 2);
      r[i0 + 4 * lp] = _mm512_insertf32x4(v, _mm_loadu_ps(s + (i0 + 12) * lds + 4 * lp), 3);
    }
#pragma GCC unroll 16
  for (int i = 0; i < 16; ++i) {
    if (i & 2) continue;
    const __m512 a = r[i], b = r[i + 2];
    r[i] = _mm512_shuffle_ps(a, b, _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 2] = _mm512_shuffle_ps(a, b, _MM_SHUFFLE(3, 2, 3, 2));
  }
#pragma GCC unroll 16
  for (int i = 0; i < 16; i += 2) {
    const __m512 a = r[i], b = r[i + 1];
    r[i] = _mm512_mask_moveldup_ps(a, 0xAAAA, b);
    r[i + 1] = _mm512_mask_movehdup_ps(b, 0x5555, a);
  }
}
__attribute__((always_inline)) inline void store_row(float* p, __m512 v, bool stream) {
  if (stream && aligned(p)) _mm512_stream_ps(p, v);
  else _mm512_storeu_ps(p, v);
}
#else
__attribute__((always_inline)) inline void load_transposed(const float* s, int64_t lds, __m256 r[8]) {
#pragma GCC unroll 4
  for (int i0 = 0; i0 < 4; ++i0)
#pragma GCC unroll 2
    for (int lp = 0; lp < 2; ++lp)
      r[i0 + 4 * lp] = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(s + i0 * lds + 4 * lp)),
                                            _mm_loadu_ps(s + (i0 + 4) * lds + 4 * lp), 1);
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    if (i & 2) continue;
    const __m256 a = r[i], b = r[i + 2];
    r[i] = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 2] = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 2, 3, 2));
  }
#pragma GCC unroll 8
  for (int i = 0; i < 8; i += 2) {
    const __m256 a = r[i], b = r[i + 1];
    r[i] = _mm256_blend_ps(a, _mm256_moveldup_ps(b), 0xAA);
    r[i + 1] = _mm256_blend_ps(_mm256_movehdup_ps(a), b, 0xAA);
  }
}
__attribute__((always_inline)) inline void store_row(float* p, __m256 v, bool stream) {
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
  // AVX-512: a 16 x 16 tile per step; each transposed row is one 64-byte store (a whole
  // line when aligned, as streaming stores want). AVX2: two 8 x 8 tiles stacked (16 input
  // rows), stored one after the other, so each output line gets its two halves back to back.
  constexpr int kS = kT == 16 ? 16 : 2 * kT;
  if (stream && ldd % 16 == 0 && (reinterpret_cast<uintptr_t>(dst) & 3) == 0) {
    // Peel input rows until the output rows start on a 64-byte line, so that every tile
    // row is one aligned line and can stream.
    const int64_t head = (16 - static_cast<int64_t>(reinterpret_cast<uintptr_t>(dst) / 4 % 16)) % 16;
    if (head > 0 && head < rows) {
      scalar_block(src, lds, dst, ldd, 0, head, 0, cols);
      src += head * lds;
      dst += head;
      rows -= head;
    }
  }
  int64_t r = 0;
  for (; r + kS <= rows; r += kS) {
    int64_t c = 0;
    for (; c + kT <= cols; c += kT) {
      if constexpr (kS == kT) {
        Vec::T a[kT];
        load_transposed(src + r * lds + c, lds, a);
#pragma GCC unroll 16
        for (int i = 0; i < kT; ++i) store_row(dst + (c + i) * ldd + r, a[i], stream);
      } else {
        // Both 8 x 8 tiles first, then each output line's two halves back to back: a line
        // left half-written while 7 others are written (the order of one tile after the
        // other) makes a streaming store flush a partial line (AMD Zen 3: 34-56% of memcpy).
        Vec::T a[kT], b[kT];
        load_transposed(src + r * lds + c, lds, a);
        load_transposed(src + (r + kT) * lds + c, lds, b);
#pragma GCC unroll 8
        for (int i = 0; i < kT; ++i) {
          store_row(dst + (c + i) * ldd + r, a[i], stream);
          store_row(dst + (c + i) * ldd + r + kT, b[i], stream);
        }
      }
    }
    scalar_block(src, lds, dst, ldd, r, r + kS, c, cols);
  }
  for (; r + kT <= rows; r += kT) {
    int64_t c = 0;
    for (; c + kT <= cols; c += kT) {
      Vec::T a[kT];
      load_transposed(src + r * lds + c, lds, a);
#pragma GCC unroll 16
      for (int i = 0; i < kT; ++i) Vec::store(dst + (c + i) * ldd + r, a[i]);
    }
    scalar_block(src, lds, dst, ldd, r, r + kT, c, cols);
  }
  scalar_block(src, lds, dst, ldd, r, rows, 0, cols);
}

void transpose_block_staged(const float* src, int64_t lds, float* dst, int64_t ldd, int64_t rows, int64_t cols,
                            float* buf) {
  // The block into buf (L2) with plain stores, rows of ldb floats (64-byte aligned), then
  // each output row's `rows` floats streamed out in one contiguous run (head elements
  // stored plainly until the row is vector-aligned).
  const int64_t ldb = (rows + 15) / 16 * 16;
  transpose_block(src, lds, buf, ldb, rows, cols, false);
  for (int64_t c = 0; c < cols; ++c) {
    const float* b = buf + c * ldb;
    float* d = dst + c * ldd;
    int64_t r = 0;
    for (; r < rows && !aligned(d + r); ++r) d[r] = b[r];
    for (; r + kT <= rows; r += kT) store_row(d + r, Vec::load(b + r), true);
    for (; r < rows; ++r) d[r] = b[r];
  }
}

}  // namespace tessera::x86::TSR_X86_ISA
