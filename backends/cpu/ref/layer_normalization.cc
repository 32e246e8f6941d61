// LayerNormalization reference kernel (ONNX LayerNormalization-17): for each of the
// outer = prod(X.shape[:axis]) rows of inner = prod(X.shape[axis:]) elements,
//   mean = sum(x) / inner, var = sum((x - mean)^2) / inner   (two passes, in double)
//   y[j] = (x[j] - mean) / sqrt(var + epsilon) * Scale[j % |Scale|] + B[j % |B|]
// (Scale and B are suffix-broadcast, so the index j modulo their size picks the element).
#include <cmath>

#include "backends/cpu/ref/ref_kernels.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_LayerNormalization(const CompileContext& ctx) {
  const Shape& xs = ctx.input(0).shape;
  const int64_t rank = static_cast<int64_t>(xs.size());
  int64_t axis = ctx.node.attr_i("axis", -1);
  if (axis < 0) axis += rank;
  const double epsilon = ctx.node.attr_f("epsilon", 1e-5f);
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i) (i < axis ? outer : inner) *= xs[static_cast<size_t>(i)];
  auto numel = [](const Shape& s) { int64_t n = 1; for (int64_t d : s) n *= d; return n; };
  const int64_t scale_n = numel(ctx.input(1).shape);
  const bool has_b = ctx.has_input(2);
  const int64_t b_n = has_b ? numel(ctx.input(2).shape) : 1;
  auto wants = [&](size_t i) { return ctx.node.outputs.size() > i && ctx.node.outputs[i] >= 0; };
  const bool want_mean = wants(1), want_inv = wants(2);
  return make_fn_kernel([=](const KernelContext& k) {
    const float* x = k.input(0).data_as<float>();
    const float* scale = k.input(1).data_as<float>();
    const float* b = has_b ? k.input(2).data_as<float>() : nullptr;
    float* y = k.output(0).data_as<float>();
    float* mean_out = want_mean && k.outputs.size() > 1 && k.outputs[1] ? k.output(1).data_as<float>() : nullptr;
    float* inv_out = want_inv && k.outputs.size() > 2 && k.outputs[2] ? k.output(2).data_as<float>() : nullptr;
    for (int64_t r = 0; r < outer; ++r) {
      const float* xr = x + r * inner;
      float* yr = y + r * inner;
      double mean = 0, var = 0;
      for (int64_t j = 0; j < inner; ++j) mean += xr[j];
      mean /= static_cast<double>(inner);
      for (int64_t j = 0; j < inner; ++j) var += (xr[j] - mean) * (xr[j] - mean);
      var /= static_cast<double>(inner);
      const double inv_std = 1.0 / std::sqrt(var + epsilon);
      for (int64_t j = 0; j < inner; ++j)
        yr[j] = static_cast<float>((xr[j] - mean) * inv_std * scale[j % scale_n] + (b ? b[j % b_n] : 0.f));
      if (mean_out) mean_out[r] = static_cast<float>(mean);
      if (inv_out) inv_out[r] = static_cast<float>(inv_std);
    }
    return Status::ok();
  });
}

}  // namespace tessera::ref
