// QuantizeLinear and DequantizeLinear (ONNX opsets 10, 13, 19, 21; followed for 7..21):
//   QuantizeLinear:   Y = saturate(round_half_to_even(X / y_scale) + y_zero_point)
//                     float8 Y: Y = float8(X / y_scale + y_zero_point), round to nearest
//                     even, overflow per `saturate` (opset 19, default 1; tessera/float8.h)
//   DequantizeLinear: Y = (X - x_zero_point) * x_scale
// Scale and zero point are per-tensor (opset 10+), per-axis along `axis` (13+) or per block
// of `block_size` elements along `axis` (21); see quant_params.h. QuantizeLinear: X float,
// float16, bfloat16 or int32; scale float, float16 or bfloat16; Y int8/uint8/int16/uint16/
// int4/uint4/float8 (the zero point's dtype, else the `output_dtype` attribute of opset 21,
// else uint8). DequantizeLinear: X int8/uint8/int16/uint16/int32/int4/uint4/float8; Y has
// the scale's dtype (float before opset 19). float4e2m1 is not supported.
#include "runtime/ops/op_schema.h"
#include "runtime/ops/quant_params.h"

namespace tessera {

namespace {

bool is_quant_type(DType d) {
  return d == DType::kInt8 || d == DType::kUInt8 || d == DType::kInt16 || d == DType::kUInt16 || dtype_is_int4(d) ||
         dtype_is_float8(d);
}

bool is_scale_type(DType d) { return d == DType::kFloat32 || d == DType::kFloat16 || d == DType::kBFloat16; }

Status check_params(InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  const ValueInfo& scale = ctx.input(1);
  if (!is_scale_type(scale.dtype))
    return ctx.unsupported(std::string("scale dtype ") + dtype_name(scale.dtype) +
                           " is not supported (float, float16, bfloat16)");
  const Shape* zp = ctx.has_input(2) ? &ctx.input(2).shape : nullptr;
  Result<QuantParamLayout> l = quant_param_layout(ctx.node(), x.shape, scale.shape, zp);
  return l.status();
}

Status infer_quantize(InferContext& ctx) {
  const Node& n = ctx.node();
  const ValueInfo& x = ctx.input(0);
  if (!is_scale_type(x.dtype) && x.dtype != DType::kInt32)
    return ctx.unsupported(std::string("input dtype ") + dtype_name(x.dtype) +
                           " is not supported (float, float16, bfloat16, int32)");
  DType out = DType::kUInt8;
  if (ctx.has_input(2)) {
    out = ctx.input(2).dtype;
  } else if (n.opset >= 21 && n.find_attr("output_dtype")) {
    const int64_t code = n.attr_i("output_dtype", 0);
    if (code == 23) return ctx.unsupported("output_dtype float4e2m1 is not supported");
    if (code != 0) {
      if (!dtype_is_valid(static_cast<int32_t>(code)))
        return ctx.error("output_dtype " + std::to_string(code) + " is not a known element type");
      out = static_cast<DType>(code);
    }
  }
  if (ctx.has_input(2) && n.opset >= 21 && n.attr_i("output_dtype", 0) != 0 &&
      n.attr_i("output_dtype", 0) != static_cast<int64_t>(out))
    return ctx.error("output_dtype does not match the zero point's dtype " + std::string(dtype_name(out)));
  if (!is_quant_type(out))
    return ctx.unsupported(std::string("output dtype ") + dtype_name(out) +
                           " is not supported (int8, uint8, int16, uint16, int4, uint4, float8)");
  TSR_RETURN_IF_ERROR(check_params(ctx));
  ctx.output(0).dtype = out;
  ctx.output(0).shape = x.shape;
  return Status::ok();
}

Status infer_dequantize(InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  if (!is_quant_type(x.dtype) && x.dtype != DType::kInt32)
    return ctx.unsupported(std::string("input dtype ") + dtype_name(x.dtype) +
                           " is not supported (int8, uint8, int16, uint16, int32, int4, uint4, float8)");
  if (ctx.has_input(2) && ctx.input(2).dtype != x.dtype)
    return ctx.error(std::string("zero point dtype ") + dtype_name(ctx.input(2).dtype) + " must match input dtype " +
                     dtype_name(x.dtype));
  TSR_RETURN_IF_ERROR(check_params(ctx));
  // Opset 19 lets the scale be float16/bfloat16; Y takes the scale's dtype.
  ctx.output(0).dtype = ctx.input(1).dtype;
  ctx.output(0).shape = x.shape;
  return Status::ok();
}

}  // namespace

const OpSchema kSchema_QuantizeLinear = {"QuantizeLinear", 2, 3, 1, 1, infer_quantize};
const OpSchema kSchema_DequantizeLinear = {"DequantizeLinear", 2, 3, 1, 1, infer_dequantize};

}  // namespace tessera
