// OptionalHasElement reference kernel (runtime/ops/optional_has_element.cc): writes whether
// the (tensor) input is present.
#include "backends/cpu/ref/ref_kernels.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_OptionalHasElement(const CompileContext&) {
  return make_fn_kernel([](const KernelContext& k) {
    k.output(0).data_as<bool>()[0] = k.has_input(0);
    return Status::ok();
  });
}

}  // namespace tessera::ref
