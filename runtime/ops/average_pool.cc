// AveragePool (ONNX opset 1, 7, 10, 11, 19; followed for opsets 7..21): mean over sliding
// windows of X [N, C, D1, ...], giving Y [N, C, O1, ...]. Attributes: kernel_shape
// (required), strides, dilations (opset 19), pads, auto_pad, ceil_mode (opset 10),
// count_include_pad (opset 7; 0: divide by the number of taps inside X, 1: by the kernel
// size, even for a ceil_mode window that reaches past the end pad, as onnxruntime and the
// ONNX reference implementation do). With ceil_mode a last window that would start in the
// end padding is dropped (ONNX shape inference, PyTorch; onnxruntime 1.20 keeps it).
// float only.
#include "runtime/ops/op_schema.h"
#include "runtime/ops/spatial_attrs.h"

namespace tessera {

namespace {

Status infer(InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  if (x.dtype != DType::kFloat32) return ctx.unsupported(std::string("dtype ") + dtype_name(x.dtype) + " is not supported (float)");
  const int64_t ceil_mode = ctx.node().attr_i("ceil_mode", 0);
  const int64_t cip = ctx.node().attr_i("count_include_pad", 0);
  if (ceil_mode != 0 && ceil_mode != 1) return ctx.error("ceil_mode must be 0 or 1, got " + std::to_string(ceil_mode));
  if (cip != 0 && cip != 1) return ctx.error("count_include_pad must be 0 or 1, got " + std::to_string(cip));
  TSR_ASSIGN_OR_RETURN(WindowGeometry g, window_geometry(ctx.node(), x.shape, {}, ceil_mode == 1));
  for (int d = 0; d < g.rank; ++d)
    if (g.pads_begin[d] >= g.kernel[d] || g.pads_end[d] >= g.kernel[d])
      return ctx.error("pads (" + std::to_string(g.pads_begin[d]) + ", " + std::to_string(g.pads_end[d]) +
                       ") must be smaller than the kernel size " + std::to_string(g.kernel[d]) + " in spatial dim " +
                       std::to_string(d));
  ctx.output(0).dtype = x.dtype;
  ctx.output(0).shape = {x.shape[0], x.shape[1]};
  ctx.output(0).shape.insert(ctx.output(0).shape.end(), g.out.begin(), g.out.end());
  return Status::ok();
}

}  // namespace

const OpSchema kSchema_AveragePool = {"AveragePool", 1, 1, 1, 1, infer};

}  // namespace tessera
