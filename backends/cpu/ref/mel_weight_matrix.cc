// MelWeightMatrix reference kernel (runtime/ops/mel_weight_matrix.cc), in double.
#include <cmath>
#include <vector>

#include "backends/cpu/ref/ref_kernels.h"

namespace tessera::ref {

namespace {
double scalar_at(const Tensor& t) {
  switch (t.dtype()) {
    case DType::kInt32: return t.data_as<int32_t>()[0];
    case DType::kInt64: return static_cast<double>(t.data_as<int64_t>()[0]);
    case DType::kFloat64: return t.data_as<double>()[0];
    default: return t.data_as<float>()[0];
  }
}
}  // namespace

Result<std::unique_ptr<Kernel>> make_MelWeightMatrix(const CompileContext& ctx) {
  const int64_t rows = ctx.outputs[0].shape[0], mel_bins = ctx.outputs[0].shape[1];
  return make_fn_kernel([=](const KernelContext& k) -> Status {
    const double dft_length = scalar_at(k.input(1)), sample_rate = scalar_at(k.input(2));
    if (sample_rate <= 0) return invalid_argument("MelWeightMatrix: sample_rate must be > 0, got " + std::to_string(sample_rate));
    const double lower = scalar_at(k.input(3)), upper = scalar_at(k.input(4));
    if (!std::isfinite(lower) || !std::isfinite(upper) || lower < 0 || upper <= lower)
      return invalid_argument("MelWeightMatrix: the edges must be finite with 0 <= lower_edge_hertz < upper_edge_hertz, got " +
                              std::to_string(lower) + " and " + std::to_string(upper));
    auto mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
    const double low_mel = mel(lower), step = (mel(upper) - low_mel) / static_cast<double>(mel_bins + 2);
    std::vector<int64_t> bin(static_cast<size_t>(mel_bins + 2));
    for (int64_t j = 0; j < mel_bins + 2; ++j) {
      const double hz = 700.0 * (std::pow(10.0, (static_cast<double>(j) * step + low_mel) / 2595.0) - 1.0);
      bin[static_cast<size_t>(j)] = static_cast<int64_t>(std::floor((dft_length + 1) * hz / sample_rate));
    }
    std::vector<double> w(static_cast<size_t>(rows * mel_bins), 0.0);
    auto at = [&](int64_t r, int64_t i) -> double* {
      return r >= 0 && r < rows ? &w[static_cast<size_t>(r * mel_bins + i)] : nullptr;
    };
    for (int64_t i = 0; i < mel_bins; ++i) {
      const int64_t lo = bin[i], mid = bin[i + 1], hi = bin[i + 2];
      if (mid == lo) {
        if (double* p = at(mid, i)) *p = 1.0;
      } else {
        for (int64_t j = lo; j <= mid; ++j)
          if (double* p = at(j, i)) *p = static_cast<double>(j - lo) / static_cast<double>(mid - lo);
      }
      if (hi > mid)
        for (int64_t j = mid; j < hi; ++j)
          if (double* p = at(j, i)) *p = static_cast<double>(hi - j) / static_cast<double>(hi - mid);
    }
    return dispatch_float(k.output(0).dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      T* y = k.output(0).data_as<T>();
      for (size_t q = 0; q < w.size(); ++q) y[q] = static_cast<T>(w[q]);
      return Status::ok();
    });
  });
}

}  // namespace tessera::ref
