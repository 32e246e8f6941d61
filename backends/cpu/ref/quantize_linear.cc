// QuantizeLinear / DequantizeLinear reference kernels (ONNX opsets 10, 13, 19, 21):
//   Q: Y[i] = saturate(rint(X[i] / scale[p(i)]) + zero_point[p(i)])   (X / scale in float)
//   D: Y[i] = float(X[i] - zero_point[p(i)]) * scale[p(i)]             (difference in int64)
// with p(i) the parameter index of QuantParamLayout (per-tensor, per-axis or blocked).
#include "backends/cpu/ref/quant_util.h"
#include "runtime/ops/quant_params.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_QuantizeLinear(const CompileContext& ctx) {
  const bool has_zp = ctx.has_input(2);
  TSR_ASSIGN_OR_RETURN(QuantParamLayout l, quant_param_layout(ctx.node, ctx.input(0).shape, ctx.input(1).shape,
                                                              has_zp ? &ctx.input(2).shape : nullptr));
  const DType out = ctx.outputs[0].dtype;
  const bool int_x = ctx.input(0).dtype == DType::kInt32;
  return make_fn_kernel([=](const KernelContext& k) {
    return dispatch_quant(out, [&](auto tag) -> Status {
      using Q = decltype(tag);
      const Tensor& x = k.input(0);
      const float* scale = k.input(1).data_as<float>();
      const Q* zp = has_zp ? k.input(2).data_as<Q>() : nullptr;
      Q* y = k.output(0).data_as<Q>();
      for (int64_t i = 0; i < x.numel(); ++i) {
        const int64_t p = l.param_index(i);
        const float xv = int_x ? static_cast<float>(x.data_as<int32_t>()[i]) : x.data_as<float>()[i];
        const float q = std::nearbyint(xv / scale[p]);
        y[i] = saturate_round<Q>(q + (zp ? static_cast<float>(zp[p]) : 0.f));
      }
      return Status::ok();
    });
  });
}

Result<std::unique_ptr<Kernel>> make_DequantizeLinear(const CompileContext& ctx) {
  const bool has_zp = ctx.has_input(2);
  TSR_ASSIGN_OR_RETURN(QuantParamLayout l, quant_param_layout(ctx.node, ctx.input(0).shape, ctx.input(1).shape,
                                                              has_zp ? &ctx.input(2).shape : nullptr));
  return make_fn_kernel([=](const KernelContext& k) {
    const Tensor& x = k.input(0);
    const float* scale = k.input(1).data_as<float>();
    float* y = k.output(0).data_as<float>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      const int64_t p = l.param_index(i);
      const int64_t z = has_zp ? int_at(k.input(2), p) : 0;
      y[i] = static_cast<float>(int_at(x, i) - z) * scale[p];
    }
    return Status::ok();
  });
}

}  // namespace tessera::ref
