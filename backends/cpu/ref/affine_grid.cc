// AffineGrid reference kernel (runtime/ops/affine_grid.cc), in double:
//   grid[n, s_1, ..., s_r, j] = sum_k theta[n, j, k] * b_k + theta[n, j, r]
// with b = (x, y[, z]) the base coordinates of spatial index s, innermost first
// (x from the last spatial dim). Base coordinate of index i in a dim of length L, as
// numpy.arange(start, stop, step) computes it (start + i * step):
//   align_corners = 1: -1 + i * (2 / (L - 1));   0: (-1 + step / 2) + i * step, step = 2 / L.
#include "backends/cpu/ref/ref_kernels.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_AffineGrid(const CompileContext& ctx) {
  const Shape out = ctx.outputs[0].shape;
  const int r = static_cast<int>(out.size()) - 2;
  if (r != 2 && r != 3) return ctx.error("bad output rank");
  const bool align = ctx.node.attr_i("align_corners", 0) != 0;
  const DType dt = ctx.input(0).dtype;
  return make_fn_kernel([=](const KernelContext& k) -> Status {
    auto base = [&](int64_t i, int64_t len) -> double {
      if (align) return len == 1 ? -1.0 : -1.0 + static_cast<double>(i) * (2.0 / static_cast<double>(len - 1));
      const double step = 2.0 / static_cast<double>(len);
      return (-1.0 + step / 2) + static_cast<double>(i) * step;
    };
    auto run = [&](auto tag) {
      using T = decltype(tag);
      const T* theta = k.input(0).data_as<T>();
      T* y = k.output(0).data_as<T>();
      int64_t points = 1;
      for (int d = 1; d <= r; ++d) points *= out[d];
      for (int64_t n = 0; n < out[0]; ++n) {
        const T* th = theta + n * r * (r + 1);
        for (int64_t p = 0; p < points; ++p) {
          double b[3];
          int64_t rem = p;
          for (int d = 0; d < r; ++d) {  // d = 0: the innermost spatial dim (x)
            const int64_t len = out[r - d];
            b[d] = base(rem % len, len);
            rem /= len;
          }
          for (int j = 0; j < r; ++j) {
            double v = static_cast<double>(th[j * (r + 1) + r]);
            for (int c = 0; c < r; ++c) v += static_cast<double>(th[j * (r + 1) + c]) * b[c];
            y[(n * points + p) * r + j] = static_cast<T>(v);
          }
        }
      }
    };
    if (dt == DType::kFloat64) run(double{});
    else run(float{});
    return Status::ok();
  });
}

}  // namespace tessera::ref
