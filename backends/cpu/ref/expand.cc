// Expand reference kernel (runtime/ops/expand.cc): y[i] = x[broadcast_offset(i)].
#include "backends/cpu/ref/ref_util.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_Expand(const CompileContext&) {
  return make_fn_kernel([](const KernelContext& k) -> Status {
    const Tensor& x = k.input(0);
    Tensor& y = k.output(0);
    return dispatch_bytes(dtype_size(x.dtype()), [&](auto tag) -> Status {
      using W = decltype(tag);
      const W* px = x.data_as<W>();
      W* py = y.data_as<W>();
      BroadcastIndex ix(y.shape(), x.shape(), x.numel());
      for (int64_t i = 0; i < y.numel(); ++i) py[i] = px[ix(i)];
      return Status::ok();
    });
  });
}

}  // namespace tessera::ref
