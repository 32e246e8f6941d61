// MaxPool (ONNX opset 1, 8, 10, 11, 12; followed for opsets 7..21): max over sliding
// windows of X [N, C, D1, ...], giving Y [N, C, O1, ...]. Attributes: kernel_shape
// (required), strides, dilations, pads, auto_pad, ceil_mode, storage_order. Padding never
// wins the max. The optional second output Indices (int64, same shape as Y) holds the flat
// index of each max in X: row-major over (n, c, spatial), or with storage_order = 1
// column-major over the spatial dims. Pads must be smaller than the kernel (as in
// onnxruntime), so no window lies entirely in the padding. With ceil_mode a last window
// that would start in the end padding is dropped (ONNX shape inference, PyTorch);
// onnxruntime 1.20 keeps it and outputs -FLT_MAX there. float, double, int8, uint8.
#include "runtime/ops/op_schema.h"
#include "runtime/ops/spatial_attrs.h"

namespace tessera {

namespace {

Status infer(InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  if (x.dtype != DType::kFloat32 && x.dtype != DType::kFloat64 && x.dtype != DType::kInt8 && x.dtype != DType::kUInt8)
    return ctx.unsupported(std::string("dtype ") + dtype_name(x.dtype) + " is not supported (float, double, int8, uint8)");
  const int64_t ceil_mode = ctx.node().attr_i("ceil_mode", 0);
  const int64_t storage_order = ctx.node().attr_i("storage_order", 0);
  if (ceil_mode != 0 && ceil_mode != 1) return ctx.error("ceil_mode must be 0 or 1, got " + std::to_string(ceil_mode));
  if (storage_order != 0 && storage_order != 1)
    return ctx.error("storage_order must be 0 or 1, got " + std::to_string(storage_order));
  TSR_ASSIGN_OR_RETURN(WindowGeometry g, window_geometry(ctx.node(), x.shape, {}, ceil_mode == 1));
  for (int d = 0; d < g.rank; ++d)
    if (g.pads_begin[d] >= g.kernel[d] || g.pads_end[d] >= g.kernel[d])
      return ctx.error("pads (" + std::to_string(g.pads_begin[d]) + ", " + std::to_string(g.pads_end[d]) +
                       ") must be smaller than the kernel size " + std::to_string(g.kernel[d]) + " in spatial dim " +
                       std::to_string(d));
  Shape y = {x.shape[0], x.shape[1]};
  y.insert(y.end(), g.out.begin(), g.out.end());
  ctx.output(0).dtype = x.dtype;
  ctx.output(0).shape = y;
  if (ctx.num_outputs() > 1) {
    ctx.output(1).dtype = DType::kInt64;
    ctx.output(1).shape = y;
  }
  return Status::ok();
}

}  // namespace

const OpSchema kSchema_MaxPool = {"MaxPool", 1, 1, 1, 2, infer};

}  // namespace tessera
