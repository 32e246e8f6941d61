// Compress reference kernel: copies, in order, the slices along `axis` (elements of the
// flattened input when there is no axis) whose condition entry is true.
#include <cstring>

#include "backends/cpu/ref/ref_kernels.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_Compress(const CompileContext& ctx) {
  const Shape xs = ctx.input(0).shape;
  const Attribute* axis_attr = ctx.node.find_attr("axis");
  int64_t outer = 1, len = 1, inner = 1;
  if (axis_attr) {
    const int64_t r = static_cast<int64_t>(xs.size());
    const int64_t axis = axis_attr->i < 0 ? axis_attr->i + r : axis_attr->i;
    for (int64_t d = 0; d < axis; ++d) outer *= xs[d];
    len = xs[axis];
    for (int64_t d = axis + 1; d < r; ++d) inner *= xs[d];
  } else {
    for (int64_t d : xs) len *= d;
  }
  const size_t es = dtype_size(ctx.input(0).dtype);
  return make_fn_kernel([=](const KernelContext& k) -> Status {
    const uint8_t* x = static_cast<const uint8_t*>(k.input(0).data());
    const bool* cond = k.input(1).data_as<bool>();
    const int64_t nc = k.input(1).numel();
    uint8_t* y = static_cast<uint8_t*>(k.output(0).data());
    const size_t slice = static_cast<size_t>(inner) * es;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < len && i < nc; ++i)
        if (cond[i]) {
          std::memcpy(y, x + (o * len + i) * slice, slice);
          y += slice;
        }
    return Status::ok();
  });
}

}  // namespace tessera::ref
