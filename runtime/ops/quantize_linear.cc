// QuantizeLinear and DequantizeLinear (ONNX opsets 10, 13, 19, 21; followed for 7..21):
//   QuantizeLinear:   Y = saturate(round_half_to_even(X / y_scale) + y_zero_point)
//   DequantizeLinear: Y = (X - x_zero_point) * x_scale
// Scale and zero point are per-tensor (opset 10+), per-axis along `axis` (13+) or per block
// of `block_size` elements along `axis` (21); see quant_params.h. QuantizeLinear: X float
// or int32, scale float, Y int8/uint8/int16/uint16 (the zero point's dtype, else the
// `output_dtype` attribute of opset 21, else uint8). DequantizeLinear: X int8/uint8/int16/
// uint16/int32, scale float, Y float. Float16/bfloat16 scales and float8/int4 types are
// unimplemented.
#include "runtime/ops/op_schema.h"
#include "runtime/ops/quant_params.h"

namespace tessera {

namespace {

bool is_quant_type(DType d) {
  return d == DType::kInt8 || d == DType::kUInt8 || d == DType::kInt16 || d == DType::kUInt16;
}

Status check_params(InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  const ValueInfo& scale = ctx.input(1);
  if (scale.dtype != DType::kFloat32)
    return ctx.unsupported(std::string("scale dtype ") + dtype_name(scale.dtype) + " is not supported (float)");
  const Shape* zp = ctx.has_input(2) ? &ctx.input(2).shape : nullptr;
  Result<QuantParamLayout> l = quant_param_layout(ctx.node(), x.shape, scale.shape, zp);
  return l.status();
}

Status infer_quantize(InferContext& ctx) {
  const Node& n = ctx.node();
  const ValueInfo& x = ctx.input(0);
  if (x.dtype != DType::kFloat32 && x.dtype != DType::kInt32)
    return ctx.unsupported(std::string("input dtype ") + dtype_name(x.dtype) + " is not supported (float, int32)");
  DType out = DType::kUInt8;
  if (ctx.has_input(2)) {
    out = ctx.input(2).dtype;
  } else if (n.opset >= 21 && n.find_attr("output_dtype")) {
    const int64_t code = n.attr_i("output_dtype", 0);
    if (const char* exotic = onnx_exotic_dtype_name(code))
      return ctx.unsupported(std::string("output_dtype ") + exotic + " is not supported");
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
    return ctx.unsupported(std::string("output dtype ") + dtype_name(out) + " is not supported (int8, uint8, int16, uint16)");
  TSR_RETURN_IF_ERROR(check_params(ctx));
  ctx.output(0).dtype = out;
  ctx.output(0).shape = x.shape;
  return Status::ok();
}

Status infer_dequantize(InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  if (!is_quant_type(x.dtype) && x.dtype != DType::kInt32)
    return ctx.unsupported(std::string("input dtype ") + dtype_name(x.dtype) +
                           " is not supported (int8, uint8, int16, uint16, int32)");
  if (ctx.has_input(2) && ctx.input(2).dtype != x.dtype)
    return ctx.error(std::string("zero point dtype ") + dtype_name(ctx.input(2).dtype) + " must match input dtype " +
                     dtype_name(x.dtype));
  TSR_RETURN_IF_ERROR(check_params(ctx));
  ctx.output(0).dtype = DType::kFloat32;
  ctx.output(0).shape = x.shape;
  return Status::ok();
}

}  // namespace

const OpSchema kSchema_QuantizeLinear = {"QuantizeLinear", 2, 3, 1, 1, infer_quantize};
const OpSchema kSchema_DequantizeLinear = {"DequantizeLinear", 2, 3, 1, 1, infer_dequantize};

}  // namespace tessera
