// Shape and Size reference kernels (runtime/ops/shape.cc): copy the plan-time value that
// inference computed from the input shape (normally folded away by the planner).
#include "backends/cpu/ref/ref_util.h"

namespace tessera::ref {

namespace {
Result<std::unique_ptr<Kernel>> make_from_constant(const CompileContext& ctx) {
  std::shared_ptr<const Tensor> value = ctx.outputs[0].constant;
  if (!value) return ctx.error("output value was not computed by inference");
  return make_fn_kernel([value](const KernelContext& k) {
    if (value->nbytes()) std::memcpy(k.output(0).data(), value->data(), value->nbytes());
    return Status::ok();
  });
}
}  // namespace

Result<std::unique_ptr<Kernel>> make_Shape(const CompileContext& ctx) { return make_from_constant(ctx); }
Result<std::unique_ptr<Kernel>> make_Size(const CompileContext& ctx) { return make_from_constant(ctx); }

}  // namespace tessera::ref
