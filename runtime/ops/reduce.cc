// Reductions over a set of axes: ReduceSum (opset 1, 11, 13), ReduceMean, ReduceMax,
// ReduceMin, ReduceProd, ReduceL2, ReduceSumSquare, ReduceL1, ReduceLogSum,
// ReduceLogSumExp (1, 11, 13, 18).
//   axes: attribute before ReduceSum-13 / others-18, optional int64 input 1 (known at plan
//   time) from then; negative axes count from the back; repeats are errors.
//   keepdims (default 1): reduced dims stay as 1 (else they are removed).
//   noop_with_empty_axes (input-axes opsets, default 0): with no axes, 1 = output is the
//   input, 0 = reduce every axis.
// Empty reductions give the identity: 0 (Sum, SumSquare, L2, L1), 1 (Prod), -inf / lowest
// (Max), +inf / highest (Min), NaN (Mean of floats), -inf (LogSum, LogSumExp of floats).
#include "runtime/ops/dtype_rules.h"
#include "runtime/ops/shape_params.h"

namespace tessera {

Result<ReduceParams> resolve_reduce(const Node& node, const Shape& data, const ConstIntInputs& in) {
  const int64_t rank = static_cast<int64_t>(data.size());
  const bool axes_input = node.opset >= (node.op_type == "ReduceSum" ? 13 : 18);
  std::vector<int64_t> axes;
  bool noop_if_empty = false;
  if (axes_input) {
    if (in.has(1)) { TSR_ASSIGN_OR_RETURN(axes, in.ints(1)); }
    noop_if_empty = node.attr_i("noop_with_empty_axes", 0) != 0;
  } else {
    if (in.has(1)) return invalid_argument(node.describe() + ": opset " + std::to_string(node.opset) + " " + node.op_type +
                                           " takes axes as an attribute, not an input");
    axes = node.attr_ints("axes");
  }
  const bool keepdims = node.attr_i("keepdims", 1) != 0;
  ReduceParams p;
  p.reduced.assign(rank, false);
  if (axes.empty()) {
    if (noop_if_empty) {
      p.noop = true;
      p.out = data;
      return p;
    }
    p.reduced.assign(rank, true);
  }
  for (int64_t a : axes) {
    TSR_ASSIGN_OR_RETURN(int64_t n, normalize_axis(a, rank, node));
    if (p.reduced[n]) return invalid_argument(node.describe() + ": axis " + std::to_string(a) + " is repeated");
    p.reduced[n] = true;
  }
  for (int64_t i = 0; i < rank; ++i) {
    if (!p.reduced[i]) p.out.push_back(data[i]);
    else if (keepdims) p.out.push_back(1);
  }
  return p;
}

namespace {
Status infer(InferContext& ctx) {
  const bool bool_ok = (ctx.node().op_type == "ReduceMax" || ctx.node().op_type == "ReduceMin") &&
                       ctx.input(0).dtype == DType::kBool;  // opset 20
  if (!bool_ok) TSR_RETURN_IF_ERROR(check_input_dtype(ctx, 0, dtype_is_numeric, "a numeric dtype"));
  TSR_ASSIGN_OR_RETURN(ReduceParams p, resolve_reduce(ctx.node(), ctx.input(0).shape, const_inputs_of(ctx)));
  ctx.output(0) = {ctx.input(0).dtype, p.out, nullptr};
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_ReduceSum = {"ReduceSum", 1, 2, 1, 1, infer};
const OpSchema kSchema_ReduceMean = {"ReduceMean", 1, 2, 1, 1, infer};
const OpSchema kSchema_ReduceMax = {"ReduceMax", 1, 2, 1, 1, infer};
const OpSchema kSchema_ReduceMin = {"ReduceMin", 1, 2, 1, 1, infer};
const OpSchema kSchema_ReduceProd = {"ReduceProd", 1, 2, 1, 1, infer};
const OpSchema kSchema_ReduceL2 = {"ReduceL2", 1, 2, 1, 1, infer};
const OpSchema kSchema_ReduceSumSquare = {"ReduceSumSquare", 1, 2, 1, 1, infer};
const OpSchema kSchema_ReduceL1 = {"ReduceL1", 1, 2, 1, 1, infer};
const OpSchema kSchema_ReduceLogSum = {"ReduceLogSum", 1, 2, 1, 1, infer};
const OpSchema kSchema_ReduceLogSumExp = {"ReduceLogSumExp", 1, 2, 1, 1, infer};

}  // namespace tessera
