// CenterCropPad reference kernel (runtime/ops/center_crop_pad.cc). Per dim d the output
// coordinate o reads input coordinate o + delta[d], with
//   delta = (in - out) / 2 when cropping (out < in),  -((out - in) / 2) when padding,
// and an input coordinate outside [0, in) gives zero bytes (0 for every dtype).
#include <cstring>

#include "backends/cpu/ref/ref_util.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_CenterCropPad(const CompileContext& ctx) {
  const Shape in = ctx.input(0).shape, out = ctx.outputs[0].shape;
  std::vector<int64_t> delta(in.size());
  for (size_t d = 0; d < in.size(); ++d) delta[d] = out[d] <= in[d] ? (in[d] - out[d]) / 2 : -((out[d] - in[d]) / 2);
  const std::vector<int64_t> in_strides = contiguous_strides(in);
  const size_t esize = dtype_size(ctx.input(0).dtype);
  return make_fn_kernel([=](const KernelContext& k) -> Status {
    const uint8_t* x = static_cast<const uint8_t*>(k.input(0).data());
    uint8_t* y = static_cast<uint8_t*>(k.output(0).data());
    const int64_t n = k.output(0).numel();
    for (int64_t i = 0; i < n; ++i) {
      int64_t rem = i, off = 0;
      bool inside = true;
      for (size_t d = out.size(); d-- > 0;) {
        const int64_t c = rem % out[d] + delta[d];
        rem /= out[d];
        if (c < 0 || c >= in[d]) inside = false;
        off += c * in_strides[d];
      }
      if (inside) std::memcpy(y + i * esize, x + off * esize, esize);
      else std::memset(y + i * esize, 0, esize);
    }
    return Status::ok();
  });
}

}  // namespace tessera::ref
