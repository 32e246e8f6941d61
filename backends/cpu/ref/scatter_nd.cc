// ScatterND reference kernel (runtime/ops/scatter_nd.cc): copy data, then for each index
// tuple (in row-major order) combine the update slice into output[t, :].
#include "backends/cpu/ref/ref_util.h"
#include "backends/cpu/ref/scatter_reduction.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_ScatterND(const CompileContext& ctx) {
  const Shape data = ctx.input(0).shape;
  const Shape idx = ctx.input(1).shape;
  const int64_t k = idx.back();
  const int64_t tuples = dims_product(idx, 0, idx.size() - 1);
  const int64_t slice = dims_product(data, k, data.size());
  const std::vector<int64_t> strides = contiguous_strides(data);
  const ScatterReduction red = parse_scatter_reduction(ctx.node.attr_s("reduction", "none"));
  return make_fn_kernel([=](const KernelContext& kc) -> Status {
    const Tensor& x = kc.input(0);
    const int64_t* pi = kc.input(1).data_as<int64_t>();
    const Tensor& upd = kc.input(2);
    Tensor& y = kc.output(0);
    for (int64_t i = 0; i < tuples * k; ++i) {
      const int64_t n = data[i % k];
      if (pi[i] < -n || pi[i] >= n)
        return invalid_argument("index " + std::to_string(pi[i]) + " is out of range for data dim " + std::to_string(i % k) +
                                " of size " + std::to_string(n));
    }
    if (x.nbytes()) std::memcpy(y.data(), x.data(), x.nbytes());
    auto offset_of = [&](int64_t t) {
      int64_t off = 0;
      for (int64_t j = 0; j < k; ++j) {
        int64_t v = pi[t * k + j];
        if (v < 0) v += data[j];
        off += v * strides[j];
      }
      return off;
    };
    if (red == ScatterReduction::kNone) {
      const size_t elem = dtype_size(x.dtype());
      for (int64_t t = 0; t < tuples; ++t)
        if (slice)
          std::memcpy(static_cast<uint8_t*>(y.data()) + offset_of(t) * elem,
                      static_cast<const uint8_t*>(upd.data()) + t * slice * elem, static_cast<size_t>(slice) * elem);
      return Status::ok();
    }
    return dispatch_numeric(x.dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      T* py = y.data_as<T>();
      const T* pu = upd.data_as<T>();
      for (int64_t t = 0; t < tuples; ++t) {
        const int64_t off = offset_of(t);
        for (int64_t s = 0; s < slice; ++s) py[off + s] = scatter_combine(red, py[off + s], pu[t * slice + s]);
      }
      return Status::ok();
    });
  });
}

}  // namespace tessera::ref
