// MaxUnpool (ONNX opset 9, 11, 22): the partial inverse of MaxPool. X [N, C, D1, ..., Dn]
// (any dtype: values are only moved) and I (int64, X's shape) of flat row-major indices into
// the unpooled tensor [N, C, O1, ..., On], where (ONNX spec shape inference)
//   Oi = (Di - 1) * strides[i] - pads[i] - pads[n + i] + kernel_shape[i];
// every other element is 0. With the optional output_shape input (int64 [rank(X)], known
// when planning), the output has that shape, every dim at least the inferred one, and the
// unpooled tensor fills its leading corner: I still indexes [N, C, O1, ..., On], as the
// ONNX reference implementation and the ONNX node tests do it. Attributes: kernel_shape
// (required), strides (default 1), pads (default 0; ignored in favour of output_shape).
// max_unpool_inferred_shape() is shared with the kernel.
#include "runtime/ops/max_unpool.h"

#include "runtime/ops/op_schema.h"

namespace tessera {

Result<Shape> max_unpool_inferred_shape(const Node& node, const Shape& x) {
  auto err = [&](const std::string& m) { return invalid_argument(node.describe() + ": " + m); };
  if (x.size() < 3) return err("X must be [N, C, D1, ...] (rank >= 3), got " + shape_to_string(x));
  const size_t n = x.size() - 2;
  if (!node.find_attr("kernel_shape")) return err("attribute kernel_shape is required");
  const std::vector<int64_t> k = node.attr_ints("kernel_shape");
  const std::vector<int64_t> s = node.attr_ints("strides", std::vector<int64_t>(n, 1));
  const std::vector<int64_t> p = node.attr_ints("pads", std::vector<int64_t>(2 * n, 0));
  if (k.size() != n) return err("kernel_shape has " + std::to_string(k.size()) + " values, X has " + std::to_string(n) + " spatial dims");
  if (s.size() != n) return err("strides has " + std::to_string(s.size()) + " values, X has " + std::to_string(n) + " spatial dims");
  if (p.size() != 2 * n) return err("pads has " + std::to_string(p.size()) + " values, expected " + std::to_string(2 * n));
  Shape y = {x[0], x[1]};
  for (size_t i = 0; i < n; ++i) {
    if (k[i] < 1 || s[i] < 1) return err("kernel_shape and strides must be >= 1");
    if (p[i] < 0 || p[n + i] < 0) return err("pads must be >= 0");
    const int64_t o = (x[2 + i] - 1) * s[i] - p[i] - p[n + i] + k[i];
    if (o < 1) return err("unpooled spatial dim " + std::to_string(i) + " is " + std::to_string(o) + " (must be >= 1)");
    y.push_back(o);
  }
  return y;
}

namespace {
Status infer(InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  const ValueInfo& ind = ctx.input(1);
  if (dtype_size(x.dtype) == 0) return ctx.unsupported(std::string("X dtype ") + dtype_name(x.dtype) + " is not supported");
  if (ind.dtype != DType::kInt64) return ctx.error(std::string("I must be int64, got ") + dtype_name(ind.dtype));
  if (ind.shape != x.shape)
    return ctx.error("I " + shape_to_string(ind.shape) + " must have X's shape " + shape_to_string(x.shape));
  TSR_ASSIGN_OR_RETURN(Shape y, max_unpool_inferred_shape(ctx.node(), x.shape));
  if (ctx.has_input(2)) {
    const ValueInfo& os = ctx.input(2);
    if (os.shape.size() != 1 || os.shape[0] != static_cast<int64_t>(x.shape.size()))
      return ctx.error("output_shape must be a 1-D tensor of " + std::to_string(x.shape.size()) + " values, got shape " +
                       shape_to_string(os.shape));
    TSR_ASSIGN_OR_RETURN(std::vector<int64_t> want, ctx.const_ints(2));
    for (size_t d = 0; d < want.size(); ++d)
      if (want[d] < y[d])
        return ctx.error("output_shape " + shape_to_string(Shape(want.begin(), want.end())) +
                         " is smaller than the unpooled shape " + shape_to_string(y) + " in dim " + std::to_string(d));
    y.assign(want.begin(), want.end());
  }
  ctx.output(0).dtype = x.dtype;
  ctx.output(0).shape = y;
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_MaxUnpool = {"MaxUnpool", 2, 3, 1, 1, infer};

}  // namespace tessera
