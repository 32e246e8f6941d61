// Upsample reference kernel (ONNX Upsample-7/9): the Resize kernel with Resize-10
// semantics (asymmetric coordinates; see resize.cc).
#include "backends/cpu/ref/ref_kernels.h"
#include "backends/cpu/ref/resize_kernel.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_Upsample(const CompileContext& ctx) {
  TSR_ASSIGN_OR_RETURN(ResizeParams p,
                       upsample_params(ctx.node, ctx.input(0).shape, ctx.has_input(1) ? &ctx.input(1) : nullptr));
  return make_resize_kernel(p);
}

}  // namespace tessera::ref
