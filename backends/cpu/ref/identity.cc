// Identity: output = input, a byte copy (none when the input dies here: make_copy_kernel).
#include "backends/cpu/ref/ref_kernels.h"
#include "backends/cpu/ref/ref_util.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_Identity(const CompileContext&) { return make_copy_kernel(); }

}  // namespace tessera::ref
