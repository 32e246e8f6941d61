// Reshape reference kernel: the row-major bytes are unchanged (runtime/ops/reshape.cc).
#include "backends/cpu/ref/ref_util.h"

namespace tessera::ref {
Result<std::unique_ptr<Kernel>> make_Reshape(const CompileContext&) { return make_copy_kernel(); }
}  // namespace tessera::ref
