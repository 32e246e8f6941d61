// Slice reference kernel (runtime/ops/slice.cc): output coords c read input coords
// start[a] + c[a] * step[a]; the parameters are resolved once at compile time.
#include <cstring>

#include "backends/cpu/ref/ref_util.h"

namespace tessera::ref {

namespace {
constexpr size_t kRowsMaxRank = 16;  // ranks up to this take the row-copy loop
}  // namespace

Result<std::unique_ptr<Kernel>> make_Slice(const CompileContext& ctx) {
  TSR_ASSIGN_OR_RETURN(SliceParams p, resolve_slice(ctx.node, ctx.input(0).shape, const_inputs_of(ctx)));
  // Trailing axes taken whole (start 0, step 1, all of it) merge into the axis before them
  // when that one has step 1: its kept elements and theirs are one contiguous run per
  // outer position, so rows get longer (Silero VAD's [31, 258, 4] -> [31, 129, 4] is 31
  // rows of 516 floats, not 3999 rows of 4).
  Shape in = ctx.input(0).shape;
  while (in.size() >= 2) {
    const size_t a = in.size() - 1;
    if (!(p.start[a] == 0 && p.step[a] == 1 && p.out[a] == in[a] && p.step[a - 1] == 1)) break;
    p.start[a - 1] *= in[a];
    p.out[a - 1] *= in[a];
    in[a - 1] *= in[a];
    p.start.pop_back();
    p.step.pop_back();
    p.out.pop_back();
    in.pop_back();
  }
  std::vector<int64_t> in_strides = contiguous_strides(in);
  return make_fn_kernel([p, in_strides](const KernelContext& k) -> Status {
    const Tensor& x = k.input(0);
    Tensor& y = k.output(0);
    return dispatch_bytes(dtype_size(x.dtype()), [&](auto tag) -> Status {
      using W = decltype(tag);
      const W* px = x.data_as<W>();
      W* py = y.data_as<W>();
      const size_t r = p.out.size();  // the merged axes (y's shape is the node's)
      if (r >= 1 && r <= kRowsMaxRank && y.numel() > 0) {
        // Output rows (the last axis) one at a time, the row's input offset kept
        // incrementally over the outer axes; a unit step copies the row with memcpy.
        const size_t last = r - 1;
        const int64_t inner = p.out[last], in_step = p.step[last] * in_strides[last];
        int64_t idx[kRowsMaxRank] = {}, delta[kRowsMaxRank];
        int64_t base = 0;
        for (size_t a = 0; a < r; ++a) {
          base += p.start[a] * in_strides[a];
          delta[a] = p.step[a] * in_strides[a];
        }
        for (int64_t o = 0; o < y.numel(); o += inner, py += inner) {
          if (in_step == 1) {
            std::memcpy(py, px + base, static_cast<size_t>(inner) * sizeof(W));
          } else {
            for (int64_t j = 0; j < inner; ++j) py[j] = px[base + j * in_step];
          }
          for (size_t a = last; a-- > 0;) {  // next row: carry over the outer axes
            base += delta[a];
            if (++idx[a] < p.out[a]) break;
            base -= delta[a] * p.out[a];
            idx[a] = 0;
          }
        }
        return Status::ok();
      }
      for (int64_t o = 0; o < y.numel(); ++o) {
        int64_t rem = o, off = 0;
        for (size_t k2 = 0; k2 < r; ++k2) {
          const size_t a = r - 1 - k2;
          const int64_t c = rem % p.out[a];
          rem /= p.out[a];
          off += (p.start[a] + c * p.step[a]) * in_strides[a];
        }
        py[o] = px[off];
      }
      return Status::ok();
    });
  });
}

}  // namespace tessera::ref
