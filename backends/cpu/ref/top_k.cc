// TopK reference kernel (runtime/ops/top_k.cc): for each [outer, :, inner] line, the line's
// indices 0..n-1 (in scratch: n int64s) are partially sorted by (value, index) - value
// descending (largest) or ascending, ties to the lower index; NaN counts as larger than
// every number (as numpy and onnxruntime order it) - and the first k are written out.
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "backends/cpu/ref/ref_util.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_TopK(const CompileContext& ctx) {
  const Shape& xs = ctx.input(0).shape;
  const int64_t rank = static_cast<int64_t>(xs.size());
  int64_t axis = ctx.node.attr_i("axis", -1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return ctx.error("axis is out of range");
  const bool largest = ctx.node.attr_i("largest", 1) != 0;
  const int64_t k = ctx.outputs[0].shape[axis];
  const int64_t n = xs[axis];
  return make_fn_kernel(
      [axis, largest, k, n](const KernelContext& kc) -> Status {
        const Tensor& x = kc.input(0);
        Tensor& values = kc.output(0);
        const int64_t outer = dims_product(x.shape(), 0, axis);
        const int64_t inner = dims_product(x.shape(), axis + 1, x.shape().size());
        int64_t* order = static_cast<int64_t*>(kc.scratch);
        int64_t* pidx = kc.outputs.size() > 1 && kc.outputs[1] ? kc.output(1).data_as<int64_t>() : nullptr;
        return dispatch_numeric(x.dtype(), [&](auto tag) -> Status {
          using T = decltype(tag);
          if constexpr (std::is_same_v<T, bool>) {
            return unimplemented("TopK: bool is not supported");
          } else {
            const T* px = x.data_as<T>();
            T* pv = values.data_as<T>();
            for (int64_t o = 0; o < outer; ++o)
              for (int64_t i = 0; i < inner; ++i) {
                const T* line = px + o * n * inner + i;
                for (int64_t j = 0; j < n; ++j) order[j] = j;
                // "a before b" in the output order.
                auto before = [&](int64_t a, int64_t b) {
                  const T va = line[a * inner], vb = line[b * inner];
                  if constexpr (std::is_floating_point_v<T>) {
                    const bool na = std::isnan(va), nb = std::isnan(vb);
                    if (na || nb) {
                      if (na && nb) return a < b;
                      return largest ? na : nb;
                    }
                  }
                  if (va != vb) return largest ? va > vb : va < vb;
                  return a < b;
                };
                std::partial_sort(order, order + k, order + n, before);
                for (int64_t j = 0; j < k; ++j) {
                  const int64_t off = (o * k + j) * inner + i;
                  pv[off] = line[order[j] * inner];
                  if (pidx) pidx[off] = order[j];
                }
              }
            return Status::ok();
          }
        });
      },
      static_cast<size_t>(n) * sizeof(int64_t));
}

}  // namespace tessera::ref
