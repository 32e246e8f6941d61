// BatchNormalization reference kernel (ONNX BatchNormalization-7/9/14/15):
//   Y[n, c, p] = (X[n, c, p] - mean[c]) / sqrt(var[c] + epsilon) * scale[c] + B[c]
// (with spatial = 0 the parameters are indexed by (c, p) instead of c). With
// training_mode = 1, mean and var are the batch's (population variance, in double) and the
// running statistics are blended with `momentum` (runtime/ops/batch_normalization.cc).
#include <cmath>

#include "backends/cpu/ref/ref_kernels.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_BatchNormalization(const CompileContext& ctx) {
  const Shape& xs = ctx.input(0).shape;
  const double epsilon = ctx.node.attr_f("epsilon", 1e-5f);
  const bool spatial = ctx.node.opset < 9 ? ctx.node.attr_i("spatial", 1) != 0 : true;
  const bool training = ctx.node.opset >= 14 && ctx.node.attr_i("training_mode", 0) != 0;
  const double momentum = ctx.node.attr_f("momentum", 0.9f);
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
    if (training) {
      const double count = static_cast<double>(batch * size);
      for (int64_t c = 0; c < channels; ++c) {
        double sum = 0, sq = 0;
        for (int64_t n = 0; n < batch; ++n)
          for (int64_t p = 0; p < size; ++p) sum += x[(n * channels + c) * size + p];
        // An empty batch has no statistics: NaN, as numpy's mean of nothing.
        const double m = count > 0 ? sum / count : std::nan("");
        for (int64_t n = 0; n < batch; ++n)
          for (int64_t p = 0; p < size; ++p) {
            const double d = x[(n * channels + c) * size + p] - m;
            sq += d * d;
          }
        const double v = count > 0 ? sq / count : std::nan("");
        const double inv_std = 1.0 / std::sqrt(v + epsilon);
        for (int64_t n = 0; n < batch; ++n)
          for (int64_t p = 0; p < size; ++p) {
            const int64_t i = (n * channels + c) * size + p;
            y[i] = static_cast<float>((x[i] - m) * inv_std * scale[c] + b[c]);
          }
        if (k.outputs.size() > 1 && k.outputs[1])
          k.outputs[1]->data_as<float>()[c] = static_cast<float>(mean[c] * momentum + m * (1 - momentum));
        if (k.outputs.size() > 2 && k.outputs[2])
          k.outputs[2]->data_as<float>()[c] = static_cast<float>(var[c] * momentum + v * (1 - momentum));
      }
      return Status::ok();
    }
    for (int64_t n = 0; n < batch; ++n) {
      for (int64_t c = 0; c < channels; ++c) {
        const int64_t base = (n * channels + c) * size;
        if (spatial) {  // one parameter set per channel: 1 / sqrt once per channel, same values
          const double inv_std = 1.0 / std::sqrt(static_cast<double>(var[c]) + epsilon);
          const double m = mean[c], sc = scale[c], bc = b[c];
          for (int64_t p = 0; p < size; ++p) y[base + p] = static_cast<float>((x[base + p] - m) * inv_std * sc + bc);
          continue;
        }
        for (int64_t p = 0; p < size; ++p) {
          const int64_t q = c * size + p;  // parameter index (spatial = 0)
          const double inv_std = 1.0 / std::sqrt(static_cast<double>(var[q]) + epsilon);
          y[base + p] = static_cast<float>((x[base + p] - static_cast<double>(mean[q])) * inv_std * scale[q] + b[q]);
        }
      }
    }
    return Status::ok();
  });
}

}  // namespace tessera::ref
