// CumSum reference kernel (runtime/ops/cum_sum.cc): x viewed as [outer, n, inner] around
// the axis; y[o, j, i] = sum of x[o, t, i] for t <= j (t < j when exclusive; t >= j / t > j
// when reverse). Sums accumulate in double (floats) or wrapping integers of the dtype.
#include <type_traits>

#include "backends/cpu/ref/ref_util.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_CumSum(const CompileContext& ctx) {
  const bool exclusive = ctx.node.attr_i("exclusive", 0) != 0;
  const bool reverse = ctx.node.attr_i("reverse", 0) != 0;
  return make_fn_kernel([exclusive, reverse](const KernelContext& k) -> Status {
    const Tensor& x = k.input(0);
    const Tensor& at = k.input(1);
    Tensor& y = k.output(0);
    if (at.numel() != 1) return invalid_argument("CumSum: axis must hold one value");
    const int64_t rank = x.rank();
    int64_t axis = at.dtype() == DType::kInt64 ? at.data_as<int64_t>()[0] : at.data_as<int32_t>()[0];
    if (axis < -rank || axis >= rank)
      return invalid_argument("CumSum: axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
    if (axis < 0) axis += rank;
    const int64_t outer = dims_product(x.shape(), 0, axis), n = x.dim(axis);
    const int64_t inner = dims_product(x.shape(), axis + 1, x.shape().size());
    return dispatch_numeric(x.dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, bool>) {
        return unimplemented("CumSum: bool is not supported");
      } else {
        using Acc = typename std::conditional_t<std::is_floating_point_v<T>, std::common_type<double>, std::make_unsigned<T>>::type;
        const T* px = x.data_as<T>();
        T* py = y.data_as<T>();
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t i = 0; i < inner; ++i) {
            Acc acc = 0;
            for (int64_t s = 0; s < n; ++s) {
              const int64_t j = reverse ? n - 1 - s : s;
              const int64_t off = (o * n + j) * inner + i;
              const Acc v = static_cast<Acc>(px[off]);
              if (!exclusive) acc = static_cast<Acc>(acc + v);
              py[off] = static_cast<T>(acc);
              if (exclusive) acc = static_cast<Acc>(acc + v);
            }
          }
        return Status::ok();
      }
    });
  });
}

}  // namespace tessera::ref
