// QLinearConv reference kernel (ONNX QLinearConv-10; runtime/ops/q_linear_conv.cc), as the
// ONNX reference implementation computes it:
//   acc = B[m] + sum (X - x_zp) * (W - w_zp[m])                       (int32; integer_conv.h)
//   mult = x_scale * w_scale[m] / y_scale                              (float, as numpy's float32)
//   Y = saturate(rint(acc * mult + y_zp))     (in double; rint rounds half to even)
// The zero point is added before rounding, which matters at ties (rint(0.5 + 1) = 2).
#include <cmath>
#include <limits>

#include "backends/cpu/ref/integer_conv.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_QLinearConv(const CompileContext& ctx) {
  TSR_ASSIGN_OR_RETURN(IntConvGeometry g, IntConvGeometry::of(ctx, 0, 3));
  const DType xt = ctx.input(0).dtype, wt = ctx.input(3).dtype, yt = ctx.outputs[0].dtype;
  return make_fn_kernel([=](const KernelContext& k) {
    const float xs = k.input(1).data_as<float>()[0], ys = k.input(6).data_as<float>()[0];
    const Tensor& ws = k.input(4);
    const int64_t x_zp = int_at(k.input(2), 0), y_zp = int_at(k.input(7), 0);
    const int32_t* bias = k.has_input(8) ? k.input(8).data_as<int32_t>() : nullptr;
    return dispatch_quant(xt, [&](auto tx) {
      return dispatch_quant(wt, [&](auto tw) {
        return dispatch_quant(yt, [&](auto ty) {
          using TX = decltype(tx);
          using TW = decltype(tw);
          using TY = decltype(ty);
          TY* y = k.output(0).data_as<TY>();
          g.run(k.input(0).data_as<TX>(), k.input(3).data_as<TW>(), x_zp, &k.input(5),
                [&](int64_t m, int64_t i, int32_t acc) {
                  const float mult = xs * ws.data_as<float>()[ws.numel() == 1 ? 0 : m] / ys;
                  const int64_t sum = static_cast<int64_t>(acc) + (bias ? bias[m] : 0);
                  double v = std::nearbyint(static_cast<double>(sum) * static_cast<double>(mult) + static_cast<double>(y_zp));
                  if (std::isnan(v)) v = 0;
                  const double lo = static_cast<double>(std::numeric_limits<TY>::lowest());
                  const double hi = static_cast<double>(std::numeric_limits<TY>::max());
                  y[i] = static_cast<TY>(v < lo ? lo : v > hi ? hi : v);
                });
          return Status::ok();
        });
      });
    });
  });
}

}  // namespace tessera::ref
