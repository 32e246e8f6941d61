// DFT (ONNX opset 17, 20): the discrete Fourier transform of a real or complex signal along
// one axis.
//   input      [batch, s1, ..., sk, 1] (real) or [..., 2] (complex: real, imaginary), float
//              or double.
//   dft_length optional input 1, a scalar int (default: the signal's length on `axis`);
//              a longer length zero-pads, a shorter one truncates.
//   axis       opset 17: attribute, default 1; opset 20: optional input 2, a scalar int,
//              default -2. Negative counts from the end; the last axis (real/imaginary) and,
//              from opset 20, the batch axis 0 still allowed by the spec's range
//              [-r, -2] U [0, r - 2] may not be the complex axis.
//   inverse    attribute (0): forward  Y[k] = sum_n x[n] exp(-2 pi i k n / L)
//                              inverse  Y[k] = 1/L sum_n x[n] exp(+2 pi i k n / L)
//   onesided   attribute (0): keep only bins 0 .. floor(L / 2) (the rest mirror them for a
//              real input); real input only, as the spec requires.
//   output     the input's shape with dim `axis` = L (or floor(L / 2) + 1) and the last dim 2.
// dft_length and axis must be known at plan time.
#include "runtime/ops/dft_params.h"
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {
Status infer(InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  if (x.dtype != DType::kFloat32 && x.dtype != DType::kFloat64)
    return ctx.unsupported(std::string("input dtype ") + dtype_name(x.dtype) + " is not supported (float, double)");
  std::optional<int64_t> length, axis;
  if (ctx.has_input(1)) {
    TSR_ASSIGN_OR_RETURN(std::vector<int64_t> v, ctx.const_ints(1));
    if (v.size() != 1) return ctx.error("dft_length must be a scalar");
    length = v[0];
  }
  if (ctx.node().opset >= 20) {
    if (ctx.node().find_attr("axis")) return ctx.error("attribute 'axis' is an input from opset 20");
    if (ctx.num_inputs() > 2 && ctx.has_input(2)) {
      TSR_ASSIGN_OR_RETURN(std::vector<int64_t> v, ctx.const_ints(2));
      if (v.size() != 1) return ctx.error("axis must be a scalar");
      axis = v[0];
    }
  } else if (ctx.num_inputs() > 2) {
    return ctx.error("has an 'axis' input, which only opset 20+ has");
  }
  TSR_ASSIGN_OR_RETURN(DftParams p, dft_params(ctx.node(), x.shape, length, axis));
  Shape out = x.shape;
  out[static_cast<size_t>(p.axis)] = p.out_bins;
  out.back() = 2;
  ctx.output(0) = {x.dtype, out, nullptr};
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_DFT = {"DFT", 1, 3, 1, 1, infer};

}  // namespace tessera
