// Transpose's 2-D block on aarch64 (transpose_x86.h, neon::transpose_block): 4 x 4 tiles
// of floats in q registers, transposed with TRN1/TRN2 on 32-bit and then 64-bit lanes;
// the edges (rows or columns past the last whole tile) element by element. Bits are
// moved, not computed (any 4-byte element). No non-temporal stores (`stream` is ignored:
// plan_transpose never sets it for this path).
#include <arm_neon.h>

#include <cstdint>

#include "backends/cpu/x86/transpose_x86.h"

namespace tessera::x86::neon {

void transpose_block(const float* src, int64_t lds, float* dst, int64_t ldd, int64_t rows, int64_t cols, bool) {
  int64_t r = 0;
  for (; r + 4 <= rows; r += 4) {
    const float* s = src + r * lds;
    int64_t c = 0;
    for (; c + 4 <= cols; c += 4) {
      const float32x4_t a0 = vld1q_f32(s + c), a1 = vld1q_f32(s + lds + c), a2 = vld1q_f32(s + 2 * lds + c),
                        a3 = vld1q_f32(s + 3 * lds + c);
      // t0 = a00 a10 a02 a12, t1 = a01 a11 a03 a13, t2 = a20 a30 a22 a32, t3 = a21 a31 a23 a33
      const float64x2_t t0 = vreinterpretq_f64_f32(vtrn1q_f32(a0, a1)), t1 = vreinterpretq_f64_f32(vtrn2q_f32(a0, a1));
      const float64x2_t t2 = vreinterpretq_f64_f32(vtrn1q_f32(a2, a3)), t3 = vreinterpretq_f64_f32(vtrn2q_f32(a2, a3));
      float* d = dst + c * ldd + r;
      vst1q_f32(d, vreinterpretq_f32_f64(vtrn1q_f64(t0, t2)));            // a00 a10 a20 a30
      vst1q_f32(d + ldd, vreinterpretq_f32_f64(vtrn1q_f64(t1, t3)));      // a01 a11 a21 a31
      vst1q_f32(d + 2 * ldd, vreinterpretq_f32_f64(vtrn2q_f64(t0, t2)));  // a02 a12 a22 a32
      vst1q_f32(d + 3 * ldd, vreinterpretq_f32_f64(vtrn2q_f64(t1, t3)));  // a03 a13 a23 a33
    }
    for (; c < cols; ++c)
      for (int64_t k = 0; k < 4; ++k) dst[c * ldd + r + k] = s[k * lds + c];
  }
  for (; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) dst[c * ldd + r] = src[r * lds + c];
}

}  // namespace tessera::x86::neon
