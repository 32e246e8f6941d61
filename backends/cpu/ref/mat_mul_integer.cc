// MatMulInteger reference kernel (ONNX MatMulInteger-10):
//   Y[b, m, n] = sum_k (A[b, m, k] - a_zp) * (B[b, k, n] - b_zp)   (int32; see integer_matmul.h)
#include "backends/cpu/ref/integer_matmul.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_MatMulInteger(const CompileContext& ctx) {
  TSR_ASSIGN_OR_RETURN(IntMatMulGeometry g, IntMatMulGeometry::of(ctx.input(0).shape, ctx.input(1).shape));
  const DType at = ctx.input(0).dtype, bt = ctx.input(1).dtype;
  return make_fn_kernel([=](const KernelContext& k) {
    int32_t* y = k.output(0).data_as<int32_t>();
    const Tensor* azp = k.has_input(2) ? &k.input(2) : nullptr;
    const Tensor* bzp = k.has_input(3) ? &k.input(3) : nullptr;
    return dispatch_quant(at, [&](auto ta) {
      return dispatch_quant(bt, [&](auto tb) {
        using TA = decltype(ta);
        using TB = decltype(tb);
        g.run(k.input(0).data_as<TA>(), k.input(1).data_as<TB>(), azp, bzp,
              [&](int64_t bi, int64_t i, int64_t j, int32_t acc) { y[(bi * g.m + i) * g.n + j] = acc; });
        return Status::ok();
      });
    });
  });
}

}  // namespace tessera::ref
