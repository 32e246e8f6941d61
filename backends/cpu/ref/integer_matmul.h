// The integer matrix product shared by the MatMulInteger and QLinearMatMul reference
// kernels: numpy.matmul over broadcast batches of
//   acc[m, n] = sum_k (A[m, k] - a_zp[m]) * (B[k, n] - b_zp[n])      (int32)
// with zero points per-tensor (1 element) or per-row of A / per-column of B.
#pragma once

#include <cstdint>
#include <vector>

#include "backends/cpu/matmul_batches.h"
#include "backends/cpu/ref/quant_util.h"

namespace tessera::ref {

/// Batch geometry of numpy.matmul(A, B), fixed at compile time.
struct IntMatMulGeometry {
  int64_t m = 1, k = 1, n = 1;
  std::vector<int64_t> a_off, b_off;  // per output batch: element offsets into A and B

  static Result<IntMatMulGeometry> of(const Shape& a_shape, const Shape& b_shape) {
    TSR_ASSIGN_OR_RETURN(MatMulBatches mb, MatMulBatches::of(a_shape, b_shape));
    IntMatMulGeometry g;
    g.m = mb.m;
    g.k = mb.k;
    g.n = mb.n;
    g.a_off = std::move(mb.a_off);
    g.b_off = std::move(mb.b_off);
    return g;
  }

  /// Calls emit(batch, m, n, acc) for every output element in row-major order. `a_zp` /
  /// `b_zp` may be null (0).
  template <typename TA, typename TB, typename Emit>
  void run(const TA* a, const TB* b, const Tensor* a_zp, const Tensor* b_zp, Emit&& emit) const {
    for (size_t bi = 0; bi < a_off.size(); ++bi)
      for (int64_t i = 0; i < m; ++i) {
        const int64_t za = a_zp ? int_at(*a_zp, a_zp->numel() == 1 ? 0 : i) : 0;
        for (int64_t j = 0; j < n; ++j) {
          const int64_t zb = b_zp ? int_at(*b_zp, b_zp->numel() == 1 ? 0 : j) : 0;
          int32_t acc = 0;
          for (int64_t p = 0; p < k; ++p)
            acc += static_cast<int32_t>((a[a_off[bi] + i * k + p] - za) * (b[b_off[bi] + p * n + j] - zb));
          emit(static_cast<int64_t>(bi), i, j, acc);
        }
      }
  }
};

}  // namespace tessera::ref
