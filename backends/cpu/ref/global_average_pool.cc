// GlobalAveragePool reference kernel (ONNX GlobalAveragePool-1):
//   Y[n, c] = sum_p X[n, c, p] / (D1 * D2 * ...), accumulated in double.
#include <limits>

#include "backends/cpu/ref/ref_kernels.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_GlobalAveragePool(const CompileContext& ctx) {
  const Shape& xs = ctx.input(0).shape;
  const int64_t planes = xs[0] * xs[1];
  int64_t size = 1;
  for (size_t i = 2; i < xs.size(); ++i) size *= xs[i];
  return make_fn_kernel([=](const KernelContext& k) {
    const float* x = k.input(0).data_as<float>();
    float* y = k.output(0).data_as<float>();
    for (int64_t p = 0; p < planes; ++p) {
      double sum = 0;
      for (int64_t i = 0; i < size; ++i) sum += x[p * size + i];
      // The mean of an empty plane is NaN, as in numpy.
      y[p] = size > 0 ? static_cast<float>(sum / size) : std::numeric_limits<float>::quiet_NaN();
    }
    return Status::ok();
  });
}

}  // namespace tessera::ref
