// Concat reference kernel (runtime/ops/concat.cc): for each of the outer = prod(dims before
// axis) rows, copies each input's block of dim_i(axis) * inner elements in input order.
#include "backends/cpu/ref/ref_util.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_Concat(const CompileContext& ctx) {
  const int64_t rank = static_cast<int64_t>(ctx.outputs[0].shape.size());
  int64_t axis = ctx.node.attr_i("axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return ctx.error("axis is out of range");
  return make_fn_kernel([axis](const KernelContext& k) -> Status {
    Tensor& y = k.output(0);
    const size_t elem = dtype_size(y.dtype());
    const int64_t outer = dims_product(y.shape(), 0, axis);
    const int64_t inner = dims_product(y.shape(), axis + 1, y.shape().size());
    uint8_t* dst = static_cast<uint8_t*>(y.data());
    for (int64_t o = 0; o < outer; ++o) {
      for (size_t i = 0; i < k.inputs.size(); ++i) {
        const Tensor& x = k.input(i);
        const size_t block = static_cast<size_t>(x.dim(axis) * inner) * elem;
        if (block == 0) continue;
        std::memcpy(dst, static_cast<const uint8_t*>(x.data()) + o * block, block);
        dst += block;
      }
    }
    return Status::ok();
  });
}

}  // namespace tessera::ref
