// One output plane of a 2-D convolution (ONNX Conv-1/11), shared by the reference Conv
// kernel and the x86 Conv kernel's direct path (depthwise-like convolutions), so the two
// compute the same sums in the same order:
//   Y[n, m, oy, ox] = B[m] + sum_{c < C/group, ky, kx}
//                     X[n, g*C/group + c, oy*sh - ph + ky*dh, ox*sw - pw + kx*dw] * W[m, c, ky, kx]
// with g = m / (M/group). Ordered (c, ky, kx) outside and output columns inside, so the
// innermost loop is a contiguous axpy the compiler vectorizes; accumulated in float; padded
// taps are skipped by clipping the output ranges (valid_range).
#pragma once

#include <algorithm>
#include <cstdint>

#include "runtime/ops/spatial_attrs.h"

namespace tessera::ref {

/// First output index o with o*stride - pad + off >= 0, and one past the last with
/// o*stride - pad + off < in, both clipped to [0, out) (lo <= hi).
inline void valid_range(int64_t in, int64_t out, int64_t stride, int64_t pad, int64_t off, int64_t* lo, int64_t* hi) {
  const int64_t a = pad - off, b = in + pad - off;  // o*stride >= a and o*stride < b
  const int64_t l = a <= 0 ? 0 : (a + stride - 1) / stride;
  const int64_t h = b <= 0 ? 0 : (b + stride - 1) / stride;
  *lo = std::min(l, out);
  *hi = std::max(*lo, std::min(h, out));
}

/// Writes output plane (n, m) of Y [N, M, OH, OW] from X [N, C, IH, IW], W [M, C/group, KH,
/// KW] and optional B [M] (nullptr: no bias), with `g` the 2-D window geometry.
inline void conv2d_plane(const float* x, const float* w, const float* b, float* y, int64_t n, int64_t m, int64_t c_in,
                         int64_t m_out, int64_t group, const WindowGeometry& g) {
  const int64_t ih = g.in[0], iw = g.in[1], oh = g.out[0], ow = g.out[1], kh = g.kernel[0], kw = g.kernel[1];
  const int64_t sh = g.strides[0], sw = g.strides[1], dh = g.dilations[0], dw = g.dilations[1];
  const int64_t ph = g.pads_begin[0], pw = g.pads_begin[1];
  const int64_t cg = c_in / group, mg = m_out / group, grp = m / mg;
  float* yp = y + (n * m_out + m) * oh * ow;
  const float bias = b ? b[m] : 0.0f;
  for (int64_t i = 0; i < oh * ow; ++i) yp[i] = bias;
  for (int64_t c = 0; c < cg; ++c) {
    const float* xp = x + (n * c_in + grp * cg + c) * ih * iw;
    const float* wp = w + (m * cg + c) * kh * kw;
    for (int64_t ky = 0; ky < kh; ++ky) {
      int64_t oy0, oy1;
      valid_range(ih, oh, sh, ph, ky * dh, &oy0, &oy1);
      for (int64_t kx = 0; kx < kw; ++kx) {
        const float wv = wp[ky * kw + kx];
        int64_t ox0, ox1;
        valid_range(iw, ow, sw, pw, kx * dw, &ox0, &ox1);
        for (int64_t oy = oy0; oy < oy1; ++oy) {
          const float* xr = xp + (oy * sh - ph + ky * dh) * iw - pw + kx * dw;
          float* yr = yp + oy * ow;
          if (sw == 1) {
            for (int64_t ox = ox0; ox < ox1; ++ox) yr[ox] += wv * xr[ox];  // Y += w * X (axpy)
          } else {
            for (int64_t ox = ox0; ox < ox1; ++ox) yr[ox] += wv * xr[ox * sw];
          }
        }
      }
    }
  }
}

}  // namespace tessera::ref
