// LogSoftmax reference kernel (ONNX LogSoftmax-1/11/13); the computation is in softmax_common.h.
#include "backends/cpu/ref/softmax_common.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_LogSoftmax(const CompileContext& ctx) { return make_softmax_kernel(ctx, /*log=*/true); }

}  // namespace tessera::ref
