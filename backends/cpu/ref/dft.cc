// DFT reference kernel (runtime/ops/dft.cc): for every index of the input other than `axis`
// and the last (real/imaginary) dim, the line along `axis`, zero-padded or cut to
// dft_length, goes through fft.h (O(L log L), double); the first out_bins bins are kept,
// scaled by 1/L for the inverse. Scratch: the line and fft()'s buffers.
#include "backends/cpu/ref/fft.h"
#include "backends/cpu/ref/ref_kernels.h"
#include "runtime/ops/dft_params.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_DFT(const CompileContext& ctx) {
  std::optional<int64_t> length, axis;
  if (ctx.has_input(1)) {
    TSR_ASSIGN_OR_RETURN(std::vector<int64_t> v, ctx.constant_ints(1));
    length = v.at(0);
  }
  if (ctx.node.opset >= 20 && ctx.has_input(2)) {
    TSR_ASSIGN_OR_RETURN(std::vector<int64_t> v, ctx.constant_ints(2));
    axis = v.at(0);
  }
  const Shape xs = ctx.input(0).shape;
  TSR_ASSIGN_OR_RETURN(const DftParams p, dft_params(ctx.node, xs, length, axis));
  // View the input as [outer, n, inner, c] and the output as [outer, bins, inner, 2].
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < p.axis; ++d) outer *= xs[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(p.axis) + 1; d + 1 < xs.size(); ++d) inner *= xs[d];
  const int64_t n = xs[static_cast<size_t>(p.axis)], c = xs.back(), L = p.length;
  const size_t scratch = static_cast<size_t>(L + fft_scratch_elems(L)) * sizeof(Complex);
  return make_fn_kernel(
      [=](const KernelContext& k) -> Status {
        return dispatch_float(k.input(0).dtype(), [&](auto tag) -> Status {
          using T = decltype(tag);
          const T* x = k.input(0).data_as<T>();
          T* y = k.output(0).data_as<T>();
          Complex* line = static_cast<Complex*>(k.scratch);
          const double scale = p.inverse ? 1.0 / static_cast<double>(L) : 1.0;
          for (int64_t o = 0; o < outer; ++o) {
            for (int64_t i = 0; i < inner; ++i) {
              for (int64_t t = 0; t < L; ++t) {
                if (t >= n) {
                  line[t] = Complex(0, 0);
                  continue;
                }
                const T* e = x + ((o * n + t) * inner + i) * c;
                line[t] = Complex(static_cast<double>(e[0]), c == 2 ? static_cast<double>(e[1]) : 0.0);
              }
              fft(line, L, p.inverse ? 1.0 : -1.0, line + L);
              for (int64_t b = 0; b < p.out_bins; ++b) {
                T* e = y + ((o * p.out_bins + b) * inner + i) * 2;
                e[0] = static_cast<T>(line[b].real() * scale);
                e[1] = static_cast<T>(line[b].imag() * scale);
              }
            }
          }
          return Status::ok();
        });
      },
      scratch);
}

}  // namespace tessera::ref
