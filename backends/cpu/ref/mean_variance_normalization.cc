// MeanVarianceNormalization reference kernel (runtime/ops/mean_variance_normalization.cc):
// for each index of the kept axes, three passes over the reduced axes - mean, variance
// (as the mean of squared deviations, which equals the spec's E[X^2] - E[X]^2 without its
// cancellation), then the normalized values - all in double.
#include <cmath>

#include "backends/cpu/ref/ref_util.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_MeanVarianceNormalization(const CompileContext& ctx) {
  const Shape& in = ctx.input(0).shape;
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  for (int64_t a : ctx.node.attr_ints("axes", {0, 2, 3})) {
    if (a < -rank || a >= rank) return ctx.error("axis " + std::to_string(a) + " is out of range");
    reduced[a < 0 ? a + rank : a] = true;
  }
  const std::vector<int64_t> strides = contiguous_strides(in);
  std::vector<int64_t> kd, ks, rd, rs;
  for (int64_t a = 0; a < rank; ++a) {
    (reduced[a] ? rd : kd).push_back(in[a]);
    (reduced[a] ? rs : ks).push_back(strides[a]);
  }
  const int64_t kept = dims_product(kd, 0, kd.size()), count = dims_product(rd, 0, rd.size());
  return make_fn_kernel([=](const KernelContext& k) -> Status {
    auto offset = [](int64_t i, const std::vector<int64_t>& dims, const std::vector<int64_t>& st) {
      int64_t off = 0;
      for (size_t j = dims.size(); j-- > 0;) {
        off += (i % dims[j]) * st[j];
        i /= dims[j];
      }
      return off;
    };
    auto run = [&](auto tag) {
      using T = decltype(tag);
      const T* px = k.input(0).data_as<T>();
      T* py = k.output(0).data_as<T>();
      for (int64_t o = 0; o < kept; ++o) {
        const int64_t base = offset(o, kd, ks);
        double mean = 0, var = 0;
        for (int64_t r = 0; r < count; ++r) mean += px[base + offset(r, rd, rs)];
        mean /= static_cast<double>(count);
        for (int64_t r = 0; r < count; ++r) {
          const double d = px[base + offset(r, rd, rs)] - mean;
          var += d * d;
        }
        var /= static_cast<double>(count);
        const double denom = std::sqrt(var) + 1e-9;
        for (int64_t r = 0; r < count; ++r) {
          const int64_t off = base + offset(r, rd, rs);
          py[off] = static_cast<T>((px[off] - mean) / denom);
        }
      }
    };
    if (k.input(0).dtype() == DType::kFloat32) run(float{});
    else if (k.input(0).dtype() == DType::kFloat64) run(double{});
    else return unimplemented("MeanVarianceNormalization: float or double only");
    return Status::ok();
  });
}

}  // namespace tessera::ref
