// Tile reference kernel (runtime/ops/tile.cc): output coord c[a] reads input coord
// c[a] mod in_dim[a].
#include "backends/cpu/ref/ref_util.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_Tile(const CompileContext&) {
  return make_fn_kernel([](const KernelContext& k) -> Status {
    const Tensor& x = k.input(0);
    Tensor& y = k.output(0);
    return dispatch_bytes(dtype_size(x.dtype()), [&](auto tag) -> Status {
      using W = decltype(tag);
      const W* px = x.data_as<W>();
      W* py = y.data_as<W>();
      const Shape& in = x.shape();
      const Shape& out = y.shape();
      const size_t r = out.size();
      for (int64_t o = 0; o < y.numel(); ++o) {
        int64_t rem = o, off = 0, stride = 1;
        for (size_t k2 = 0; k2 < r; ++k2) {
          const size_t a = r - 1 - k2;
          off += ((rem % out[a]) % in[a]) * stride;   // in[a] > 0 since out[a] > 0
          rem /= out[a];
          stride *= in[a];
        }
        py[o] = px[off];
      }
      return Status::ok();
    });
  });
}

}  // namespace tessera::ref
