// LpPool (ONNX opset 2, 11, 18; followed for opsets 7..21): the p-norm over sliding windows
// of X [N, C, D1, ...], giving Y [N, C, O1, ...]:
//   Y[n, c, o] = (sum_{taps inside X} |X[n, c, pos]|^p)^(1/p)
// (padding contributes 0). Attributes: kernel_shape (required), p (default 2, >= 1),
// strides, pads, auto_pad, and from opset 18 dilations and ceil_mode (ignored before, as
// the attributes did not exist). float, double.
#include "runtime/ops/op_schema.h"
#include "runtime/ops/spatial_attrs.h"

namespace tessera {

namespace {

Status infer(InferContext& ctx) {
  const Node& n = ctx.node();
  const ValueInfo& x = ctx.input(0);
  if (x.dtype != DType::kFloat32 && x.dtype != DType::kFloat64)
    return ctx.unsupported(std::string("dtype ") + dtype_name(x.dtype) + " is not supported (float, double)");
  if (const Attribute* a = n.find_attr("p"); a && a->type != AttrType::kInt) return ctx.error("attribute p must be an int");
  const int64_t p = n.attr_i("p", 2);
  if (p < 1 || p > 1024) return ctx.error("p must be in [1, 1024], got " + std::to_string(p));
  const int64_t ceil_mode = n.opset >= 18 ? n.attr_i("ceil_mode", 0) : 0;
  if (ceil_mode != 0 && ceil_mode != 1) return ctx.error("ceil_mode must be 0 or 1, got " + std::to_string(ceil_mode));
  TSR_ASSIGN_OR_RETURN(WindowGeometry g, window_geometry(n, x.shape, {}, ceil_mode == 1));
  ctx.output(0).dtype = x.dtype;
  ctx.output(0).shape = {x.shape[0], x.shape[1]};
  ctx.output(0).shape.insert(ctx.output(0).shape.end(), g.out.begin(), g.out.end());
  return Status::ok();
}

}  // namespace

const OpSchema kSchema_LpPool = {"LpPool", 1, 1, 1, 1, infer};

}  // namespace tessera
