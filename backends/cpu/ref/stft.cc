// STFT reference kernel (runtime/ops/stft.cc): per batch and frame, the FFT (fft.h, double)
// of the windowed frame; the first `bins` bins are kept. Scratch: the frame and fft()'s
// buffers.
#include "backends/cpu/ref/fft.h"
#include "backends/cpu/ref/ref_kernels.h"
#include "runtime/ops/stft_params.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_STFT(const CompileContext& ctx) {
  TSR_ASSIGN_OR_RETURN(std::vector<int64_t> step, ctx.constant_ints(1));
  std::optional<int64_t> frame_length;
  if (ctx.inputs.size() > 3 && ctx.has_input(3)) {
    TSR_ASSIGN_OR_RETURN(std::vector<int64_t> v, ctx.constant_ints(3));
    frame_length = v.at(0);
  }
  const bool has_window = ctx.inputs.size() > 2 && ctx.has_input(2);
  const Shape xs = ctx.input(0).shape;
  TSR_ASSIGN_OR_RETURN(const StftParams p,
                       stft_params(ctx.node, xs, step.at(0), has_window ? &ctx.input(2).shape : nullptr, frame_length));
  const int64_t batch = xs[0], len = xs[1], c = xs[2];
  const int64_t L = p.frame_length;
  const size_t scratch = static_cast<size_t>(L + fft_scratch_elems(L)) * sizeof(Complex);
  return make_fn_kernel(
      [=](const KernelContext& k) -> Status {
        return dispatch_float(k.input(0).dtype(), [&](auto tag) -> Status {
          using T = decltype(tag);
          const T* x = k.input(0).data_as<T>();
          const T* w = has_window ? k.input(2).data_as<T>() : nullptr;
          T* y = k.output(0).data_as<T>();
          Complex* line = static_cast<Complex*>(k.scratch);
          for (int64_t b = 0; b < batch; ++b) {
            for (int64_t f = 0; f < p.frames; ++f) {
              const T* frame = x + (b * len + f * p.step) * c;
              for (int64_t t = 0; t < L; ++t) {
                const double wt = w ? static_cast<double>(w[t]) : 1.0;
                line[t] = Complex(static_cast<double>(frame[t * c]) * wt,
                                  c == 2 ? static_cast<double>(frame[t * c + 1]) * wt : 0.0);
              }
              fft(line, L, -1.0, line + L);
              T* out = y + (b * p.frames + f) * p.bins * 2;
              for (int64_t q = 0; q < p.bins; ++q) {
                out[q * 2] = static_cast<T>(line[q].real());
                out[q * 2 + 1] = static_cast<T>(line[q].imag());
              }
            }
          }
          return Status::ok();
        });
      },
      scratch);
}

}  // namespace tessera::ref
