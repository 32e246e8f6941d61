// MaxPool reference kernel (ONNX MaxPool-1/8/10/11/12):
//   Y[n, c, o] = max_{k : p = o*stride - pad_begin + k*dilation inside X} X[n, c, p]
// Indices (optional) = the flat index of the first maximum (row-major over n, c and the
// spatial dims; storage_order = 1 makes the spatial part column-major).
#include <limits>

#include "backends/cpu/ref/nd_index.h"
#include "backends/cpu/ref/ref_kernels.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_MaxPool(const CompileContext& ctx) {
  const Shape& xs = ctx.input(0).shape;
  TSR_ASSIGN_OR_RETURN(WindowGeometry g, window_geometry(ctx.node, xs, {}, ctx.node.attr_i("ceil_mode", 0) == 1));
  const bool column_major = ctx.node.attr_i("storage_order", 0) == 1;
  const bool want_indices = ctx.node.outputs.size() > 1 && ctx.node.outputs[1] >= 0;
  const int64_t planes = xs[0] * xs[1];
  const DType dtype = ctx.input(0).dtype;
  return make_fn_kernel([=](const KernelContext& k) {
    return dispatch_numeric(dtype, [&](auto tag) -> Status {
      using T = decltype(tag);
      const T* x = k.input(0).data_as<T>();
      T* y = k.output(0).data_as<T>();
      int64_t* ind = want_indices && k.outputs.size() > 1 && k.outputs[1] ? k.output(1).data_as<int64_t>() : nullptr;
      const int nd = g.rank;
      const int64_t in_size = product(g.in), out_size = product(g.out);
      for (int64_t plane = 0; plane < planes; ++plane) {
        const T* xp = x + plane * in_size;
        SpatialIndex o{};
        int64_t o_lin = plane * out_size;
        do {
          T best = std::numeric_limits<T>::lowest();
          int64_t best_row = -1, best_col = -1;
          SpatialIndex kk{};
          do {
            int64_t row = 0, col = 0, col_stride = 1;
            bool inside = true;
            for (int d = 0; d < nd; ++d) {
              const int64_t p = o[d] * g.strides[d] - g.pads_begin[d] + kk[d] * g.dilations[d];
              if (p < 0 || p >= g.in[d]) { inside = false; break; }
              row = row * g.in[d] + p;
              col += p * col_stride;
              col_stride *= g.in[d];
            }
            if (inside && (best_row < 0 || xp[row] > best)) {
              best = xp[row];
              best_row = row;
              best_col = col;
            }
          } while (next_index(kk, g.kernel, nd));
          y[o_lin] = best;
          if (ind) ind[o_lin] = plane * in_size + (column_major ? best_col : best_row);
          ++o_lin;
        } while (next_index(o, g.out, nd));
      }
      return Status::ok();
    });
  });
}

}  // namespace tessera::ref
