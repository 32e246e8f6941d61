// Identity: output = input, a byte copy.
#include <cstring>

#include "backends/cpu/ref/ref_kernels.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_Identity(const CompileContext&) {
  return make_fn_kernel([](const KernelContext& k) {
    if (k.input(0).nbytes()) std::memcpy(k.output(0).data(), k.input(0).data(), k.input(0).nbytes());
    return Status::ok();
  });
}

}  // namespace tessera::ref
