// NegativeLogLikelihoodLoss reference kernel (see runtime/ops/negative_log_likelihood_loss.cc):
// sums in double; a target outside [0, C) that is not ignore_index is an error.
#include "backends/cpu/ref/ref_kernels.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_NegativeLogLikelihoodLoss(const CompileContext& ctx) {
  const Shape xs = ctx.input(0).shape;
  const DType dt = ctx.input(0).dtype, tt = ctx.input(1).dtype;
  const bool has_w = ctx.has_input(2);
  const std::string red = ctx.node.attr_s("reduction", "mean");
  const bool has_ignore = ctx.node.find_attr("ignore_index") != nullptr;
  const int64_t ignore = ctx.node.attr_i("ignore_index", 0);
  const int64_t n = xs[0], c = xs[1];
  int64_t d = 1;
  for (size_t i = 2; i < xs.size(); ++i) d *= xs[i];
  const std::string where = ctx.node.describe();
  return make_fn_kernel([=](const KernelContext& k) -> Status {
    auto run = [&](auto tag) -> Status {
      using T = decltype(tag);
      const T* x = k.input(0).data_as<T>();
      const T* w = has_w ? k.input(2).data_as<T>() : nullptr;
      T* y = k.output(0).data_as<T>();
      double sum = 0, wsum = 0;
      for (int64_t b = 0; b < n; ++b)
        for (int64_t j = 0; j < d; ++j) {
          int64_t cls = tt == DType::kInt64 ? k.input(1).data_as<int64_t>()[b * d + j]
                                            : k.input(1).data_as<int32_t>()[b * d + j];
          double loss = 0, weight = 0;
          if (!(has_ignore && cls == ignore)) {
            if (cls < 0 || cls >= c)
              return invalid_argument(where + ": target " + std::to_string(cls) + " is outside [0, " + std::to_string(c) + ")");
            weight = w ? static_cast<double>(w[cls]) : 1.0;
            loss = -static_cast<double>(x[(b * c + cls) * d + j]) * weight;
          }
          if (red == "none") y[b * d + j] = static_cast<T>(loss);
          sum += loss;
          wsum += weight;
        }
      if (red == "sum") y[0] = static_cast<T>(sum);
      if (red == "mean") y[0] = static_cast<T>(wsum == 0 ? 0.0 : sum / wsum);
      return Status::ok();
    };
    return dt == DType::kFloat64 ? run(double{}) : run(float{});
  });
}

}  // namespace tessera::ref
