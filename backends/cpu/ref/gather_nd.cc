// GatherND reference kernel (runtime/ops/gather_nd.cc): for batch index bi (first
// batch_dims dims) and each k-tuple t of indices in that batch, copies the slice
// data[bi, t[0], .., t[k-1], :] (slice elements = prod(data.shape[batch_dims + k:])).
#include "backends/cpu/ref/ref_util.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_GatherND(const CompileContext& ctx) {
  const Shape data = ctx.input(0).shape;
  const Shape idx = ctx.input(1).shape;
  const int64_t b = ctx.node.attr_i("batch_dims", 0);
  const int64_t k = idx.back();
  const int64_t batches = dims_product(data, 0, b);
  const int64_t per_batch = dims_product(idx, b, idx.size() - 1);
  const int64_t slice = dims_product(data, b + k, data.size());
  const int64_t batch_stride = dims_product(data, b, data.size());
  const std::vector<int64_t> strides = contiguous_strides(data);
  return make_fn_kernel([=](const KernelContext& kc) -> Status {
    const Tensor& x = kc.input(0);
    const int64_t* pi = kc.input(1).data_as<int64_t>();
    const size_t elem = dtype_size(x.dtype());
    const uint8_t* src = static_cast<const uint8_t*>(x.data());
    uint8_t* dst = static_cast<uint8_t*>(kc.output(0).data());
    for (int64_t bi = 0; bi < batches; ++bi)
      for (int64_t t = 0; t < per_batch; ++t) {
        const int64_t* tuple = pi + (bi * per_batch + t) * k;
        int64_t off = bi * batch_stride;
        for (int64_t j = 0; j < k; ++j) {
          const int64_t n = data[b + j];
          int64_t v = tuple[j];
          if (v < -n || v >= n)
            return invalid_argument("index " + std::to_string(v) + " is out of range for data dim " + std::to_string(b + j) +
                                    " of size " + std::to_string(n));
          if (v < 0) v += n;
          off += v * strides[b + j];
        }
        if (slice) std::memcpy(dst, src + off * elem, static_cast<size_t>(slice) * elem);
        dst += slice * elem;
      }
    return Status::ok();
  });
}

}  // namespace tessera::ref
