// Fast Fourier transform of one complex line, any length, in double precision: used by the
// DFT and STFT reference kernels (ONNX DFT-17/20, STFT-17).
//   X[k] = sum_{j < n} x[j] exp(sign * 2 pi i j k / n),  sign = -1 forward, +1 inverse
//   (unscaled; the caller divides by n for the inverse).
// Powers of two: iterative radix-2 Cooley-Tukey (Cooley & Tukey, 1965). Other lengths:
// Bluestein's chirp-z algorithm (Bluestein, 1970), which rewrites the DFT as a convolution
// done with power-of-two FFTs. O(n log n) either way; twiddles are computed directly (not by
// recurrence) and chirp angles reduced mod 2n, so the error stays near machine epsilon.
#pragma once

#include <cmath>
#include <complex>
#include <cstdint>
#include <utility>

namespace tessera::ref {

using Complex = std::complex<double>;

inline bool is_pow2(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

inline int64_t next_pow2(int64_t n) {
  int64_t m = 1;
  while (m < n) m <<= 1;
  return m;
}

/// Complex scratch elements fft() needs for length n: 0 for a power of two, else the
/// Bluestein buffers (two of the convolution length, one chirp of n).
inline int64_t fft_scratch_elems(int64_t n) { return is_pow2(n) ? 0 : 2 * next_pow2(2 * n - 1) + n; }

/// In-place radix-2 FFT of x[0 .. n), n a power of two.
inline void fft_pow2(Complex* x, int64_t n, double sign) {
  for (int64_t i = 1, j = 0; i < n; ++i) {  // bit-reversal permutation
    int64_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(x[i], x[j]);
  }
  for (int64_t len = 2; len <= n; len <<= 1) {
    const double ang = sign * 2.0 * M_PI / static_cast<double>(len);
    const int64_t half = len / 2;
    for (int64_t k = 0; k < half; ++k) {
      const Complex w = std::polar(1.0, ang * static_cast<double>(k));
      for (int64_t i = 0; i < n; i += len) {
        const Complex u = x[i + k], v = x[i + k + half] * w;
        x[i + k] = u + v;
        x[i + k + half] = u - v;
      }
    }
  }
}

/// In-place FFT of x[0 .. n), any n >= 1; `scratch` holds fft_scratch_elems(n) elements.
inline void fft(Complex* x, int64_t n, double sign, Complex* scratch) {
  if (is_pow2(n)) {
    fft_pow2(x, n, sign);
    return;
  }
  // j k = (j^2 + k^2 - (k - j)^2) / 2, so with w_j = exp(sign i pi j^2 / n):
  //   X[k] = w_k * sum_j (x_j w_j) * conj(w_{k - j}),  a cyclic convolution of length m.
  const int64_t m = next_pow2(2 * n - 1);
  Complex* a = scratch;
  Complex* b = scratch + m;
  Complex* w = scratch + 2 * m;
  for (int64_t j = 0; j < n; ++j) {
    const int64_t q = static_cast<int64_t>((static_cast<unsigned __int128>(j) * j) % (2 * static_cast<unsigned __int128>(n)));
    w[j] = std::polar(1.0, sign * M_PI * static_cast<double>(q) / static_cast<double>(n));
  }
  for (int64_t j = 0; j < m; ++j) {
    a[j] = j < n ? x[j] * w[j] : Complex(0, 0);
    b[j] = Complex(0, 0);
  }
  b[0] = std::conj(w[0]);
  for (int64_t j = 1; j < n; ++j) b[j] = b[m - j] = std::conj(w[j]);
  fft_pow2(a, m, -1.0);
  fft_pow2(b, m, -1.0);
  for (int64_t j = 0; j < m; ++j) a[j] *= b[j];
  fft_pow2(a, m, 1.0);
  const double inv_m = 1.0 / static_cast<double>(m);
  for (int64_t k = 0; k < n; ++k) x[k] = w[k] * a[k] * inv_m;
}

}  // namespace tessera::ref
