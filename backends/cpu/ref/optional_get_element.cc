// OptionalGetElement reference kernel (runtime/ops/optional_get_element.cc): the tensor
// input, a byte copy.
#include "backends/cpu/ref/ref_util.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_OptionalGetElement(const CompileContext& ctx) {
  if (!ctx.has_input(0)) return ctx.error("the input is absent");
  return make_copy_kernel();
}

}  // namespace tessera::ref
