// ArgMax / ArgMin reference kernels (runtime/ops/arg_minmax.cc): for each (outer, inner)
// position scans the axis and keeps the first (or, with select_last_index, the last) index
// of the extreme value. A NaN counts as the extreme, as in numpy.
#include <cmath>
#include <type_traits>

#include "backends/cpu/ref/ref_util.h"

namespace tessera::ref {

namespace {
Result<std::unique_ptr<Kernel>> make_arg(const CompileContext& ctx, bool is_max) {
  const int64_t rank = static_cast<int64_t>(ctx.input(0).shape.size());
  int64_t axis = ctx.node.attr_i("axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return ctx.error("axis is out of range");
  const bool last = ctx.node.attr_i("select_last_index", 0) != 0;
  return make_fn_kernel([axis, last, is_max](const KernelContext& k) -> Status {
    const Tensor& x = k.input(0);
    int64_t* py = k.output(0).data_as<int64_t>();
    const int64_t outer = dims_product(x.shape(), 0, axis);
    const int64_t n = x.dim(axis);
    const int64_t inner = dims_product(x.shape(), axis + 1, x.shape().size());
    return dispatch_numeric(x.dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      const T* px = x.data_as<T>();
      auto is_nan = [](T v) {
        if constexpr (std::is_floating_point_v<T>) return std::isnan(v);
        else return false;
      };
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
          const T* p = px + o * n * inner + i;
          int64_t best = 0;
          for (int64_t j = 1; j < n; ++j) {
            const T v = p[j * inner], b = p[best * inner];
            if (is_nan(b)) break;
            const bool better = is_nan(v) || (is_max ? v > b : v < b);
            const bool tie = v == b;
            if (better || (last && tie)) best = j;
          }
          py[o * inner + i] = best;
        }
      }
      return Status::ok();
    });
  });
}
}  // namespace

Result<std::unique_ptr<Kernel>> make_ArgMax(const CompileContext& ctx) { return make_arg(ctx, true); }
Result<std::unique_ptr<Kernel>> make_ArgMin(const CompileContext& ctx) { return make_arg(ctx, false); }

}  // namespace tessera::ref
