// QuantizeLinear / DequantizeLinear reference kernels (ONNX opsets 10, 13, 19, 21):
//   Q: Y[i] = saturate(rint(X[i] / scale[p(i)]) + zero_point[p(i)])   (X / scale in float)
//      float8 Y: Y[i] = float8(X[i] / scale[p(i)] + zero_point[p(i)])  (round to nearest even)
//   D: Y[i] = float(X[i] - zero_point[p(i)]) * scale[p(i)]             (difference in int64;
//      float8 X: in float)
// with p(i) the parameter index of QuantParamLayout (per-tensor, per-axis or blocked).
#include <algorithm>

#include "backends/cpu/ref/quant_util.h"
#include "runtime/ops/quant_params.h"
#include "tessera/float8.h"
#include "tessera/half.h"

namespace tessera::ref {

namespace {
/// Element `i` of a float32, float16, bfloat16 or int32 tensor as a float.
float real_at(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kFloat16: return half_to_float(t.data_as<uint16_t>()[i]);
    case DType::kBFloat16: return bfloat16_to_float(t.data_as<uint16_t>()[i]);
    case DType::kInt32: return static_cast<float>(t.data_as<int32_t>()[i]);
    default: return t.data_as<float>()[i];
  }
}

/// Stores `v` as element `i` of a float32, float16 or bfloat16 tensor.
void store_real(Tensor& t, int64_t i, float v) {
  switch (t.dtype()) {
    case DType::kFloat16: t.data_as<uint16_t>()[i] = float_to_half(v); break;
    case DType::kBFloat16: t.data_as<uint16_t>()[i] = float_to_bfloat16(v); break;
    default: t.data_as<float>()[i] = v; break;
  }
}
}  // namespace

Result<std::unique_ptr<Kernel>> make_QuantizeLinear(const CompileContext& ctx) {
  const bool has_zp = ctx.has_input(2);
  TSR_ASSIGN_OR_RETURN(QuantParamLayout l, quant_param_layout(ctx.node, ctx.input(0).shape, ctx.input(1).shape,
                                                              has_zp ? &ctx.input(2).shape : nullptr));
  const DType out = ctx.outputs[0].dtype;
  const bool saturate = ctx.node.opset < 19 || ctx.node.attr_i("saturate", 1) != 0;
  if (const Float8Format* f8 = float8_format(out)) {
    const Float8Format fmt = *f8;
    return make_fn_kernel([=](const KernelContext& k) {
      const Tensor& x = k.input(0);
      const uint8_t* zp = has_zp ? k.input(2).data_as<uint8_t>() : nullptr;
      uint8_t* y = k.output(0).data_as<uint8_t>();
      for (int64_t i = 0; i < x.numel(); ++i) {
        const int64_t p = l.param_index(i);
        const float v = real_at(x, i) / scale_at(k.input(1), p) + (zp ? float8_to_float(zp[p], fmt) : 0.f);
        y[i] = float_to_float8(v, fmt, saturate);
      }
      return Status::ok();
    });
  }
  if (dtype_is_int4(out)) {
    const float lo = out == DType::kInt4 ? -8.f : 0.f, hi = out == DType::kInt4 ? 7.f : 15.f;
    return make_fn_kernel([=](const KernelContext& k) {
      const Tensor& x = k.input(0);
      int8_t* y = k.output(0).data_as<int8_t>();  // one element per byte; uint4 0..15 fits too
      for (int64_t i = 0; i < x.numel(); ++i) {
        const int64_t p = l.param_index(i);
        float v = std::nearbyint(real_at(x, i) / scale_at(k.input(1), p));
        if (has_zp) v += static_cast<float>(int_at(k.input(2), p));
        y[i] = static_cast<int8_t>(std::isnan(v) ? 0.f : std::min(std::max(v, lo), hi));
      }
      return Status::ok();
    });
  }
  return make_fn_kernel([=](const KernelContext& k) {
    return dispatch_quant(out, [&](auto tag) -> Status {
      using Q = decltype(tag);
      const Tensor& x = k.input(0);
      const Q* zp = has_zp ? k.input(2).data_as<Q>() : nullptr;
      Q* y = k.output(0).data_as<Q>();
      for (int64_t i = 0; i < x.numel(); ++i) {
        const int64_t p = l.param_index(i);
        const float q = std::nearbyint(real_at(x, i) / scale_at(k.input(1), p));
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
  const Float8Format* f8 = float8_format(ctx.input(0).dtype);
  const Float8Format fmt = f8 ? *f8 : kFloat8E4M3FN;
  return make_fn_kernel([=](const KernelContext& k) {
    const Tensor& x = k.input(0);
    Tensor& y = k.output(0);
    for (int64_t i = 0; i < x.numel(); ++i) {
      const int64_t p = l.param_index(i);
      float d;
      if (f8) {
        d = float8_to_float(x.data_as<uint8_t>()[i], fmt) -
            (has_zp ? float8_to_float(k.input(2).data_as<uint8_t>()[p], fmt) : 0.f);
      } else {
        d = static_cast<float>(int_at(x, i) - (has_zp ? int_at(k.input(2), p) : 0));
      }
      store_real(y, i, d * scale_at(k.input(1), p));
    }
    return Status::ok();
  });
}

}  // namespace tessera::ref
