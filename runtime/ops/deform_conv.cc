// DeformConv (ONNX opset 19; opset 22 only widens T to bfloat16, which Tessera does not hold):
// deformable convolution (Dai et al. 2017, arXiv:1703.06211; Zhu et al. 2018, arXiv:1811.11168)
// over N spatial dims.
//   X      [N, C, D1, ..., Dn]                      T = float, double or float16
//   W      [oC, C/group, k1, ..., kn]               T
//   offset [N, offset_group * k1*...*kn * n, O1, ..., On]   T, laid out as
//          [N, offset_group, k1, ..., kn, n, O1, ..., On] (the n coordinate deltas of each tap)
//   B      [oC] (optional, default 0)               T
//   mask   [N, offset_group * k1*...*kn, O1, ..., On] (optional, default 1)   T
//   Y      [N, oC, O1, ..., On]                     T
// Attributes: group (>= 1), offset_group (>= 1, divides C), kernel_shape (defaults to W's
// spatial shape), strides, dilations, pads; no auto_pad (the spec has none). O follows Conv's
// NOTSET formula (runtime/ops/spatial_attrs.h), and offset and mask must have exactly that
// spatial shape. The mask's channel count is offset_group * prod(k) as in the ONNX reference
// implementation (the spec's "* n" for the N-d mask is a typo there). The math is in the
// kernel (backends/cpu/ref/deform_conv.cc). Errors: invalid_argument naming the node for any
// shape, dtype or attribute mismatch; unimplemented for another T.
#include "runtime/ops/op_schema.h"
#include "runtime/ops/spatial_attrs.h"

namespace tessera {

namespace {

Status check_shape(InferContext& ctx, const char* what, const Shape& got, const Shape& want) {
  if (got != want)
    return ctx.error(std::string(what) + " must have shape " + shape_to_string(want) + ", got " + shape_to_string(got));
  return Status::ok();
}

Status infer(InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  const ValueInfo& w = ctx.input(1);
  const ValueInfo& off = ctx.input(2);
  const Node& n = ctx.node();
  if (x.dtype != DType::kFloat32 && x.dtype != DType::kFloat64 && x.dtype != DType::kFloat16)
    return ctx.unsupported(std::string("X dtype ") + dtype_name(x.dtype) + " is not supported (float, double, float16)");
  const char* names[5] = {"X", "W", "offset", "B", "mask"};
  for (size_t i = 1; i < 5; ++i)
    if (ctx.has_input(i) && ctx.input(i).dtype != x.dtype)
      return ctx.error(std::string(names[i]) + " must have X's dtype " + dtype_name(x.dtype) + ", got " +
                       dtype_name(ctx.input(i).dtype));
  if (n.find_attr("auto_pad")) return ctx.error("DeformConv has no auto_pad attribute; give pads");
  if (x.shape.size() < 3) return ctx.error("X must have rank >= 3 ([N, C, D1, ...]), got " + shape_to_string(x.shape));
  if (w.shape.size() != x.shape.size())
    return ctx.error("W " + shape_to_string(w.shape) + " must have the rank of X " + shape_to_string(x.shape));
  const int64_t group = n.attr_i("group", 1), offset_group = n.attr_i("offset_group", 1);
  if (group < 1) return ctx.error("group must be >= 1, got " + std::to_string(group));
  if (offset_group < 1) return ctx.error("offset_group must be >= 1, got " + std::to_string(offset_group));
  const int64_t batch = x.shape[0], c = x.shape[1], m = w.shape[0];
  if (c % group != 0 || c / group != w.shape[1])
    return ctx.error("X has " + std::to_string(c) + " channels but W " + shape_to_string(w.shape) + " with group " +
                     std::to_string(group) + " expects W.shape[1] * group channels");
  if (m % group != 0)
    return ctx.error("W's " + std::to_string(m) + " output channels are not divisible by group " + std::to_string(group));
  if (c % offset_group != 0)
    return ctx.error("X's " + std::to_string(c) + " channels are not divisible by offset_group " +
                     std::to_string(offset_group));
  std::vector<int64_t> w_kernel(w.shape.begin() + 2, w.shape.end());
  TSR_ASSIGN_OR_RETURN(WindowGeometry g, window_geometry(n, x.shape, w_kernel, /*ceil_mode=*/false));
  // Bounds taps and offset_group * taps * rank below 2^62 (kernel sizes are <= 2^30 each).
  constexpr int64_t kMaxTaps = int64_t{1} << 36;
  int64_t taps = 1;
  for (int64_t k : g.kernel) {
    if (k > kMaxTaps / taps) return ctx.error("the kernel " + shape_to_string(g.kernel) + " has too many taps");
    taps *= k;
  }
  if (offset_group > (int64_t{1} << 20))
    return ctx.error("offset_group " + std::to_string(offset_group) + " is too large (> 2^20)");
  Shape want_off = {batch, offset_group * taps * g.rank};
  want_off.insert(want_off.end(), g.out.begin(), g.out.end());
  TSR_RETURN_IF_ERROR(check_shape(ctx, "offset", off.shape, want_off));
  if (ctx.has_input(3)) TSR_RETURN_IF_ERROR(check_shape(ctx, "B", ctx.input(3).shape, Shape{m}));
  if (ctx.has_input(4)) {
    Shape want_mask = {batch, offset_group * taps};
    want_mask.insert(want_mask.end(), g.out.begin(), g.out.end());
    TSR_RETURN_IF_ERROR(check_shape(ctx, "mask", ctx.input(4).shape, want_mask));
  }
  ValueInfo& y = ctx.output(0);
  y.dtype = x.dtype;
  y.shape = {batch, m};
  y.shape.insert(y.shape.end(), g.out.begin(), g.out.end());
  return Status::ok();
}

}  // namespace

const OpSchema kSchema_DeformConv = {"DeformConv", 3, 5, 1, 1, infer};

}  // namespace tessera
