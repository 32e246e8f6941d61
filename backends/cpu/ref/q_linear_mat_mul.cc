// QLinearMatMul reference kernel (ONNX QLinearMatMul-10/21):
//   acc = sum_k (A[m, k] - a_zp) * (B[k, n] - b_zp)                    (int32)
//   Y[m, n] = saturate(rint(acc * (a_scale * b_scale / y_scale)) + y_zp)
// the multiplier computed in float, as onnxruntime does.
#include "backends/cpu/ref/integer_matmul.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_QLinearMatMul(const CompileContext& ctx) {
  TSR_ASSIGN_OR_RETURN(IntMatMulGeometry g, IntMatMulGeometry::of(ctx.input(0).shape, ctx.input(3).shape));
  const DType at = ctx.input(0).dtype, bt = ctx.input(3).dtype, yt = ctx.outputs[0].dtype;
  return make_fn_kernel([=](const KernelContext& k) {
    const Tensor& as = k.input(1);
    const Tensor& bs = k.input(4);
    const float ys = scale_at(k.input(6), 0);
    const int64_t yzp = int_at(k.input(7), 0);
    return dispatch_quant(at, [&](auto ta) {
      return dispatch_quant(bt, [&](auto tb) {
        return dispatch_quant(yt, [&](auto ty) {
          using TA = decltype(ta);
          using TB = decltype(tb);
          using TY = decltype(ty);
          TY* y = k.output(0).data_as<TY>();
          g.run(k.input(0).data_as<TA>(), k.input(3).data_as<TB>(), &k.input(2), &k.input(5),
                [&](int64_t bi, int64_t i, int64_t j, int32_t acc) {
                  const float mult = scale_at(as, as.numel() == 1 ? 0 : i) * scale_at(bs, bs.numel() == 1 ? 0 : j) / ys;
                  y[(bi * g.m + i) * g.n + j] =
                      saturate_round<TY>(std::nearbyint(static_cast<float>(acc) * mult) + static_cast<float>(yzp));
                });
          return Status::ok();
        });
      });
    });
  });
}

}  // namespace tessera::ref
