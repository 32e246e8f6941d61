// Det reference kernel (runtime/ops/det.cc): LU decomposition with partial pivoting
// (Golub & Van Loan, "Matrix Computations", 4th ed., algorithm 3.4.1), in double:
//   for column j: pick the row p >= j with the largest |A[p, j]|, swap rows p and j (each
//   swap flips the sign), then eliminate below the pivot; det = sign * prod_j A[j, j].
// A zero pivot column means a singular matrix: det = 0. Each matrix is copied into the
// kernel's scratch (M * M doubles), so X is not modified.
#include <cmath>
#include <utility>

#include "backends/cpu/ref/ref_kernels.h"
#include "tessera/half.h"

namespace tessera::ref {

namespace {

/// det of the m x m row-major matrix `a` (overwritten by its LU factors).
double lu_det(double* a, int64_t m) {
  double det = 1;
  for (int64_t j = 0; j < m; ++j) {
    int64_t p = j;
    for (int64_t i = j + 1; i < m; ++i)
      if (std::abs(a[i * m + j]) > std::abs(a[p * m + j])) p = i;
    const double pivot = a[p * m + j];
    if (pivot == 0) return 0.0;
    if (p != j) {
      for (int64_t c = 0; c < m; ++c) std::swap(a[p * m + c], a[j * m + c]);
      det = -det;
    }
    det *= pivot;
    for (int64_t i = j + 1; i < m; ++i) {
      const double f = a[i * m + j] / pivot;
      if (f == 0) continue;
      for (int64_t c = j + 1; c < m; ++c) a[i * m + c] -= f * a[j * m + c];
    }
  }
  return det;
}

}  // namespace

Result<std::unique_ptr<Kernel>> make_Det(const CompileContext& ctx) {
  const Shape& xs = ctx.input(0).shape;
  const int64_t m = xs.back();
  const DType dt = ctx.input(0).dtype;
  const size_t scratch = static_cast<size_t>(m * m) * sizeof(double);
  return make_fn_kernel(
      [m, dt](const KernelContext& k) -> Status {
        const Tensor& x = k.input(0);
        Tensor& y = k.output(0);
        double* a = static_cast<double*>(k.scratch);
        auto load = [&](int64_t i) -> double {
          if (dt == DType::kFloat64) return x.data_as<double>()[i];
          if (dt == DType::kFloat16) return half_to_float(x.data_as<uint16_t>()[i]);
          return x.data_as<float>()[i];
        };
        for (int64_t b = 0; b < y.numel(); ++b) {
          for (int64_t i = 0; i < m * m; ++i) a[i] = load(b * m * m + i);
          const double d = lu_det(a, m);
          if (dt == DType::kFloat64) y.data_as<double>()[b] = d;
          else if (dt == DType::kFloat16) y.data_as<uint16_t>()[b] = float_to_half(static_cast<float>(d));
          else y.data_as<float>()[b] = static_cast<float>(d);
        }
        return Status::ok();
      },
      scratch);
}

}  // namespace tessera::ref
