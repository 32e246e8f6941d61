// The 2-D Resize body of resize_x86.cc, one per ISA (resize_avx512.cc, resize_avx2.cc,
// compiled from resize_x86_impl.h with their own flags; see simd_x86.h).
//
// Resize2dPlan: X [planes, H, W] -> Y [planes, OH, OW] (NCHW float32, N and C not resized),
// separable taps per output row and column (ref/resize_kernel.h resize_axis_taps: the
// reference's own coordinates, indices and weights):
//   t[w]       = sum_{j < th} wh[oh, j] * X[ih[oh, j], w]        (vectorized over w)
//   Y[oh, ow]  = sum_{j < tw} ww[ow, j] * t[iw[ow, j]]            (vector gathers over ow)
// When a row or column has one tap of weight 1 (nearest), the sum is a plain copy, so
// nearest Resize is bit-exact.
#pragma once

#include <cstdint>

namespace tessera::x86 {

struct Resize2dPlan {
  int64_t planes = 0, h = 0, w = 0, oh = 0, ow = 0;
  int th = 1, tw = 1;
  const int32_t* ih = nullptr;  // oh * th row indices, wh the matching weights
  const float* wh = nullptr;
  const int32_t* iw = nullptr;  // tw * ow column indices, tap-major: iw[j * ow + o], ww likewise
  const float* ww = nullptr;
  bool copy_rows = false;  // th == 1 and every wh == 1: t is X's row itself
  bool copy_cols = false;  // tw == 1 and every ww == 1: Y[oh, ow] = t[iw[ow]]
};

namespace avx512 {
/// Output rows [begin, end) of the flattened [planes * OH]; t: w floats of scratch.
void resize2d_rows(const Resize2dPlan& p, const float* x, float* y, float* t, int64_t begin, int64_t end);
}  // namespace avx512
namespace avx2 {
void resize2d_rows(const Resize2dPlan& p, const float* x, float* y, float* t, int64_t begin, int64_t end);
}  // namespace avx2
namespace neon {  // aarch64: backends/cpu/arm/resize_neon.cc
void resize2d_rows(const Resize2dPlan& p, const float* x, float* y, float* t, int64_t begin, int64_t end);
}  // namespace neon

}  // namespace tessera::x86
