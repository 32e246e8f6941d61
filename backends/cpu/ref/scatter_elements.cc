// ScatterElements and Scatter reference kernels (runtime/ops/scatter_elements.cc): copy
// data, then walk indices in row-major order and combine each update into
// output[c with c[axis] = indices[c]].
#include <type_traits>

#include "backends/cpu/ref/ref_util.h"
#include "backends/cpu/ref/scatter_reduction.h"

namespace tessera::ref {

namespace {
Result<std::unique_ptr<Kernel>> make_scatter_elements(const CompileContext& ctx) {
  const int64_t rank = static_cast<int64_t>(ctx.input(0).shape.size());
  int64_t axis = ctx.node.attr_i("axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return ctx.error("axis is out of range");
  const ScatterReduction red = parse_scatter_reduction(ctx.node.attr_s("reduction", "none"));
  const std::vector<int64_t> data_strides = contiguous_strides(ctx.input(0).shape);
  const Shape idx_shape = ctx.input(1).shape;
  return make_fn_kernel([axis, red, data_strides, idx_shape](const KernelContext& k) -> Status {
    const Tensor& x = k.input(0);
    const Tensor& idx = k.input(1);
    const Tensor& upd = k.input(2);
    Tensor& y = k.output(0);
    const int64_t n = x.dim(axis);
    for (int64_t i = 0; i < idx.numel(); ++i) {
      const int64_t v = idx.dtype() == DType::kInt64 ? idx.data_as<int64_t>()[i] : idx.data_as<int32_t>()[i];
      if (v < -n || v >= n)
        return invalid_argument("index " + std::to_string(v) + " is out of range for axis " + std::to_string(axis) +
                                " of size " + std::to_string(n));
    }
    if (x.nbytes()) std::memcpy(y.data(), x.data(), x.nbytes());
    auto offset_of = [&](int64_t i) {
      int64_t v = idx.dtype() == DType::kInt64 ? idx.data_as<int64_t>()[i] : idx.data_as<int32_t>()[i];
      if (v < 0) v += n;
      int64_t rem = i, off = 0;
      for (size_t a = idx_shape.size(); a-- > 0;) {
        const int64_t c = rem % idx_shape[a];
        rem /= idx_shape[a];
        off += (static_cast<int64_t>(a) == axis ? v : c) * data_strides[a];
      }
      return off;
    };
    if (red == ScatterReduction::kNone) {
      return dispatch_bytes(dtype_size(x.dtype()), [&](auto tag) -> Status {
        using W = decltype(tag);
        for (int64_t i = 0; i < idx.numel(); ++i) y.data_as<W>()[offset_of(i)] = upd.data_as<W>()[i];
        return Status::ok();
      });
    }
    return dispatch_numeric(x.dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      T* py = y.data_as<T>();
      for (int64_t i = 0; i < idx.numel(); ++i) {
        const int64_t off = offset_of(i);
        py[off] = scatter_combine(red, py[off], upd.data_as<T>()[i]);
      }
      return Status::ok();
    });
  });
}
}  // namespace

Result<std::unique_ptr<Kernel>> make_ScatterElements(const CompileContext& ctx) { return make_scatter_elements(ctx); }
Result<std::unique_ptr<Kernel>> make_Scatter(const CompileContext& ctx) { return make_scatter_elements(ctx); }

}  // namespace tessera::ref
