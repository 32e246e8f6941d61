// ReverseSequence reference kernel (runtime/ops/reverse_sequence.cc): input viewed as
// [dim0, dim1, inner]; row (t, b) of the output is row (len[b] - 1 - t, b) of the input for
// t < len[b], else row (t, b).
#include "backends/cpu/ref/ref_util.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_ReverseSequence(const CompileContext& ctx) {
  const bool time_first = ctx.node.attr_i("time_axis", 0) == 0;
  return make_fn_kernel([time_first](const KernelContext& k) -> Status {
    const Tensor& x = k.input(0);
    const int64_t* lens = k.input(1).data_as<int64_t>();
    const int64_t T = x.dim(time_first ? 0 : 1), B = x.dim(time_first ? 1 : 0);
    const int64_t inner = dims_product(x.shape(), 2, x.shape().size());
    for (int64_t b = 0; b < B; ++b)
      if (lens[b] < 0 || lens[b] > T)
        return invalid_argument("sequence_lens[" + std::to_string(b) + "] = " + std::to_string(lens[b]) + " is not in [0, " +
                                std::to_string(T) + "]");
    const size_t row = static_cast<size_t>(inner) * dtype_size(x.dtype());
    if (row == 0) return Status::ok();
    const uint8_t* src = static_cast<const uint8_t*>(x.data());
    uint8_t* dst = static_cast<uint8_t*>(k.output(0).data());
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < T; ++t) {
        const int64_t from = t < lens[b] ? lens[b] - 1 - t : t;
        const int64_t o = time_first ? t * B + b : b * T + t;
        const int64_t i = time_first ? from * B + b : b * T + from;
        std::memcpy(dst + o * row, src + i * row, row);
      }
    return Status::ok();
  });
}

}  // namespace tessera::ref
