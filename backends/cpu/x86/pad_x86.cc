// Pad (ONNX Pad-1/2/11/13/18/19/21), every numeric dtype (float16 and bfloat16 too, which
// the reference lacks) and mode, by output rows, with the
// reference's mapping (backends/cpu/ref/pad.cc): output coordinate c[a] reads input
// coordinate pad_source_index(c[a] - begin[a]) (runtime/ops/shape_params.h: constant:
// outside -> the pad value; edge: clamp; reflect: numpy "reflect"; wrap: mod n), but
// worked out once per row of the last axis instead of once per element per axis:
//   - the outer coordinates of a row map to one input row (or to none: a row of pad values);
//   - along the last axis, the output columns [lo, hi) read the input columns
//     [lo - begin, hi - begin) and are copied with memcpy; the columns before lo and from hi
//     on read through a table of source columns made at plan time (-1: the pad value).
// Negative pads (crops) need nothing special: each kept output coordinate maps to its
// input coordinate. ISA-independent: built on x86-64 and aarch64.
#include <algorithm>
#include <cstring>

#include "backends/cpu/ref/ref_kernels.h"
#include "backends/cpu/ref/ref_util.h"
#include "backends/cpu/x86/x86_kernels.h"
#include "runtime/ops/shape_params.h"
#include "tessera/half.h"

namespace tessera::x86 {

namespace {

struct PadPlan {
  PadParams p;
  Shape in;
  std::vector<int64_t> in_strides;
  std::vector<int64_t> col_src;  // last axis: input column of each output column, or -1
  int64_t lo = 0, hi = 0;        // output columns [lo, hi) read input columns lo - begin ..
  bool value_from_attr = false;
};

template <typename T>
void run_rows(const PadPlan& pl, const T* x, T* y, T value) {
  const size_t r = pl.in.size();
  const size_t last = r - 1;
  const int64_t out_cols = pl.p.out[last];
  const int64_t rows = out_cols ? shape_numel(pl.p.out).value() / out_cols : 0;
  for (int64_t row = 0; row < rows; ++row) {
    T* yr = y + row * out_cols;
    // The input row of this output row's outer coordinates (innermost outer axis first).
    int64_t rem = row, off = 0;
    bool inside = true;
    for (size_t a = last; a-- > 0;) {
      const int64_t i = pad_source_index(rem % pl.p.out[a] - pl.p.begin[a], pl.in[a], pl.p.mode);
      rem /= pl.p.out[a];
      if (i < 0) {
        inside = false;
        break;
      }
      off += i * pl.in_strides[a];
    }
    if (!inside) {
      for (int64_t j = 0; j < out_cols; ++j) yr[j] = value;
      continue;
    }
    const T* xr = x + off;
    for (int64_t j = 0; j < pl.lo; ++j) yr[j] = pl.col_src[j] < 0 ? value : xr[pl.col_src[j]];
    if (pl.hi > pl.lo) std::memcpy(yr + pl.lo, xr + (pl.lo - pl.p.begin[last]), static_cast<size_t>(pl.hi - pl.lo) * sizeof(T));
    for (int64_t j = std::max(pl.lo, pl.hi); j < out_cols; ++j) yr[j] = pl.col_src[j] < 0 ? value : xr[pl.col_src[j]];
  }
}

}  // namespace

Result<std::unique_ptr<Kernel>> make_Pad(const CompileContext& ctx) {
  const Shape& in = ctx.input(0).shape;
  if (in.empty()) return std::unique_ptr<Kernel>();  // a scalar: the reference
  for (int64_t d : in)
    if (d < 1) return std::unique_ptr<Kernel>();  // an empty input: the reference
  auto params = resolve_pad(ctx.node, in, ref::const_inputs_of(ctx));
  if (!params.is_ok()) return std::unique_ptr<Kernel>();  // the reference reports it
  PadPlan pl;
  pl.p = std::move(params.value());
  pl.in = in;
  pl.in_strides = ref::contiguous_strides(in);
  pl.value_from_attr = ctx.node.opset < 11;
  const size_t last = in.size() - 1;
  const int64_t out_cols = pl.p.out[last], n = in[last], begin = pl.p.begin[last];
  pl.col_src.resize(static_cast<size_t>(out_cols));
  for (int64_t j = 0; j < out_cols; ++j) pl.col_src[static_cast<size_t>(j)] = pad_source_index(j - begin, n, pl.p.mode);
  // The columns that read inside the input unfolded: j - begin in [0, n).
  pl.lo = std::clamp<int64_t>(begin, 0, out_cols);
  pl.hi = std::clamp<int64_t>(begin + n, 0, out_cols);
  if (pl.hi < pl.lo) pl.hi = pl.lo;
  return make_fn_kernel([pl](const KernelContext& k) -> Status {
    const Tensor& x = k.input(0);
    Tensor& y = k.output(0);
    if (y.numel() == 0) return Status::ok();
    if (x.dtype() == DType::kFloat16 || x.dtype() == DType::kBFloat16) {
      // Moved as 16-bit words; the pad value's bits: the attribute (opset < 11) rounded to
      // this type, else input 2's bits, else +0.
      const bool half = x.dtype() == DType::kFloat16;
      uint16_t value = 0;
      if (pl.value_from_attr) value = half ? float_to_half(pl.p.attr_value) : float_to_bfloat16(pl.p.attr_value);
      else if (k.has_input(2) && k.input(2).numel() > 0) value = k.input(2).data_as<uint16_t>()[0];
      run_rows<uint16_t>(pl, x.data_as<uint16_t>(), y.data_as<uint16_t>(), value);
      return Status::ok();
    }
    return ref::dispatch_numeric(x.dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      T value{};
      if (pl.value_from_attr) value = static_cast<T>(pl.p.attr_value);
      else if (k.has_input(2) && k.input(2).numel() > 0) value = k.input(2).data_as<T>()[0];
      run_rows<T>(pl, x.data_as<T>(), y.data_as<T>(), value);
      return Status::ok();
    });
  });
}

}  // namespace tessera::x86
