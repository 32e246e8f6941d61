// Einsum (ONNX opset 12; followed for opsets 12..21): Einstein summation over one or more
// inputs of one dtype, as numpy.einsum; see einsum_equation.h for the equation grammar.
// float, double, int32, int64, uint32, uint64.
#include "runtime/ops/einsum_equation.h"
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {

Status infer(InferContext& ctx) {
  const Node& n = ctx.node();
  const Attribute* eq = n.find_attr("equation");
  if (!eq || eq->type != AttrType::kString) return ctx.error("attribute equation (a string) is required");
  const DType dt = ctx.input(0).dtype;
  switch (dt) {
    case DType::kFloat32: case DType::kFloat64: case DType::kInt32: case DType::kInt64: case DType::kUInt32: case DType::kUInt64:
      break;
    default:
      return ctx.unsupported(std::string("dtype ") + dtype_name(dt) + " is not supported");
  }
  std::vector<Shape> shapes;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) return ctx.error("input " + std::to_string(i) + " is missing");
    if (ctx.input(i).dtype != dt)
      return ctx.error("input " + std::to_string(i) + " has dtype " + dtype_name(ctx.input(i).dtype) + "; expected " + dtype_name(dt));
    shapes.push_back(ctx.input(i).shape);
  }
  TSR_ASSIGN_OR_RETURN(EinsumPlan p, plan_einsum(n, eq->s, shapes));
  TSR_RETURN_IF_ERROR(shape_numel(p.out_shape).status());
  ctx.output(0).dtype = dt;
  ctx.output(0).shape = p.out_shape;
  return Status::ok();
}

}  // namespace

const OpSchema kSchema_Einsum = {"Einsum", 1, -1, 1, 1, infer};

}  // namespace tessera
