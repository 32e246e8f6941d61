// Squeeze and Unsqueeze reference kernels: the row-major bytes are unchanged
// (runtime/ops/squeeze.cc).
#include "backends/cpu/ref/ref_util.h"

namespace tessera::ref {
Result<std::unique_ptr<Kernel>> make_Squeeze(const CompileContext&) { return make_copy_kernel(); }
Result<std::unique_ptr<Kernel>> make_Unsqueeze(const CompileContext&) { return make_copy_kernel(); }
}  // namespace tessera::ref
