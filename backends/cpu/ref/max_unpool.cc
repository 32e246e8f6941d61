// MaxUnpool reference kernel (runtime/ops/max_unpool.cc): Y = 0, then for each element i of
// X (in order, so a repeated index keeps the last value) Y[pos(I[i])] = X[i], where pos maps
// a flat index of the unpooled shape [N, C, O1, ...] to the same coordinates in Y (Y is the
// unpooled shape, or output_shape, which contains it). An index outside
// [0, N * C * O1 * ... * On) is an error (invalid_argument; the executor adds the node's
// name). Values are moved as bytes: any dtype.
#include <cstring>

#include "backends/cpu/ref/ref_kernels.h"
#include "runtime/ops/max_unpool.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_MaxUnpool(const CompileContext& ctx) {
  TSR_ASSIGN_OR_RETURN(const Shape unpooled, max_unpool_inferred_shape(ctx.node, ctx.input(0).shape));
  const Shape ys = ctx.outputs[0].shape;
  if (ys.size() != unpooled.size()) return ctx.error("output rank differs from X's");
  int64_t limit = 1;
  for (int64_t d : unpooled) limit *= d;
  const size_t es = dtype_size(ctx.input(0).dtype);
  return make_fn_kernel([=](const KernelContext& k) -> Status {
    const uint8_t* x = static_cast<const uint8_t*>(k.input(0).data());
    const int64_t* ind = k.input(1).data_as<int64_t>();
    uint8_t* y = static_cast<uint8_t*>(k.output(0).data());
    if (k.output(0).nbytes()) std::memset(y, 0, k.output(0).nbytes());
    const int64_t r = static_cast<int64_t>(ys.size());
    for (int64_t i = 0; i < k.input(0).numel(); ++i) {
      const int64_t idx = ind[i];
      if (idx < 0 || idx >= limit)
        return invalid_argument("MaxUnpool: index " + std::to_string(idx) + " (I element " + std::to_string(i) +
                                ") is outside [0, " + std::to_string(limit) + ") of the unpooled shape " +
                                shape_to_string(unpooled));
      // Coordinates in the unpooled shape, re-linearized in Y's shape.
      int64_t rem = idx, off = 0, mul = 1;
      for (int64_t d = r - 1; d >= 0; --d) {
        off += (rem % unpooled[d]) * mul;
        rem /= unpooled[d];
        mul *= ys[d];
      }
      std::memcpy(y + off * es, x + i * es, es);
    }
    return Status::ok();
  });
}

}  // namespace tessera::ref
