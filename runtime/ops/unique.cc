// Unique (ONNX opset 11): the unique elements of X (flattened) or unique slices along
// `axis`, sorted ascending (sorted=1, lexicographic for slices) or in order of first
// occurrence (sorted=0); optional outputs indices (first occurrence), inverse_indices and
// counts, all int64. The number of unique values depends on X's values, so X must be known
// when planning (the session plans small inputs by value). unique_slices() is shared with
// the kernel.
#include "runtime/ops/unique.h"

#include <algorithm>
#include <cstring>

#include "runtime/ops/op_schema.h"

namespace tessera {

UniqueLayout unique_layout(const Shape& x, const Node& node) {
  UniqueLayout l;
  const Attribute* a = node.find_attr("axis");
  if (a) {
    const int64_t r = static_cast<int64_t>(x.size());
    l.axis = a->i < 0 ? a->i + r : a->i;
    for (int64_t d = 0; d < l.axis; ++d) l.outer *= x[d];
    l.len = x[l.axis];
    for (int64_t d = l.axis + 1; d < r; ++d) l.inner *= x[d];
  } else {
    for (int64_t d : x) l.len *= d;
  }
  return l;
}

namespace {
// Compares slice i and slice j of X (each `outer` runs of `inner` elements) lexicographically.
int compare_slices(const uint8_t* x, DType dt, const UniqueLayout& l, int64_t i, int64_t j) {
  const size_t es = dtype_size(dt);
  for (int64_t o = 0; o < l.outer; ++o)
    for (int64_t k = 0; k < l.inner; ++k) {
      const uint8_t* a = x + ((o * l.len + i) * l.inner + k) * es;
      const uint8_t* b = x + ((o * l.len + j) * l.inner + k) * es;
      double va, vb;
      switch (dt) {
        case DType::kFloat32: { float fa, fb; std::memcpy(&fa, a, 4); std::memcpy(&fb, b, 4); va = fa; vb = fb; break; }
        case DType::kFloat64: std::memcpy(&va, a, 8); std::memcpy(&vb, b, 8); break;
        case DType::kInt64: {  // compared exactly, not through double
          int64_t ia, ib;
          std::memcpy(&ia, a, 8);
          std::memcpy(&ib, b, 8);
          if (ia != ib) return ia < ib ? -1 : 1;
          continue;
        }
        case DType::kInt32: { int32_t ia, ib; std::memcpy(&ia, a, 4); std::memcpy(&ib, b, 4); va = ia; vb = ib; break; }
        case DType::kInt8: va = static_cast<int8_t>(*a); vb = static_cast<int8_t>(*b); break;
        case DType::kUInt8: case DType::kBool: va = *a; vb = *b; break;
        default: return std::memcmp(a, b, es);
      }
      if (va != vb) return va < vb ? -1 : 1;
    }
  return 0;
}
}  // namespace

int64_t unique_slices(const void* xdata, DType dt, const UniqueLayout& l, bool sorted, int64_t* first, int64_t* counts,
                      int64_t* inverse, int64_t* scratch) {
  const uint8_t* x = static_cast<const uint8_t*>(xdata);
  const int64_t len = l.len;
  int64_t* order = scratch;             // slice indices in sorted order
  int64_t* first_s = scratch + len;     // per sorted run: first occurrence
  int64_t* counts_s = scratch + 2 * len;
  int64_t* perm = scratch + 3 * len;    // run ids by first occurrence
  for (int64_t i = 0; i < len; ++i) order[i] = i;
  // Ties broken by index: the same order as a stable sort, without its buffer.
  std::sort(order, order + len, [&](int64_t a, int64_t b) {
    int c = compare_slices(x, dt, l, a, b);
    return c != 0 ? c < 0 : a < b;
  });
  int64_t n = 0;
  for (int64_t s = 0; s < len; ++s) {
    if (s == 0 || compare_slices(x, dt, l, order[s - 1], order[s]) != 0) {
      first_s[n] = order[s];
      counts_s[n] = 0;
      ++n;
    }
    inverse[order[s]] = n - 1;
    ++counts_s[n - 1];
  }
  for (int64_t r = 0; r < n; ++r) perm[r] = r;
  if (!sorted) std::sort(perm, perm + n, [&](int64_t a, int64_t b) { return first_s[a] < first_s[b]; });
  // rank[r] (new id of sorted run r) reuses `order`, no longer needed.
  int64_t* rank = order;
  for (int64_t k = 0; k < n; ++k) {
    first[k] = first_s[perm[k]];
    counts[k] = counts_s[perm[k]];
    rank[perm[k]] = k;
  }
  for (int64_t i = 0; i < len; ++i) inverse[i] = rank[inverse[i]];
  return n;
}

namespace {
Status infer(InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  if (!x.constant)
    return ctx.unsupported("input 0 must be computable before the run (the number of unique values depends on it)");
  if (dtype_size(x.dtype) == 0) return ctx.unsupported(std::string("dtype ") + dtype_name(x.dtype) + " is not supported");
  if (const Attribute* a = ctx.node().find_attr("axis"))
    TSR_RETURN_IF_ERROR(normalize_axis(a->i, static_cast<int64_t>(x.shape.size()), ctx.node()).status());
  UniqueLayout l = unique_layout(x.shape, ctx.node());
  std::vector<int64_t> buf(static_cast<size_t>(l.len) * 7);
  int64_t* p = buf.data();
  int64_t n = unique_slices(x.constant->data(), x.dtype, l, true, p, p + l.len, p + 2 * l.len, p + 3 * l.len);
  Shape y = ctx.node().find_attr("axis") ? x.shape : Shape{n};
  if (ctx.node().find_attr("axis")) y[l.axis] = n;
  ctx.output(0) = {x.dtype, y, nullptr};
  for (size_t i = 1; i < ctx.num_outputs(); ++i)
    ctx.output(i) = {DType::kInt64, i == 2 ? Shape{l.len} : Shape{n}, nullptr};
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_Unique = {"Unique", 1, 1, 1, 4, infer};

}  // namespace tessera
