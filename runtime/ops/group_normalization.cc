// GroupNormalization (ONNX opset 18, 21; followed for opsets 18..21): X [N, C, D1, ...]
// (rank >= 2) split into num_groups groups of C / num_groups channels;
//   Y[n, c, p] = scale * (X[n, c, p] - mean[n, g]) / sqrt(var[n, g] + epsilon) + bias
// with mean and population variance over the group's channels and spatial dims. Opset 18:
// scale and bias [num_groups] (indexed by g); opset 21: [C] (indexed by c). Attributes
// num_groups (required, divides C), epsilon (default 1e-5), stash_type (computation is in
// double here). float only.
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {

Status infer(InferContext& ctx) {
  const Node& n = ctx.node();
  const ValueInfo& x = ctx.input(0);
  if (x.dtype != DType::kFloat32) return ctx.unsupported(std::string("dtype ") + dtype_name(x.dtype) + " is not supported (float)");
  if (x.shape.size() < 2) return ctx.error("input X must have rank >= 2, got " + shape_to_string(x.shape));
  const Attribute* g = n.find_attr("num_groups");
  if (!g || g->type != AttrType::kInt) return ctx.error("attribute num_groups (an int) is required");
  const int64_t groups = g->i, c = x.shape[1];
  if (groups < 1 || c % groups != 0)
    return ctx.error("num_groups " + std::to_string(groups) + " must be >= 1 and divide the channel count " + std::to_string(c));
  const int64_t per = n.opset >= 21 ? c : groups;
  for (size_t i = 1; i < 3; ++i) {
    const ValueInfo& p = ctx.input(i);
    const char* name = i == 1 ? "scale" : "bias";
    if (p.dtype != DType::kFloat32) return ctx.unsupported(std::string(name) + " must be float, got " + dtype_name(p.dtype));
    if (p.shape != Shape{per})
      return ctx.error(std::string(name) + " " + shape_to_string(p.shape) + " must have shape [" + std::to_string(per) +
                       "] at opset " + std::to_string(n.opset));
  }
  ctx.output(0).dtype = x.dtype;
  ctx.output(0).shape = x.shape;
  return Status::ok();
}

}  // namespace

const OpSchema kSchema_GroupNormalization = {"GroupNormalization", 3, 3, 1, 1, infer};

}  // namespace tessera
