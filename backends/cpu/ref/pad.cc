// Pad reference kernel (runtime/ops/pad.cc). Output coord c[a] maps to input coord
// i = c[a] - begin[a]; when i is outside [0, n):
//   constant: the element is the pad value;
//   edge:     i = clamp(i, 0, n-1);
//   reflect:  i folded with period 2(n-1) (numpy "reflect"; n == 1 gives 0);
//   wrap:     i = i mod n
// (pad_source_index, runtime/ops/shape_params.h, shared with the row-wise x86 kernel).
#include <type_traits>

#include "backends/cpu/ref/ref_util.h"

namespace tessera::ref {


Result<std::unique_ptr<Kernel>> make_Pad(const CompileContext& ctx) {
  TSR_ASSIGN_OR_RETURN(PadParams p, resolve_pad(ctx.node, ctx.input(0).shape, const_inputs_of(ctx)));
  const bool value_from_attr = ctx.node.opset < 11;
  return make_fn_kernel([p, value_from_attr](const KernelContext& k) -> Status {
    const Tensor& x = k.input(0);
    Tensor& y = k.output(0);
    return dispatch_numeric(x.dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      T value{};
      if (value_from_attr) value = static_cast<T>(p.attr_value);
      else if (k.has_input(2)) value = k.input(2).data_as<T>()[0];
      const T* px = x.data_as<T>();
      T* py = y.data_as<T>();
      const Shape& in = x.shape();
      const size_t r = in.size();
      for (int64_t o = 0; o < y.numel(); ++o) {
        int64_t rem = o, off = 0, stride = 1;
        bool inside = true;
        for (size_t k2 = 0; k2 < r; ++k2) {
          const size_t a = r - 1 - k2;
          const int64_t i = pad_source_index(rem % p.out[a] - p.begin[a], in[a], p.mode);
          rem /= p.out[a];
          if (i < 0) { inside = false; break; }
          off += i * stride;
          stride *= in[a];
        }
        py[o] = inside ? px[off] : value;
      }
      return Status::ok();
    });
  });
}

}  // namespace tessera::ref
