// OneHot reference kernel (runtime/ops/one_hot.cc): output viewed as [outer, depth, inner]
// around the new axis, indices as [outer, inner]; y[o, d, i] = on if index(o, i) == d.
#include <cmath>
#include <type_traits>

#include "backends/cpu/ref/ref_util.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_OneHot(const CompileContext& ctx) {
  const Shape& out = ctx.outputs[0].shape;
  const int64_t rank = static_cast<int64_t>(out.size());
  int64_t axis = ctx.node.attr_i("axis", -1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return ctx.error("axis is out of range");
  const int64_t depth = out[axis];
  const int64_t outer = dims_product(out, 0, axis), inner = dims_product(out, axis + 1, out.size());
  return make_fn_kernel([depth, outer, inner](const KernelContext& k) -> Status {
    const Tensor& ind = k.input(0);
    const Tensor& vals = k.input(2);
    Tensor& y = k.output(0);
    return dispatch_bytes(dtype_size(vals.dtype()), [&](auto vtag) -> Status {
      using W = decltype(vtag);
      const W off = vals.data_as<W>()[0], on = vals.data_as<W>()[1];
      W* py = y.data_as<W>();
      return dispatch_numeric(ind.dtype(), [&](auto itag) -> Status {
        using I = decltype(itag);
        const I* pi = ind.data_as<I>();
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t i = 0; i < inner; ++i) {
            int64_t v = -depth - 1;  // out of range unless the index is a usable number
            const I raw = pi[o * inner + i];
            if constexpr (std::is_floating_point_v<I>) {
              if (std::isfinite(raw) && std::fabs(raw) < 9.0e18) v = static_cast<int64_t>(raw);
            } else if constexpr (std::is_same_v<I, uint64_t>) {
              if (raw < static_cast<uint64_t>(depth)) v = static_cast<int64_t>(raw);
            } else {
              v = static_cast<int64_t>(raw);
            }
            if (v < 0 && v >= -depth) v += depth;
            for (int64_t d = 0; d < depth; ++d) py[(o * depth + d) * inner + i] = d == v ? on : off;
          }
        return Status::ok();
      });
    });
  });
}

}  // namespace tessera::ref
