// The batch geometry of ONNX MatMul (MatMul-1/9/13, numpy.matmul semantics), shared by the
// reference, integer and x86 MatMul kernels so they cannot disagree: A [..., M, K] and
// B [..., K, N] (a 1-D A is [1, K], a 1-D B is [K, 1]), their batch dims broadcast to the
// output's; per output batch, the element offsets of its matrices in A and B (a broadcast
// dim repeats an offset).
#pragma once

#include <vector>

#include "tessera/status.h"
#include "runtime/ops/op_schema.h"
#include "tessera/tensor.h"

namespace tessera {

struct MatMulBatches {
  int64_t m = 1, k = 1, n = 1;
  int64_t batches = 1;                // product of the broadcast batch dims
  int64_t a_batches = 1, b_batches = 1;  // products of A's and B's own batch dims
  std::vector<int64_t> a_off, b_off;  // per output batch: element offsets into A and B

  /// Errors: invalid_argument when the batch dims do not broadcast. The inner dims are not
  /// checked here (the schema does).
  static Result<MatMulBatches> of(const Shape& a_shape, const Shape& b_shape) {
    Shape as = a_shape, bs = b_shape;
    if (as.size() == 1) as.insert(as.begin(), 1);
    if (bs.size() == 1) bs.push_back(1);
    MatMulBatches g;
    g.m = as[as.size() - 2];
    g.k = as.back();
    g.n = bs.back();
    const Shape ab(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
    TSR_ASSIGN_OR_RETURN(Shape batch, broadcast_shapes(ab, bb));
    const size_t r = batch.size();
    // A's and B's batch dims right-aligned to the output's (leading 1s added), and their
    // element strides, 0 along broadcast dims.
    auto strides = [&](const Shape& own, int64_t matrix) {
      Shape full(r - own.size(), 1);
      full.insert(full.end(), own.begin(), own.end());
      std::vector<int64_t> st(r, 0);
      int64_t s = matrix;
      for (size_t d = r; d-- > 0;) {
        st[d] = full[d] == 1 ? 0 : s;
        s *= full[d];
      }
      return st;
    };
    const std::vector<int64_t> sa = strides(ab, g.m * g.k), sb = strides(bb, g.k * g.n);
    for (int64_t d : batch) g.batches *= d;
    for (int64_t d : ab) g.a_batches *= d;
    for (int64_t d : bb) g.b_batches *= d;
    g.a_off.resize(static_cast<size_t>(g.batches));
    g.b_off.resize(static_cast<size_t>(g.batches));
    for (int64_t i = 0; i < g.batches; ++i) {
      int64_t rem = i, ao = 0, bo = 0;
      for (size_t d = r; d-- > 0;) {
        const int64_t c = rem % batch[d];
        rem /= batch[d];
        ao += c * sa[d];
        bo += c * sb[d];
      }
      g.a_off[static_cast<size_t>(i)] = ao;
      g.b_off[static_cast<size_t>(i)] = bo;
    }
    return g;
  }
};

}  // namespace tessera
