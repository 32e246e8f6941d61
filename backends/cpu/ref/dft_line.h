// One-dimensional discrete Fourier transform of a strided line of complex values, the
// direct O(L * bins) sum in double precision (the reference the fast kernels are measured
// against): used by DFT and STFT (ONNX DFT-17/20, STFT-17).
#pragma once

#include <cmath>
#include <cstdint>

namespace tessera::ref {

/// out[k] = scale * sum_{n < n_in} in(n) * exp(sign * 2 pi i k n / length), k < bins.
/// `in(n)` returns the n-th input sample as (re, im) through the out-parameters; samples at
/// n >= n_in are zero (padding). sign = -1 forward, +1 inverse; scale 1 or 1 / length.
/// out_re/out_im are written at k * out_stride.
template <typename In>
void dft_line(In in, int64_t n_in, int64_t length, int64_t bins, double sign, double scale, double* out_re,
              double* out_im, int64_t out_stride) {
  const double w = sign * 2.0 * M_PI / static_cast<double>(length);
  for (int64_t k = 0; k < bins; ++k) {
    double re = 0, im = 0;
    for (int64_t n = 0; n < n_in && n < length; ++n) {
      double xr, xi;
      in(n, xr, xi);
      // (k * n) mod length keeps the angle small, so cos/sin stay accurate for long lines.
      const double ang = w * static_cast<double>((k * n) % length);
      const double c = std::cos(ang), s = std::sin(ang);
      re += xr * c - xi * s;
      im += xr * s + xi * c;
    }
    out_re[k * out_stride] = re * scale;
    out_im[k * out_stride] = im * scale;
  }
}

}  // namespace tessera::ref
