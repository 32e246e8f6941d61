#include "runtime/plan/evaluate.h"

#include "backends/cpu/ref/ref_kernels.h"
#include "runtime/ops/op_schema.h"

namespace tessera {

Result<std::vector<Tensor>> evaluate_node(const Node& node, const std::vector<const Tensor*>& inputs) {
  const OpSchema* schema = find_op_schema(node.domain, node.op_type);
  if (!schema || schema->kind != OpKind::kKernel)
    return unimplemented(node.describe() + ": op " + node.op_type + " cannot be evaluated");
  std::vector<ValueInfo> in_info(inputs.size());
  std::vector<const ValueInfo*> in_ptrs(inputs.size(), nullptr);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]) continue;
    in_info[i].dtype = inputs[i]->dtype();
    in_info[i].shape = inputs[i]->shape();
    // Aliases the caller's tensor for the duration of this call only.
    in_info[i].constant = std::shared_ptr<const Tensor>(std::shared_ptr<const Tensor>(), inputs[i]);
    in_ptrs[i] = &in_info[i];
  }
  std::vector<ValueInfo> out_info(node.outputs.size());
  InferContext ictx(node, in_ptrs, &out_info);
  TSR_RETURN_IF_ERROR(infer_node(*schema, ictx));

  std::vector<Tensor> outs(node.outputs.size());
  KernelFactory f = ref::find_ref_kernel(node.op_type);
  if (!f) return unimplemented(node.describe() + ": no reference kernel for " + node.op_type);
  CompileContext cctx{node, in_ptrs, out_info};
  TSR_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> k, f(cctx));
  KernelContext kctx;
  kctx.inputs = inputs;
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (node.outputs[i] < 0) {
      kctx.outputs.push_back(nullptr);
      continue;
    }
    TSR_ASSIGN_OR_RETURN(outs[i], Tensor::allocate(out_info[i].dtype, out_info[i].shape));
    kctx.outputs.push_back(&outs[i]);
  }
  TSR_ASSIGN_OR_RETURN(Tensor scratch, Tensor::allocate(DType::kUInt8, {static_cast<int64_t>(k->scratch_bytes())}));
  kctx.scratch = scratch.data();
  TSR_RETURN_IF_ERROR(k->run(kctx).with_context(node.describe()));
  return outs;
}

}  // namespace tessera
