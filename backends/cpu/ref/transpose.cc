// Transpose reference kernel (runtime/ops/transpose.cc): output coords c read input offset
// sum_j c[j] * in_stride[perm[j]].
#include "backends/cpu/ref/ref_util.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_Transpose(const CompileContext& ctx) {
  const Shape& in = ctx.input(0).shape;
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> perm = ctx.node.attr_ints("perm");
  if (ctx.node.find_attr("perm") == nullptr)
    for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
  if (static_cast<int64_t>(perm.size()) != rank) return ctx.error("perm does not match the input rank");
  const std::vector<int64_t> in_strides = contiguous_strides(in);
  std::vector<int64_t> src_strides(rank);
  for (int64_t j = 0; j < rank; ++j) {
    if (perm[j] < 0 || perm[j] >= rank) return ctx.error("perm is not a permutation");
    src_strides[j] = in_strides[perm[j]];
  }
  return make_fn_kernel([src_strides](const KernelContext& k) -> Status {
    const Tensor& x = k.input(0);
    Tensor& y = k.output(0);
    return dispatch_bytes(dtype_size(x.dtype()), [&](auto tag) -> Status {
      using W = decltype(tag);
      const W* px = x.data_as<W>();
      W* py = y.data_as<W>();
      const Shape& out = y.shape();
      const size_t r = out.size();
      for (int64_t o = 0; o < y.numel(); ++o) {
        int64_t rem = o, off = 0;
        for (size_t k2 = 0; k2 < r; ++k2) {
          const size_t j = r - 1 - k2;
          off += (rem % out[j]) * src_strides[j];
          rem /= out[j];
        }
        py[o] = px[off];
      }
      return Status::ok();
    });
  });
}

}  // namespace tessera::ref
