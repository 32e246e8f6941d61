// MatMul reference kernel (ONNX MatMul-1/9/13, numpy.matmul): for each broadcast batch
// index, Y[m, n] = sum_k A[m, k] * B[k, n] (accumulated in double for floating types, in
// the element type for integers, which wrap like numpy's).
#include <type_traits>

#include "backends/cpu/matmul_batches.h"
#include "backends/cpu/ref/ref_kernels.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_MatMul(const CompileContext& ctx) {
  TSR_ASSIGN_OR_RETURN(const MatMulBatches g, MatMulBatches::of(ctx.input(0).shape, ctx.input(1).shape));
  const int64_t m = g.m, kdim = g.k, n = g.n, batches = g.batches;
  const std::vector<int64_t> a_off = g.a_off, b_off = g.b_off;
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
