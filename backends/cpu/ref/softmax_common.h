// The Softmax / LogSoftmax reference computation, shared by both kernels.
#pragma once

#include <cmath>

#include "backends/cpu/ref/ref_kernels.h"
#include "runtime/ops/softmax_layout.h"

namespace tessera::ref {

/// For each (outer, inner) slice of the [outer, axis_len, inner] view:
///   m = max_a x[a],  s = sum_a exp(x[a] - m)   (in double)
///   softmax:    y[a] = exp(x[a] - m) / s
///   logsoftmax: y[a] = x[a] - m - log(s)
inline Result<std::unique_ptr<Kernel>> make_softmax_kernel(const CompileContext& ctx, bool log) {
  TSR_ASSIGN_OR_RETURN(SoftmaxLayout l, softmax_layout(ctx.node, ctx.input(0).shape));
  return make_fn_kernel([l, log](const KernelContext& k) {
    const float* x = k.input(0).data_as<float>();
    float* y = k.output(0).data_as<float>();
    for (int64_t o = 0; o < l.outer; ++o) {
      for (int64_t i = 0; i < l.inner; ++i) {
        const int64_t base = o * l.axis_len * l.inner + i;
        float mx = -INFINITY;
        for (int64_t a = 0; a < l.axis_len; ++a) mx = std::fmax(mx, x[base + a * l.inner]);
        double sum = 0;
        for (int64_t a = 0; a < l.axis_len; ++a) sum += std::exp(static_cast<double>(x[base + a * l.inner]) - mx);
        for (int64_t a = 0; a < l.axis_len; ++a) {
          const double d = static_cast<double>(x[base + a * l.inner]) - mx;
          y[base + a * l.inner] = static_cast<float>(log ? d - std::log(sum) : std::exp(d) / sum);
        }
      }
    }
    return Status::ok();
  });
}

}  // namespace tessera::ref
