// GroupNormalization reference kernel (ONNX GroupNormalization-18/21): per (n, group),
//   mean = sum(x) / count, var = sum((x - mean)^2) / count      (double, two passes)
//   Y = (X - mean) / sqrt(var + epsilon) * scale + bias
// scale/bias indexed by group (opset 18) or channel (opset 21).
#include <cmath>

#include "backends/cpu/ref/ref_kernels.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_GroupNormalization(const CompileContext& ctx) {
  const Shape& xs = ctx.input(0).shape;
  const int64_t groups = ctx.node.attr_i("num_groups", 1), batch = xs[0], channels = xs[1];
  int64_t spatial = 1;
  for (size_t d = 2; d < xs.size(); ++d) spatial *= xs[d];
  const double eps = ctx.node.attr_f("epsilon", 1e-5f);
  const bool per_channel = ctx.node.opset >= 21;
  return make_fn_kernel([=](const KernelContext& k) {
    const float* x = k.input(0).data_as<float>();
    const float* scale = k.input(1).data_as<float>();
    const float* bias = k.input(2).data_as<float>();
    float* y = k.output(0).data_as<float>();
    const int64_t cpg = channels / groups, count = cpg * spatial;
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t g = 0; g < groups; ++g) {
        const int64_t base = (n * channels + g * cpg) * spatial;
        double sum = 0;
        for (int64_t i = 0; i < count; ++i) sum += x[base + i];
        const double mean = count ? sum / static_cast<double>(count) : 0.0;
        double sq = 0;
        for (int64_t i = 0; i < count; ++i) sq += (x[base + i] - mean) * (x[base + i] - mean);
        const double inv = 1.0 / std::sqrt((count ? sq / static_cast<double>(count) : 0.0) + eps);
        for (int64_t i = 0; i < count; ++i) {
          const int64_t p = per_channel ? g * cpg + i / spatial : g;
          y[base + i] = static_cast<float>((x[base + i] - mean) * inv * scale[p] + bias[p]);
        }
      }
    return Status::ok();
  });
}

}  // namespace tessera::ref
