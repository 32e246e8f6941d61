// The integer matrix product shared by the MatMulInteger and QLinearMatMul reference
// kernels: numpy.matmul over broadcast batches of
//   acc[m, n] = sum_k (A[m, k] - a_zp[m]) * (B[k, n] - b_zp[n])      (int32)
// with zero points per-tensor (1 element) or per-row of A / per-column of B.
#pragma once

#include <cstdint>
#include <vector>

#include "backends/cpu/ref/quant_util.h"

namespace tessera::ref {

/// Batch geometry of numpy.matmul(A, B), fixed at compile time.
struct IntMatMulGeometry {
  int64_t m = 1, k = 1, n = 1;
  std::vector<int64_t> a_off, b_off;  // per output batch: element offsets into A and B

  static Result<IntMatMulGeometry> of(const Shape& a_shape, const Shape& b_shape) {
    Shape as = a_shape, bs = b_shape;
    if (as.size() == 1) as.insert(as.begin(), 1);
    if (bs.size() == 1) bs.push_back(1);
    IntMatMulGeometry g;
    g.m = as[as.size() - 2];
    g.k = as.back();
    g.n = bs.back();
    const Shape ab(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
    TSR_ASSIGN_OR_RETURN(Shape batch, broadcast_shapes(ab, bb));
    const size_t r = batch.size();
    auto strides = [&](const Shape& own, int64_t mat) {
      Shape full(r - own.size(), 1);
      full.insert(full.end(), own.begin(), own.end());
      std::vector<int64_t> st(r, 0);
      int64_t s = mat;
      for (size_t d = r; d-- > 0;) {
        st[d] = full[d] == 1 ? 0 : s;
        s *= full[d];
      }
      return st;
    };
    const std::vector<int64_t> sa = strides(ab, g.m * g.k), sb = strides(bb, g.k * g.n);
    int64_t batches = 1;
    for (int64_t d : batch) batches *= d;
    for (int64_t i = 0; i < batches; ++i) {
      int64_t rem = i, ao = 0, bo = 0;
      for (size_t d = r; d-- > 0;) {
        const int64_t c = rem % batch[d];
        rem /= batch[d];
        ao += c * sa[d];
        bo += c * sb[d];
      }
      g.a_off.push_back(ao);
      g.b_off.push_back(bo);
    }
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
