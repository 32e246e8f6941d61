// Split (ONNX opset 2, 11, 13, 18): splits input along `axis` (default 0) into the node's
// outputs. Sizes: `split` attribute (opset < 13) or optional int64 input 1 (13+), which
// must sum to the dim; otherwise equal parts: from opset 18 with num_outputs, parts of
// ceil(dim / n) with a smaller last part; else the dim must divide evenly.
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {
Status infer(InferContext& ctx) {
  const Shape& in = ctx.input(0).shape;
  const int64_t rank = static_cast<int64_t>(in.size());
  if (rank == 0) return ctx.error("cannot split a scalar");
  TSR_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.node().attr_i("axis", 0), rank, ctx.node()));
  const int64_t n = static_cast<int64_t>(ctx.num_outputs());
  const int64_t dim = in[axis];
  std::vector<int64_t> split;
  bool given = false;
  if (ctx.node().opset < 13) {
    const Attribute* a = ctx.node().find_attr("split");
    if (a && a->type == AttrType::kInts && !a->ints.empty()) { split = a->ints; given = true; }
  } else if (ctx.has_input(1)) {
    TSR_ASSIGN_OR_RETURN(split, ctx.const_ints(1));
    given = true;
  }
  if (given) {
    if (static_cast<int64_t>(split.size()) != n)
      return ctx.error("split has " + std::to_string(split.size()) + " sizes but the node has " + std::to_string(n) + " outputs");
    int64_t sum = 0;
    for (int64_t s : split) {
      if (s < 0 || s > dim) return ctx.error("split size " + std::to_string(s) + " is out of range for dim " + std::to_string(dim));
      sum += s;
    }
    if (sum != dim)
      return ctx.error("split sizes sum to " + std::to_string(sum) + " but axis " + std::to_string(axis) + " has size " +
                       std::to_string(dim));
  } else if (ctx.node().opset >= 18 && ctx.node().find_attr("num_outputs")) {
    const int64_t num = ctx.node().attr_i("num_outputs", 0);
    if (num != n || num < 1)
      return ctx.error("num_outputs is " + std::to_string(num) + " but the node has " + std::to_string(n) + " outputs");
    const int64_t chunk = (dim + n - 1) / n;
    int64_t left = dim;
    for (int64_t i = 0; i < n; ++i) {
      split.push_back(std::min(chunk, left));
      left -= split.back();
    }
  } else {
    if (dim % n != 0)
      return ctx.error("axis " + std::to_string(axis) + " of size " + std::to_string(dim) + " does not split evenly into " +
                       std::to_string(n) + " outputs");
    split.assign(n, dim / n);
  }
  for (int64_t i = 0; i < n; ++i) {
    Shape s = in;
    s[axis] = split[i];
    ctx.output(i) = {ctx.input(0).dtype, s, nullptr};
  }
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_Split = {"Split", 1, 2, 1, -1, infer};

}  // namespace tessera
