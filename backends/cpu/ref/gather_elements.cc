// GatherElements reference kernel (runtime/ops/gather_elements.cc): for each element of
// indices (coords c), output[c] = data[c with c[axis] replaced by indices[c]].
#include "backends/cpu/ref/ref_util.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_GatherElements(const CompileContext& ctx) {
  const int64_t rank = static_cast<int64_t>(ctx.input(0).shape.size());
  int64_t axis = ctx.node.attr_i("axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return ctx.error("axis is out of range");
  const std::vector<int64_t> data_strides = contiguous_strides(ctx.input(0).shape);
  const Shape idx_shape = ctx.input(1).shape;
  return make_fn_kernel([axis, data_strides, idx_shape](const KernelContext& k) -> Status {
    const Tensor& x = k.input(0);
    const Tensor& idx = k.input(1);
    Tensor& y = k.output(0);
    const int64_t n = x.dim(axis);
    const size_t r = idx_shape.size();
    return dispatch_bytes(dtype_size(x.dtype()), [&](auto tag) -> Status {
      using W = decltype(tag);
      const W* px = x.data_as<W>();
      W* py = y.data_as<W>();
      for (int64_t i = 0; i < idx.numel(); ++i) {
        int64_t v = idx.dtype() == DType::kInt64 ? idx.data_as<int64_t>()[i] : idx.data_as<int32_t>()[i];
        if (v < -n || v >= n)
          return invalid_argument("GatherElements: index " + std::to_string(v) + " is out of range for axis " +
                                  std::to_string(axis) + " of size " + std::to_string(n));
        if (v < 0) v += n;
        int64_t rem = i, off = 0;
        for (size_t a = r; a-- > 0;) {
          const int64_t c = rem % idx_shape[a];
          rem /= idx_shape[a];
          off += (static_cast<int64_t>(a) == axis ? v : c) * data_strides[a];
        }
        py[i] = px[off];
      }
      return Status::ok();
    });
  });
}

}  // namespace tessera::ref
