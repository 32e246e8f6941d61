// Split reference kernel (runtime/ops/split.cc): for each of the outer = prod(dims before
// axis) rows, hands consecutive blocks of dim_i(axis) * inner elements to the outputs. The
// sizes come from the output shapes fixed by inference (omitted outputs are skipped).
#include "backends/cpu/ref/ref_util.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_Split(const CompileContext& ctx) {
  const int64_t rank = static_cast<int64_t>(ctx.input(0).shape.size());
  int64_t axis = ctx.node.attr_i("axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return ctx.error("axis is out of range");
  std::vector<int64_t> sizes;   // along axis, per output (omitted outputs included)
  for (const ValueInfo& o : ctx.outputs) {
    if (static_cast<int64_t>(o.shape.size()) != rank) return ctx.error("output rank does not match the input");
    sizes.push_back(o.shape[axis]);
  }
  return make_fn_kernel([axis, sizes](const KernelContext& k) -> Status {
    const Tensor& x = k.input(0);
    const size_t elem = dtype_size(x.dtype());
    const int64_t outer = dims_product(x.shape(), 0, axis);
    const int64_t inner = dims_product(x.shape(), axis + 1, x.shape().size());
    const uint8_t* src = static_cast<const uint8_t*>(x.data());
    for (int64_t o = 0; o < outer; ++o) {
      for (size_t i = 0; i < sizes.size(); ++i) {
        const size_t block = static_cast<size_t>(sizes[i] * inner) * elem;
        if (block && i < k.outputs.size() && k.outputs[i])
          std::memcpy(static_cast<uint8_t*>(k.output(i).data()) + o * block, src, block);
        src += block;
      }
    }
    return Status::ok();
  });
}

}  // namespace tessera::ref
