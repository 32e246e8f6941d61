// MatMul reference kernel (ONNX MatMul-1/9/13, numpy.matmul): for each broadcast batch
// index, Y[m, n] = sum_k A[m, k] * B[k, n] (accumulated in double for floating types, in
// the element type for integers, which wrap like numpy's).
#include <type_traits>

#include "backends/cpu/ref/ref_kernels.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_MatMul(const CompileContext& ctx) {
  Shape as = ctx.input(0).shape, bs = ctx.input(1).shape;
  if (as.size() == 1) as.insert(as.begin(), 1);
  if (bs.size() == 1) bs.push_back(1);
  const int64_t m = as[as.size() - 2], kdim = as.back(), n = bs.back();
  // Element offsets of each output batch into A and B (broadcast dims repeat an offset),
  // computed once here so that run() does no index arithmetic on shapes.
  const Shape a_batch(as.begin(), as.end() - 2), b_batch(bs.begin(), bs.end() - 2);
  TSR_ASSIGN_OR_RETURN(Shape batch, broadcast_shapes(a_batch, b_batch));
  int64_t batches = 1;
  for (int64_t d : batch) batches *= d;
  const size_t r = batch.size();
  // The batch dims of A and B right-aligned to the output's (leading 1s added), and their
  // element strides, 0 along broadcast dims.
  auto batch_strides = [&](const Shape& own, int64_t matrix_size) {
    Shape full(r - own.size(), 1);
    full.insert(full.end(), own.begin(), own.end());
    std::vector<int64_t> st(r, 0);
    int64_t s = matrix_size;
    for (size_t d = r; d-- > 0;) {
      st[d] = full[d] == 1 ? 0 : s;
      s *= full[d];
    }
    return st;
  };
  const std::vector<int64_t> a_st = batch_strides(a_batch, m * kdim), b_st = batch_strides(b_batch, kdim * n);
  std::vector<int64_t> a_off(static_cast<size_t>(batches)), b_off(static_cast<size_t>(batches));
  for (int64_t i = 0; i < batches; ++i) {
    int64_t rem = i, ao = 0, bo = 0;
    for (size_t d = r; d-- > 0;) {
      const int64_t coord = rem % batch[d];
      rem /= batch[d];
      ao += coord * a_st[d];
      bo += coord * b_st[d];
    }
    a_off[static_cast<size_t>(i)] = ao;
    b_off[static_cast<size_t>(i)] = bo;
  }
  const DType dtype = ctx.input(0).dtype;
  return make_fn_kernel([=](const KernelContext& k) {
    return dispatch_numeric(dtype, [&](auto tag) -> Status {
      using T = decltype(tag);
      using Acc = std::conditional_t<std::is_floating_point_v<T>, double, T>;
      const T* a = k.input(0).data_as<T>();
      const T* b = k.input(1).data_as<T>();
      T* y = k.output(0).data_as<T>();
      for (int64_t bi = 0; bi < batches; ++bi) {
        const T* ab = a + a_off[static_cast<size_t>(bi)];
        const T* bb = b + b_off[static_cast<size_t>(bi)];
        T* yb = y + bi * m * n;
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            Acc acc = 0;
            for (int64_t p = 0; p < kdim; ++p) acc += static_cast<Acc>(ab[i * kdim + p]) * static_cast<Acc>(bb[p * n + j]);
            yb[i * n + j] = static_cast<T>(acc);
          }
        }
      }
      return Status::ok();
    });
  });
}

}  // namespace tessera::ref
