// Slice reference kernel (runtime/ops/slice.cc): output coords c read input coords
// start[a] + c[a] * step[a]; the parameters are resolved once at compile time.
#include "backends/cpu/ref/ref_util.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_Slice(const CompileContext& ctx) {
  TSR_ASSIGN_OR_RETURN(SliceParams p, resolve_slice(ctx.node, ctx.input(0).shape, const_inputs_of(ctx)));
  std::vector<int64_t> in_strides = contiguous_strides(ctx.input(0).shape);
  return make_fn_kernel([p, in_strides](const KernelContext& k) -> Status {
    const Tensor& x = k.input(0);
    Tensor& y = k.output(0);
    return dispatch_bytes(dtype_size(x.dtype()), [&](auto tag) -> Status {
      using W = decltype(tag);
      const W* px = x.data_as<W>();
      W* py = y.data_as<W>();
      const size_t r = p.out.size();
      for (int64_t o = 0; o < y.numel(); ++o) {
        int64_t rem = o, off = 0;
        for (size_t k2 = 0; k2 < r; ++k2) {
          const size_t a = r - 1 - k2;
          const int64_t c = rem % p.out[a];
          rem /= p.out[a];
          off += (p.start[a] + c * p.step[a]) * in_strides[a];
        }
        py[o] = px[off];
      }
      return Status::ok();
    });
  });
}

}  // namespace tessera::ref
