// ConvInteger reference kernel (ONNX ConvInteger-10; runtime/ops/conv_integer.cc):
//   Y[n, m, o] = sum (X - x_zero_point) * (W - w_zero_point[m])   (int32; integer_conv.h)
#include "backends/cpu/ref/integer_conv.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_ConvInteger(const CompileContext& ctx) {
  TSR_ASSIGN_OR_RETURN(IntConvGeometry g, IntConvGeometry::of(ctx, 0, 1));
  const DType xt = ctx.input(0).dtype, wt = ctx.input(1).dtype;
  return make_fn_kernel([=](const KernelContext& k) {
    const int64_t x_zp = k.has_input(2) ? int_at(k.input(2), 0) : 0;
    const Tensor* w_zp = k.has_input(3) ? &k.input(3) : nullptr;
    int32_t* y = k.output(0).data_as<int32_t>();
    return dispatch_quant(xt, [&](auto tx) {
      return dispatch_quant(wt, [&](auto tw) {
        using TX = decltype(tx);
        using TW = decltype(tw);
        g.run(k.input(0).data_as<TX>(), k.input(1).data_as<TW>(), x_zp, w_zp,
              [&](int64_t, int64_t i, int32_t acc) { y[i] = acc; });
        return Status::ok();
      });
    });
  });
}

}  // namespace tessera::ref
