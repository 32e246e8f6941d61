// Unique reference kernel (runtime/ops/unique.cc): unique_slices() on X, then Y gathers the
// first occurrence of each unique slice.
#include <cstring>

#include "backends/cpu/ref/ref_kernels.h"
#include "runtime/ops/unique.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_Unique(const CompileContext& ctx) {
  const UniqueLayout l = unique_layout(ctx.input(0).shape, ctx.node);
  const bool sorted = ctx.node.attr_i("sorted", 1) != 0;
  const size_t es = dtype_size(ctx.input(0).dtype);
  const DType dt = ctx.input(0).dtype;
  // first, counts, inverse (when not outputs) and the algorithm's 4 * len.
  const size_t scratch = static_cast<size_t>(l.len) * 7 * sizeof(int64_t);
  return make_fn_kernel(
      [=](const KernelContext& k) -> Status {
        int64_t* s = static_cast<int64_t*>(k.scratch);
        int64_t* first = s;
        int64_t* counts = s + l.len;
        int64_t* inverse = s + 2 * l.len;
        const int64_t n = unique_slices(k.input(0).data(), dt, l, sorted, first, counts, inverse, s + 3 * l.len);
        if (n != k.output(0).numel() / std::max<int64_t>(1, l.outer * l.inner))
          return internal_error("Unique: the number of unique values changed since planning");
        const uint8_t* x = static_cast<const uint8_t*>(k.input(0).data());
        uint8_t* y = static_cast<uint8_t*>(k.output(0).data());
        const size_t run = static_cast<size_t>(l.inner) * es;
        for (int64_t o = 0; o < l.outer; ++o)
          for (int64_t u = 0; u < n; ++u) std::memcpy(y + (o * n + u) * run, x + (o * l.len + first[u]) * run, run);
        auto put = [&](size_t i, const int64_t* v, int64_t count) {
          if (k.outputs.size() > i && k.outputs[i]) std::memcpy(k.output(i).data(), v, static_cast<size_t>(count) * 8);
        };
        put(1, first, n);
        put(2, inverse, l.len);
        put(3, counts, n);
        return Status::ok();
      },
      scratch);
}

}  // namespace tessera::ref
