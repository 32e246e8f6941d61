// DFT, STFT and MelWeightMatrix reference kernels against transforms worked out by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "backends/cpu/ref/fft.h"
#include "ref_a_util.h"

namespace tessera {
namespace {

using testing::attr_i;
using testing::expect_error;
using testing::expect_near;
using testing::make_tensor;
using testing::run_ok;
using testing::to_vector;

TEST(RefFFT, MatchesTheDirectSumAtEveryLength) {
  // Radix-2 lengths and Bluestein lengths (primes, composites), against the textbook sum
  // X[k] = sum_j x[j] exp(-2 pi i j k / n) in long double.
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int64_t n : {1, 2, 3, 4, 5, 7, 8, 12, 16, 17, 31, 100, 128, 257, 1000}) {
    std::vector<ref::Complex> x(static_cast<size_t>(n));
    for (auto& v : x) v = {u(rng), u(rng)};
    std::vector<ref::Complex> y = x, scratch(static_cast<size_t>(ref::fft_scratch_elems(n)));
    ref::fft(y.data(), n, -1.0, scratch.data());
    double err = 0, norm = 0;
    for (int64_t k = 0; k < n; ++k) {
      long double re = 0, im = 0;
      for (int64_t j = 0; j < n; ++j) {
        const long double ang = -2.0L * 3.14159265358979323846264338327950288L * static_cast<long double>((j * k) % n) / n;
        re += x[j].real() * std::cos(ang) - x[j].imag() * std::sin(ang);
        im += x[j].real() * std::sin(ang) + x[j].imag() * std::cos(ang);
      }
      err = std::max(err, std::abs(y[k] - ref::Complex(static_cast<double>(re), static_cast<double>(im))));
      norm = std::max(norm, std::abs(ref::Complex(static_cast<double>(re), static_cast<double>(im))));
    }
    EXPECT_LT(err, 1e-12 * std::max(norm, 1.0)) << "length " << n;
  }
}

TEST(RefDFT, RealForwardInverseAndOnesided) {
  // x = 1 2 3 4 (real): X = 10, -2+2i, -2, -2-2i.
  Tensor x = make_tensor<float>({1, 4, 1}, {1.f, 2.f, 3.f, 4.f});
  auto y = run_ok({"DFT", {attr_i("axis", 1)}, 17}, {&x});
  expect_near(to_vector<float>(y[0]), {10, 0, -2, 2, -2, 0, -2, -2}, 1e-6f, 1e-5f);
  // onesided keeps bins 0 .. 2.
  auto h = run_ok({"DFT", {attr_i("axis", 1), attr_i("onesided", 1)}, 17}, {&x});
  EXPECT_EQ(h[0].shape(), (Shape{1, 3, 2}));
  expect_near(to_vector<float>(h[0]), {10, 0, -2, 2, -2, 0}, 1e-6f, 1e-5f);
  // The inverse of the spectrum is the signal again (imaginary parts 0).
  auto back = run_ok({"DFT", {attr_i("axis", 1), attr_i("inverse", 1)}, 17}, {&y[0]});
  expect_near(to_vector<float>(back[0]), {1, 0, 2, 0, 3, 0, 4, 0}, 1e-6f, 1e-5f);
}

TEST(RefDFT, Opset20AxisInputAndLength) {
  // x [1, 2, 2, 1] = [[1, 2], [3, 4]]; DFT along axis 2 (the inner dim) with dft_length 4:
  // [1, 2, 0, 0] -> 3, 1-2i, -1, 1+2i; [3, 4, 0, 0] -> 7, 3-4i, -1, 3+4i.
  Tensor x = make_tensor<float>({1, 2, 2, 1}, {1.f, 2.f, 3.f, 4.f});
  Tensor len = make_tensor<int64_t>({}, {4}), axis = make_tensor<int64_t>({}, {2});
  auto y = run_ok({"DFT", {}, 20}, {&x, &len, &axis}, {1, 2});
  EXPECT_EQ(y[0].shape(), (Shape{1, 2, 4, 2}));
  expect_near(to_vector<float>(y[0]), {3, 0, 1, -2, -1, 0, 1, 2, 7, 0, 3, -4, -1, 0, 3, 4}, 1e-6f, 1e-5f);
}

TEST(RefDFT, Errors) {
  Tensor x = make_tensor<float>({1, 4, 3}, std::vector<float>(12, 1.f));
  expect_error({"DFT", {}, 17}, {&x}, StatusCode::kInvalidArgument, "last dim");
  Tensor c = make_tensor<float>({1, 4, 2}, std::vector<float>(8, 1.f));
  expect_error({"DFT", {attr_i("onesided", 1)}, 17}, {&c}, StatusCode::kInvalidArgument, "onesided");
  expect_error({"DFT", {attr_i("axis", 2)}, 17}, {&c}, StatusCode::kInvalidArgument, "axis");
  Tensor zero = make_tensor<int64_t>({}, {0});
  expect_error({"DFT", {}, 17}, {&c, &zero}, StatusCode::kInvalidArgument, "dft_length", {1});
}

TEST(RefSTFT, WindowedFrames) {
  // signal 1 2 3 4 5, frame_step 2, window [1, 0.5]: frames [1, 1], [3, 2] (windowed), so
  // bins (onesided, length 2): frame 0 -> 2, 0; frame 1 -> 5, 1.
  Tensor x = make_tensor<float>({1, 5, 1}, {1.f, 2.f, 3.f, 4.f, 5.f});
  Tensor step = make_tensor<int64_t>({}, {2}), window = make_tensor<float>({2}, {1.f, 0.5f});
  auto y = run_ok({"STFT", {}, 17}, {&x, &step, &window}, {1});
  EXPECT_EQ(y[0].shape(), (Shape{1, 2, 2, 2}));
  expect_near(to_vector<float>(y[0]), {2, 0, 0, 0, 5, 0, 1, 0}, 1e-6f, 1e-5f);
  Tensor len = make_tensor<int64_t>({}, {3});
  expect_error({"STFT", {}, 17}, {&x, &step, &window, &len}, StatusCode::kInvalidArgument, "frame_length", {1, 3});
  Tensor bad_step = make_tensor<int64_t>({}, {0});
  expect_error({"STFT", {}, 17}, {&x, &bad_step, &window}, StatusCode::kInvalidArgument, "frame_step", {1});
}

TEST(RefMelWeightMatrix, OneTriangularFilter) {
  // upper = 4900 Hz makes the mel points 0, M, 2M with M = 2595 log10(2), i.e. 0, 700 and
  // 2100 Hz; with dft_length 6 and sample_rate 4000 the bins are floor(7 hz / 4000) = 0, 1, 3.
  // The filter rises 0 -> 1 over bins 0..1 and falls over 1..3: column 0, 1, 0.5, 0.
  Tensor n = make_tensor<int64_t>({}, {1}), dft = make_tensor<int64_t>({}, {6}), sr = make_tensor<int64_t>({}, {4000});
  Tensor lo = make_tensor<float>({}, {0.f}), hi = make_tensor<float>({}, {4900.f});
  auto y = run_ok({"MelWeightMatrix", {}, 17}, {&n, &dft, &sr, &lo, &hi}, {0, 1});
  EXPECT_EQ(y[0].shape(), (Shape{4, 1}));
  expect_near(to_vector<float>(y[0]), {0.f, 1.f, 0.5f, 0.f});
}

}  // namespace
}  // namespace tessera
