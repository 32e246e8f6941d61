// Constant (ONNX opset 1..21): the output is the tensor held by one of the attributes
// value, value_float, value_floats, value_int, value_ints. value_string(s) and
// sparse_value are not supported. The planner folds it: its output is a plan-time constant.
#include <cstring>

#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {

Result<std::shared_ptr<const Tensor>> constant_value(const Node& n) {
  if (const Attribute* a = n.find_attr("value"); a && a->type == AttrType::kTensor && a->t) return a->t;
  auto make = [](DType dt, const Shape& s, const void* src) -> Result<std::shared_ptr<const Tensor>> {
    TSR_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(dt, s));
    if (t.nbytes()) std::memcpy(t.data(), src, t.nbytes());
    return std::make_shared<const Tensor>(std::move(t));
  };
  if (const Attribute* a = n.find_attr("value_float"); a && a->type == AttrType::kFloat) return make(DType::kFloat32, {}, &a->f);
  if (const Attribute* a = n.find_attr("value_int"); a && a->type == AttrType::kInt) return make(DType::kInt64, {}, &a->i);
  if (const Attribute* a = n.find_attr("value_floats"); a && a->type == AttrType::kFloats)
    return make(DType::kFloat32, {static_cast<int64_t>(a->floats.size())}, a->floats.data());
  if (const Attribute* a = n.find_attr("value_ints"); a && a->type == AttrType::kInts)
    return make(DType::kInt64, {static_cast<int64_t>(a->ints.size())}, a->ints.data());
  return unimplemented(n.describe() + ": Constant needs one of value, value_float(s), value_int(s)");
}

Status infer(InferContext& ctx) {
  TSR_ASSIGN_OR_RETURN(auto t, constant_value(ctx.node()));
  ValueInfo& o = ctx.output(0);
  o.dtype = t->dtype();
  o.shape = t->shape();
  o.constant = t;
  return Status::ok();
}

}  // namespace

const OpSchema kSchema_Constant = {"Constant", 0, 0, 1, 1, infer};

}  // namespace tessera
