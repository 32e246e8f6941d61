// Dropout reference kernel (runtime/ops/dropout.cc), inference: copies data to output and
// fills the mask (if wanted) with ones. training_mode true with a ratio other than 0 is
// unimplemented (random dropping is training-only).
#include "backends/cpu/ref/ref_util.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_Dropout(const CompileContext& ctx) {
  const bool inputs_ok = ctx.node.opset >= 12;
  return make_fn_kernel([inputs_ok](const KernelContext& k) -> Status {
    if (inputs_ok && k.has_input(2) && k.input(2).data_as<bool>()[0]) {
      double ratio = 0.5;
      if (k.has_input(1))
        ratio = k.input(1).dtype() == DType::kFloat64 ? k.input(1).data_as<double>()[0] : k.input(1).data_as<float>()[0];
      if (ratio != 0.0) return unimplemented("training_mode with ratio " + std::to_string(ratio) + " is not supported");
    }
    const Tensor& x = k.input(0);
    if (x.nbytes()) std::memcpy(k.output(0).data(), x.data(), x.nbytes());
    if (k.outputs.size() > 1 && k.outputs[1]) {
      Tensor& m = k.output(1);
      return dispatch_numeric(m.dtype(), [&](auto tag) -> Status {
        using T = decltype(tag);
        T* p = m.data_as<T>();
        for (int64_t i = 0; i < m.numel(); ++i) p[i] = T(1);
        return Status::ok();
      });
    }
    return Status::ok();
  });
}

}  // namespace tessera::ref
