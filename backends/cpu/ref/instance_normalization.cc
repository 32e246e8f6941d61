// InstanceNormalization reference kernel (ONNX InstanceNormalization-6): per (n, c) plane,
//   mean = sum(x) / size, var = sum((x - mean)^2) / size   (two passes, in double)
//   y = scale[c] * (x - mean) / sqrt(var + epsilon) + B[c]
#include <cmath>

#include "backends/cpu/ref/ref_kernels.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_InstanceNormalization(const CompileContext& ctx) {
  const Shape& xs = ctx.input(0).shape;
  const double epsilon = ctx.node.attr_f("epsilon", 1e-5f);
  const int64_t batch = xs[0], channels = xs[1];
  int64_t size = 1;
  for (size_t i = 2; i < xs.size(); ++i) size *= xs[i];
  return make_fn_kernel([=](const KernelContext& k) {
    const float* x = k.input(0).data_as<float>();
    const float* scale = k.input(1).data_as<float>();
    const float* b = k.input(2).data_as<float>();
    float* y = k.output(0).data_as<float>();
    for (int64_t n = 0; n < batch; ++n) {
      for (int64_t c = 0; c < channels; ++c) {
        const float* xp = x + (n * channels + c) * size;
        float* yp = y + (n * channels + c) * size;
        double mean = 0, var = 0;
        for (int64_t p = 0; p < size; ++p) mean += xp[p];
        mean /= static_cast<double>(size);
        for (int64_t p = 0; p < size; ++p) var += (xp[p] - mean) * (xp[p] - mean);
        var /= static_cast<double>(size);
        const double inv_std = 1.0 / std::sqrt(var + epsilon);
        for (int64_t p = 0; p < size; ++p) yp[p] = static_cast<float>(scale[c] * (xp[p] - mean) * inv_std + b[c]);
      }
    }
    return Status::ok();
  });
}

}  // namespace tessera::ref
