// Softmax reference kernel (ONNX Softmax-1/11/13); the computation is in softmax_common.h.
#include "backends/cpu/ref/softmax_common.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_Softmax(const CompileContext& ctx) { return make_softmax_kernel(ctx, /*log=*/false); }

}  // namespace tessera::ref
