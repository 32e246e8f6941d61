// Einsum reference kernel (ONNX Einsum-12), by nested iteration over every label:
//   Y[o] = sum_{s over the summed labels} prod_k X_k[sum_l idx[l] * stride_k[l]]
// (strides from einsum_equation.h: 0 for labels an input lacks or broadcasts, summed for a
// repeated label, which walks the diagonal). Accumulated in double for floating types, in
// the element type for integers (wrapping like numpy). Clarity over speed.
#include <array>
#include <type_traits>

#include "backends/cpu/ref/ref_kernels.h"
#include "runtime/ops/einsum_equation.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_Einsum(const CompileContext& ctx) {
  std::vector<Shape> shapes;
  for (size_t i = 0; i < ctx.inputs.size(); ++i) shapes.push_back(ctx.input(i).shape);
  TSR_ASSIGN_OR_RETURN(EinsumPlan p, plan_einsum(ctx.node, ctx.node.attr_s("equation", ""), shapes));
  const DType dtype = ctx.input(0).dtype;
  return make_fn_kernel([=](const KernelContext& k) {
    return dispatch_numeric(dtype, [&](auto tag) -> Status {
      using T = decltype(tag);
      using Acc = std::conditional_t<std::is_floating_point_v<T>, double, T>;
      if constexpr (std::is_same_v<T, bool>) {
        return unimplemented("Einsum: bool is not supported");
      } else {
      T* y = k.output(0).data_as<T>();
      const size_t nl = p.sizes.size(), no = p.out_labels.size(), ns = p.sum_labels.size();
      const size_t n_in = p.in_strides.size();
      std::array<int64_t, kMaxEinsumLabels> idx{};
      const int64_t out_numel = k.output(0).numel();
      bool empty_sum = false;
      for (int l : p.sum_labels) empty_sum = empty_sum || p.sizes[static_cast<size_t>(l)] == 0;
      for (int64_t o = 0; o < out_numel; ++o) {
        int64_t rem = o;
        for (size_t i = no; i-- > 0;) {
          const int l = p.out_labels[i];
          idx[static_cast<size_t>(l)] = rem % p.sizes[static_cast<size_t>(l)];
          rem /= p.sizes[static_cast<size_t>(l)];
        }
        for (int l : p.sum_labels) idx[static_cast<size_t>(l)] = 0;
        Acc acc = 0;
        while (!empty_sum) {
          Acc prod = 1;
          for (size_t in = 0; in < n_in; ++in) {
            int64_t off = 0;
            for (size_t l = 0; l < nl; ++l) off += idx[l] * p.in_strides[in][l];
            prod *= static_cast<Acc>(k.input(in).data_as<T>()[off]);
          }
          acc += prod;
          // Next combination of the summed labels (last fastest); done when it wraps.
          size_t i = ns;
          while (i-- > 0) {
            const size_t l = static_cast<size_t>(p.sum_labels[i]);
            if (++idx[l] < p.sizes[l]) break;
            idx[l] = 0;
          }
          if (i == static_cast<size_t>(-1)) break;
        }
        y[o] = static_cast<T>(acc);
      }
      return Status::ok();
      }
    });
  });
}

}  // namespace tessera::ref
