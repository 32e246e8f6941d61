// Constant: copies the attribute tensor (normally folded away by the planner).
#include <cstring>

#include "backends/cpu/ref/ref_kernels.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_Constant(const CompileContext& ctx) {
  std::shared_ptr<const Tensor> value = ctx.outputs[0].constant;
  if (!value) return ctx.error("Constant has no value");
  return make_fn_kernel([value](const KernelContext& k) {
    std::memcpy(k.output(0).data(), value->data(), value->nbytes());
    return Status::ok();
  });
}

}  // namespace tessera::ref
