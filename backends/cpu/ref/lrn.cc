// LRN reference kernel (runtime/ops/lrn.cc); sums and the power in double.
#include <algorithm>
#include <cmath>

#include "backends/cpu/ref/ref_util.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_LRN(const CompileContext& ctx) {
  const int64_t size = ctx.node.attr_i("size", 1);
  const double alpha = ctx.node.attr_f("alpha", 1e-4f), beta = ctx.node.attr_f("beta", 0.75f), bias = ctx.node.attr_f("bias", 1.0f);
  const int64_t before = (size - 1) / 2, after = size - 1 - before;  // floor and ceil of (size-1)/2
  return make_fn_kernel([=](const KernelContext& k) -> Status {
    const Tensor& x = k.input(0);
    const int64_t N = x.dim(0), C = x.dim(1), S = dims_product(x.shape(), 2, x.shape().size());
    auto run = [&](auto tag) {
      using T = decltype(tag);
      const T* px = x.data_as<T>();
      T* py = k.output(0).data_as<T>();
      for (int64_t n = 0; n < N; ++n)
        for (int64_t c = 0; c < C; ++c)
          for (int64_t s = 0; s < S; ++s) {
            double sq = 0;
            const int64_t lo = std::max<int64_t>(0, c - before), hi = std::min<int64_t>(C - 1, c > INT64_MAX - after ? C - 1 : c + after);
            for (int64_t i = lo; i <= hi; ++i) {
              const double v = px[(n * C + i) * S + s];
              sq += v * v;
            }
            const int64_t o = (n * C + c) * S + s;
            py[o] = static_cast<T>(px[o] / std::pow(bias + alpha / static_cast<double>(size) * sq, beta));
          }
    };
    if (x.dtype() == DType::kFloat32) run(float{});
    else if (x.dtype() == DType::kFloat64) run(double{});
    else return unimplemented(std::string("LRN: dtype ") + dtype_name(x.dtype()) + " is not supported");
    return Status::ok();
  });
}

}  // namespace tessera::ref
