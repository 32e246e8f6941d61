// Flatten reference kernel: the row-major bytes are unchanged (runtime/ops/flatten.cc).
#include "backends/cpu/ref/ref_util.h"

namespace tessera::ref {
Result<std::unique_ptr<Kernel>> make_Flatten(const CompileContext&) { return make_copy_kernel(); }
}  // namespace tessera::ref
