// TopK (ONNX opset 1, 10, 11): the k largest (largest=1, default) or smallest (largest=0,
// opset 11) elements of X along `axis` (default -1) and their int64 indices. k is an
// attribute in opset 1 and input K (int64, one element, known at plan time) from opset 10.
// Outputs have X's shape with dim `axis` = k. Ties go to the lower index; the result is
// always sorted (sorted=0 lets any order through, so sorted order is also correct).
// X numeric (bool not allowed).
#include "runtime/ops/dtype_rules.h"
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {
Status infer(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(check_input_dtype(ctx, 0, dtype_is_numeric, "a numeric dtype"));
  const Shape& x = ctx.input(0).shape;
  const int64_t rank = static_cast<int64_t>(x.size());
  if (rank == 0) return ctx.error("X must have rank >= 1");
  TSR_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.node().attr_i("axis", -1), rank, ctx.node()));
  int64_t k = 0;
  if (ctx.node().opset < 10) {
    const Attribute* a = ctx.node().find_attr("k");
    if (!a || a->type != AttrType::kInt) return ctx.error("attribute 'k' (int) is required before opset 10");
    k = a->i;
  } else {
    if (!ctx.has_input(1)) return ctx.error("input K is required from opset 10");
    if (ctx.input(1).dtype != DType::kInt64) return ctx.error("K must be int64");
    TSR_ASSIGN_OR_RETURN(std::vector<int64_t> kv, ctx.const_ints(1));
    if (kv.size() != 1) return ctx.error("K must hold one value, got " + std::to_string(kv.size()));
    k = kv[0];
  }
  if (k < 0 || k > x[axis])
    return ctx.error("k = " + std::to_string(k) + " is not in [0, " + std::to_string(x[axis]) + "] (axis " +
                     std::to_string(axis) + ")");
  for (const char* name : {"largest", "sorted"}) {
    const int64_t v = ctx.node().attr_i(name, 1);
    if (v != 0 && v != 1) return ctx.error(std::string("attribute ") + name + " is " + std::to_string(v) + "; expected 0 or 1");
  }
  Shape out = x;
  out[axis] = k;
  ctx.output(0) = {ctx.input(0).dtype, out, nullptr};
  if (ctx.num_outputs() > 1) ctx.output(1) = {DType::kInt64, out, nullptr};
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_TopK = {"TopK", 1, 2, 2, 2, infer};

}  // namespace tessera
