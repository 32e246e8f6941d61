// Trilu reference kernel (runtime/ops/trilu.cc): element (i, j) of each trailing matrix is
// kept when j - i >= k (upper) or j - i <= k (lower), else set to zero (all-zero bytes,
// which is 0 / 0.0 / false for every dtype).
#include "backends/cpu/ref/ref_util.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_Trilu(const CompileContext& ctx) {
  const bool upper = ctx.node.attr_i("upper", 1) != 0;
  return make_fn_kernel([upper](const KernelContext& k) -> Status {
    const Tensor& x = k.input(0);
    Tensor& y = k.output(0);
    int64_t diag = 0;
    if (k.has_input(1)) {
      if (k.input(1).numel() != 1) return invalid_argument("Trilu: k must hold one value");
      diag = k.input(1).data_as<int64_t>()[0];
    }
    const int64_t rows = x.dim(x.rank() - 2), cols = x.dim(x.rank() - 1);
    const int64_t mats = (rows > 0 && cols > 0) ? x.numel() / (rows * cols) : 0;
    return dispatch_bytes(dtype_size(x.dtype()), [&](auto tag) -> Status {
      using W = decltype(tag);
      const W* px = x.data_as<W>();
      W* py = y.data_as<W>();
      for (int64_t m = 0; m < mats; ++m)
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t j = 0; j < cols; ++j) {
            const int64_t o = (m * rows + i) * cols + j;
            // j - i compared to k without overflow: |i|, |j| < 2^40, k is clamped.
            const int64_t kk = diag < -(int64_t{1} << 50) ? -(int64_t{1} << 50) : diag > (int64_t{1} << 50) ? (int64_t{1} << 50) : diag;
            const bool keep = upper ? (j - i >= kk) : (j - i <= kk);
            py[o] = keep ? px[o] : W(0);
          }
      return Status::ok();
    });
  });
}

}  // namespace tessera::ref
