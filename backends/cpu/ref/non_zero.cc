// NonZero reference kernel: walks X in row-major order and writes, for each non-zero
// element, its index along every dim (output [rank, count]).
#include "backends/cpu/ref/ref_kernels.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_NonZero(const CompileContext& ctx) {
  const Shape xs = ctx.input(0).shape;
  const int64_t count = ctx.outputs[0].shape[1];
  const std::vector<int64_t> strides = contiguous_strides(xs);
  return make_fn_kernel([=](const KernelContext& k) -> Status {
    return dispatch_numeric(k.input(0).dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      const T* x = k.input(0).data_as<T>();
      int64_t* y = k.output(0).data_as<int64_t>();
      const int64_t r = static_cast<int64_t>(xs.size());
      int64_t j = 0;
      for (int64_t i = 0; i < k.input(0).numel(); ++i) {
        if (!(x[i] != T(0))) continue;
        if (j >= count) return internal_error("NonZero: more non-zeros than planned");
        int64_t rem = i;
        for (int64_t d = 0; d < r; ++d) {
          y[d * count + j] = rem / strides[d];
          rem %= strides[d];
        }
        ++j;
      }
      return j == count ? Status::ok() : internal_error("NonZero: fewer non-zeros than planned");
    });
  });
}

}  // namespace tessera::ref
