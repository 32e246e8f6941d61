// Gather reference kernel (runtime/ops/gather.cc): for each outer row (dims before axis)
// and each index j, copies the inner block (dims after axis) at data[outer, idx[j], :].
#include "backends/cpu/ref/ref_util.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_Gather(const CompileContext& ctx) {
  const int64_t rank = static_cast<int64_t>(ctx.input(0).shape.size());
  int64_t axis = ctx.node.attr_i("axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return ctx.error("axis is out of range");
  return make_fn_kernel([axis](const KernelContext& k) -> Status {
    const Tensor& x = k.input(0);
    const Tensor& idx = k.input(1);
    Tensor& y = k.output(0);
    const size_t elem = dtype_size(x.dtype());
    const int64_t outer = dims_product(x.shape(), 0, axis);
    const int64_t n = x.dim(axis);
    const size_t block = static_cast<size_t>(dims_product(x.shape(), axis + 1, x.shape().size())) * elem;
    const int64_t count = idx.numel();
    for (int64_t j = 0; j < count; ++j) {
      const int64_t v = idx.dtype() == DType::kInt64 ? idx.data_as<int64_t>()[j] : idx.data_as<int32_t>()[j];
      if (v < -n || v >= n)
        return invalid_argument("Gather: index " + std::to_string(v) + " is out of range for axis " +
                                std::to_string(axis) + " of size " + std::to_string(n));
    }
    if (block == 0) return Status::ok();
    const uint8_t* src = static_cast<const uint8_t*>(x.data());
    uint8_t* dst = static_cast<uint8_t*>(y.data());
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < count; ++j) {
        int64_t v = idx.dtype() == DType::kInt64 ? idx.data_as<int64_t>()[j] : idx.data_as<int32_t>()[j];
        if (v < 0) v += n;
        std::memcpy(dst, src + (o * n + v) * block, block);
        dst += block;
      }
    }
    return Status::ok();
  });
}

}  // namespace tessera::ref
