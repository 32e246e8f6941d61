// Slice (ONNX opset 1, 10, 11, 13):
//   opset < 10: attributes starts, ends (required), axes (default 0..n-1); step 1.
//   opset >= 10: inputs starts, ends (required), axes, steps (optional), int32 or int64,
//   known at plan time. Negative starts/ends add the dim; then, per the spec, for step > 0
//   start and end clamp to [0, dim], for step < 0 start clamps to [0, dim-1] and end to
//   [-1, dim-1]. Negative axes count from the back; repeated axes and step 0 are errors.
#include <algorithm>

#include "runtime/ops/shape_params.h"

namespace tessera {

Result<SliceParams> resolve_slice(const Node& node, const Shape& data, const ConstIntInputs& in) {
  const int64_t rank = static_cast<int64_t>(data.size());
  std::vector<int64_t> starts, ends, axes, steps;
  if (node.opset < 10) {
    const Attribute* s = node.find_attr("starts");
    const Attribute* e = node.find_attr("ends");
    if (!s || s->type != AttrType::kInts || !e || e->type != AttrType::kInts)
      return invalid_argument(node.describe() + ": attributes starts and ends (ints) are required");
    starts = s->ints;
    ends = e->ints;
    axes = node.attr_ints("axes");
  } else {
    TSR_ASSIGN_OR_RETURN(starts, in.ints(1));
    TSR_ASSIGN_OR_RETURN(ends, in.ints(2));
    if (in.has(3)) { TSR_ASSIGN_OR_RETURN(axes, in.ints(3)); }
    if (in.has(4)) { TSR_ASSIGN_OR_RETURN(steps, in.ints(4)); }
  }
  const size_t n = starts.size();
  if (ends.size() != n)
    return invalid_argument(node.describe() + ": starts has " + std::to_string(n) + " values but ends has " +
                            std::to_string(ends.size()));
  if (node.find_attr("axes") == nullptr && !in.has(3) && axes.empty()) {
    for (size_t i = 0; i < n; ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (axes.size() != n)
    return invalid_argument(node.describe() + ": axes has " + std::to_string(axes.size()) + " values; expected " +
                            std::to_string(n));
  if (steps.empty()) steps.assign(n, 1);
  if (steps.size() != n)
    return invalid_argument(node.describe() + ": steps has " + std::to_string(steps.size()) + " values; expected " +
                            std::to_string(n));

  SliceParams p;
  p.start.assign(rank, 0);
  p.step.assign(rank, 1);
  p.out = data;
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < n; ++i) {
    TSR_ASSIGN_OR_RETURN(int64_t a, normalize_axis(axes[i], rank, node));
    if (seen[a]) return invalid_argument(node.describe() + ": axis " + std::to_string(axes[i]) + " is repeated");
    seen[a] = true;
    const int64_t dim = data[a];
    const int64_t step = steps[i];
    if (step == 0) return invalid_argument(node.describe() + ": step for axis " + std::to_string(axes[i]) + " is 0");
    int64_t start = starts[i], end = ends[i];
    if (start < 0) start += dim;   // no overflow: start < 0 and dim >= 0
    if (end < 0) end += dim;
    int64_t count;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      count = end > start ? (end - start - 1) / step + 1 : 0;
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
      // -step may overflow for INT64_MIN; (start - end - 1) / -step is then 0 anyway.
      const int64_t neg = step == INT64_MIN ? INT64_MAX : -step;
      count = start > end ? (start - end - 1) / neg + 1 : 0;
    }
    p.start[a] = count > 0 ? start : 0;
    p.step[a] = step;
    p.out[a] = count;
  }
  return p;
}

namespace {
Status infer(InferContext& ctx) {
  if (ctx.node().opset < 10 && ctx.num_inputs() > 1 && ctx.has_input(1))
    return ctx.error("opset " + std::to_string(ctx.node().opset) + " Slice takes starts/ends as attributes");
  if (ctx.node().opset >= 10 && (!ctx.has_input(1) || !ctx.has_input(2)))
    return ctx.error("inputs starts and ends are required");
  TSR_ASSIGN_OR_RETURN(SliceParams p, resolve_slice(ctx.node(), ctx.input(0).shape, const_inputs_of(ctx)));
  ctx.output(0) = {ctx.input(0).dtype, p.out, nullptr};
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_Slice = {"Slice", 1, 5, 1, 1, infer};

}  // namespace tessera
