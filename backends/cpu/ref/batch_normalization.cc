// BatchNormalization reference kernel (ONNX BatchNormalization-7/9/14/15, inference):
//   Y[n, c, p] = (X[n, c, p] - mean[c]) / sqrt(var[c] + epsilon) * scale[c] + B[c]
// (with spatial = 0 the parameters are indexed by (c, p) instead of c).
#include <cmath>

#include "backends/cpu/ref/ref_kernels.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_BatchNormalization(const CompileContext& ctx) {
  const Shape& xs = ctx.input(0).shape;
  const double epsilon = ctx.node.attr_f("epsilon", 1e-5f);
  const bool spatial = ctx.node.opset < 9 ? ctx.node.attr_i("spatial", 1) != 0 : true;
  const int64_t batch = xs[0], channels = xs[1];
  int64_t size = 1;
  for (size_t i = 2; i < xs.size(); ++i) size *= xs[i];
  return make_fn_kernel([=](const KernelContext& k) {
    const float* x = k.input(0).data_as<float>();
    const float* scale = k.input(1).data_as<float>();
    const float* b = k.input(2).data_as<float>();
    const float* mean = k.input(3).data_as<float>();
    const float* var = k.input(4).data_as<float>();
    float* y = k.output(0).data_as<float>();
    for (int64_t n = 0; n < batch; ++n) {
      for (int64_t c = 0; c < channels; ++c) {
        const int64_t base = (n * channels + c) * size;
        for (int64_t p = 0; p < size; ++p) {
          const int64_t q = spatial ? c : c * size + p;  // parameter index
          const double inv_std = 1.0 / std::sqrt(static_cast<double>(var[q]) + epsilon);
          y[base + p] = static_cast<float>((x[base + p] - static_cast<double>(mean[q])) * inv_std * scale[q] + b[q]);
        }
      }
    }
    return Status::ok();
  });
}

}  // namespace tessera::ref
