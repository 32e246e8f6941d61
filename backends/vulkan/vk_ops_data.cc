// Data movement on the Vulkan backend, for 4-byte dtypes (float32, int32): Reshape,
// Flatten, Squeeze, Unsqueeze, Identity, Dropout (inference) as one copy; Transpose, Slice,
// Expand, Concat, Split and Gather as strided copies (copy.comp, gather.comp). Semantics:
// the ONNX specs (Transpose-13, Slice-13, Expand-13, Concat-13, Split-18, Gather-13), with
// the same plan-time helpers as the CPU reference kernels.
#include <algorithm>

#include "backends/cpu/ref/ref_kernels.h"
#include "backends/cpu/ref/ref_util.h"
#include "backends/vulkan/vk_backend.h"
#include "runtime/ops/shape_params.h"

namespace tessera::vk {

namespace {

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}
constexpr int64_t kMaxWords = int64_t{1} << 31;

/// copy.comp's push constants: y[yo + c . so] = x[xo + c . si] over dims (words).
struct CopyPush {
  uint64_t x, y;
  uint32_t n;
  int32_t rank;
  uint32_t xo, yo;
  uint32_t dims[6];
  int32_t si[6];
  uint32_t so[6];
};

/// A strided view over at most 6 dims, dense output unless `so` is set.
struct View {
  std::vector<int64_t> dims, si, so;
  int64_t xo = 0, yo = 0;
};

/// Drops size-1 dims and merges dims that are contiguous in both input and output.
View simplify(const View& v) {
  View s;
  s.xo = v.xo;
  s.yo = v.yo;
  for (size_t d = 0; d < v.dims.size(); ++d) {
    if (v.dims[d] == 1) continue;
    if (!s.dims.empty() && s.si.back() == v.si[d] * v.dims[d] && s.so.back() == v.so[d] * v.dims[d]) {
      s.dims.back() *= v.dims[d];
      s.si.back() = v.si[d];
      s.so.back() = v.so[d];
      continue;
    }
    s.dims.push_back(v.dims[d]);
    s.si.push_back(v.si[d]);
    s.so.push_back(v.so[d]);
  }
  return s;
}

/// Dense output strides of `dims`.
std::vector<int64_t> dense(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) s[d - 1] = s[d] * dims[d];
  return s;
}

/// The push constants of a view, or nullopt-like false when it does not fit (rank > 6 or
/// offsets beyond 2^31 words).
bool to_push(const View& v0, CopyPush* p) {
  View v = simplify(v0);
  if (v.dims.size() > 6) return false;
  int64_t n = 1, maxx = v.xo, minx = v.xo, maxy = v.yo;
  for (size_t d = 0; d < v.dims.size(); ++d) {
    n *= v.dims[d];
    if (v.dims[d] == 0) continue;
    (v.si[d] >= 0 ? maxx : minx) += (v.dims[d] - 1) * v.si[d];
    maxy += (v.dims[d] - 1) * v.so[d];
  }
  if (n == 0) maxx = minx = maxy = 0;
  if (n >= kMaxWords || maxx >= kMaxWords || minx < 0 || maxy >= kMaxWords) return false;
  *p = CopyPush{};
  p->n = static_cast<uint32_t>(n);
  p->rank = static_cast<int32_t>(v.dims.size());
  p->xo = static_cast<uint32_t>(v.xo);
  p->yo = static_cast<uint32_t>(v.yo);
  for (size_t d = 0; d < v.dims.size(); ++d) {
    p->dims[d] = static_cast<uint32_t>(v.dims[d]);
    p->si[d] = static_cast<int32_t>(v.si[d]);
    p->so[d] = static_cast<uint32_t>(v.so[d]);
  }
  return true;
}

Status run_copy(VulkanBackend* b, const CopyPush& p0, const Tensor& x, const Tensor& y) {
  CopyPush p = p0;
  p.x = addr(x);
  p.y = addr(y);
  return b->dispatch_1d(Shader::kCopy, &p, sizeof(p), p.n, {range_of(x)}, {range_of(y)});
}

bool word_dtype(DType t) { return dtype_size(t) == 4; }

/// Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout (inference): the bytes are
/// unchanged; one dense copy (the planner does not alias values).
Result<std::unique_ptr<Kernel>> make_copy(VulkanBackend* b, const CompileContext& ctx) {
  if (!ctx.has_input(0) || ctx.outputs.empty() || !word_dtype(ctx.input(0).dtype)) return decline();
  if (ctx.node.op_type == "Dropout") {
    for (size_t i = 1; i < ctx.node.outputs.size(); ++i)
      if (ctx.node.outputs[i] >= 0) return decline();  // the mask output
    if (ctx.has_input(2)) {
      if (!ctx.input(2).constant || ctx.input(2).constant->numel() != 1 || ctx.input(2).dtype != DType::kBool ||
          ctx.input(2).constant->data_as<bool>()[0])
        return decline();
    }
  }
  if (ctx.outputs[0].dtype != ctx.input(0).dtype || numel(ctx.outputs[0].shape) != numel(ctx.input(0).shape)) return decline();
  const int64_t n = numel(ctx.input(0).shape);
  CopyPush p;
  if (!to_push(View{{n}, {1}, {1}}, &p)) return decline();
  TSR_RETURN_IF_ERROR(b->device()->pipeline(Shader::kCopy).status());
  return make_fn_kernel([b, p](const KernelContext& k) -> Status {
    if (k.output(0).data() == k.input(0).data()) return Status::ok();
    return run_copy(b, p, k.input(0), k.output(0));
  });
}

Result<std::unique_ptr<Kernel>> make_transpose(VulkanBackend* b, const CompileContext& ctx) {
  if (!ctx.has_input(0) || !word_dtype(ctx.input(0).dtype)) return decline();
  const Shape& xs = ctx.input(0).shape;
  const int64_t rank = static_cast<int64_t>(xs.size());
  std::vector<int64_t> perm = ctx.node.attr_ints("perm");
  if (!ctx.node.find_attr("perm"))
    for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
  if (static_cast<int64_t>(perm.size()) != rank) return decline();
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t& q : perm) {
    if (q < 0) q += rank;
    if (q < 0 || q >= rank || seen[static_cast<size_t>(q)]) return decline();
    seen[static_cast<size_t>(q)] = true;
  }
  const std::vector<int64_t> xstr = ref::contiguous_strides(xs);
  View v;
  for (int64_t j = 0; j < rank; ++j) {
    v.dims.push_back(xs[static_cast<size_t>(perm[static_cast<size_t>(j)])]);
    v.si.push_back(xstr[static_cast<size_t>(perm[static_cast<size_t>(j)])]);
  }
  v.so = dense(v.dims);
  CopyPush p;
  if (!to_push(v, &p)) return decline();
  TSR_RETURN_IF_ERROR(b->device()->pipeline(Shader::kCopy).status());
  return make_fn_kernel([b, p](const KernelContext& k) { return run_copy(b, p, k.input(0), k.output(0)); });
}

Result<std::unique_ptr<Kernel>> make_slice(VulkanBackend* b, const CompileContext& ctx) {
  if (!ctx.has_input(0) || !word_dtype(ctx.input(0).dtype)) return decline();
  const Shape& xs = ctx.input(0).shape;
  Result<SliceParams> sp = resolve_slice(ctx.node, xs, ref::const_inputs_of(ctx));
  if (!sp.is_ok()) return decline();
  const SliceParams& s = sp.value();
  const std::vector<int64_t> xstr = ref::contiguous_strides(xs);
  View v;
  for (size_t a = 0; a < xs.size(); ++a) {
    v.dims.push_back(s.out[a]);
    v.si.push_back(xstr[a] * s.step[a]);
    v.xo += xstr[a] * s.start[a];
  }
  v.so = dense(v.dims);
  CopyPush p;
  if (!to_push(v, &p)) return decline();
  TSR_RETURN_IF_ERROR(b->device()->pipeline(Shader::kCopy).status());
  return make_fn_kernel([b, p](const KernelContext& k) { return run_copy(b, p, k.input(0), k.output(0)); });
}

Result<std::unique_ptr<Kernel>> make_expand(VulkanBackend* b, const CompileContext& ctx) {
  if (!ctx.has_input(0) || ctx.outputs.empty() || !word_dtype(ctx.input(0).dtype)) return decline();
  const Shape& xs = ctx.input(0).shape;
  const Shape& os = ctx.outputs[0].shape;
  if (os.size() < xs.size()) return decline();
  const std::vector<int64_t> xstr = ref::contiguous_strides(xs);
  View v;
  const size_t lead = os.size() - xs.size();
  for (size_t d = 0; d < os.size(); ++d) {
    v.dims.push_back(os[d]);
    v.si.push_back(d < lead || xs[d - lead] == 1 ? 0 : xstr[d - lead]);
  }
  v.so = dense(v.dims);
  CopyPush p;
  if (!to_push(v, &p)) return decline();
  TSR_RETURN_IF_ERROR(b->device()->pipeline(Shader::kCopy).status());
  return make_fn_kernel([b, p](const KernelContext& k) { return run_copy(b, p, k.input(0), k.output(0)); });
}

/// Concat (ONNX Concat-13) and Split (Split-18): rows of outer = prod(dims before axis);
/// each input (output) is a band of axis_len * inner words per row: one strided copy each.
Result<std::unique_ptr<Kernel>> make_concat_split(VulkanBackend* b, const CompileContext& ctx) {
  const bool concat = ctx.node.op_type == "Concat";
  if (!ctx.has_input(0) || !word_dtype(ctx.input(0).dtype)) return decline();
  const Shape& whole = concat ? ctx.outputs[0].shape : ctx.input(0).shape;
  const int64_t rank = static_cast<int64_t>(whole.size());
  int64_t axis = ctx.node.attr_i("axis", concat ? 1 : 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return decline();
  const int64_t outer = ref::dims_product(whole, 0, static_cast<size_t>(axis));
  const int64_t inner = ref::dims_product(whole, static_cast<size_t>(axis) + 1, whole.size());
  const int64_t wide = whole[static_cast<size_t>(axis)] * inner;
  std::vector<CopyPush> parts;
  std::vector<bool> present;
  int64_t off = 0;
  const size_t nparts = concat ? ctx.inputs.size() : ctx.outputs.size();
  for (size_t i = 0; i < nparts; ++i) {
    if (concat && !ctx.has_input(i)) return decline();
    if (concat && ctx.input(i).dtype != ctx.input(0).dtype) return decline();
    const Shape& s = concat ? ctx.input(i).shape : ctx.outputs[i].shape;
    if (static_cast<int64_t>(s.size()) != rank) return decline();
    const int64_t band = s[static_cast<size_t>(axis)] * inner;
    View v;
    v.dims = {outer, band};
    if (concat) {
      v.si = {band, 1};
      v.so = {wide, 1};
      v.yo = off;
    } else {
      v.si = {wide, 1};
      v.so = {band, 1};
      v.xo = off;
    }
    CopyPush p;
    if (!to_push(v, &p)) return decline();
    parts.push_back(p);
    present.push_back(concat || (i < ctx.node.outputs.size() && ctx.node.outputs[i] >= 0));
    off += band;
  }
  if (off != wide) return decline();
  TSR_RETURN_IF_ERROR(b->device()->pipeline(Shader::kCopy).status());
  return make_fn_kernel([b, concat, parts, present](const KernelContext& k) -> Status {
    for (size_t i = 0; i < parts.size(); ++i) {
      if (!present[i] || parts[i].n == 0) continue;
      if (concat) {
        TSR_RETURN_IF_ERROR(run_copy(b, parts[i], k.input(i), k.output(0)));
      } else {
        if (i >= k.outputs.size() || !k.outputs[i]) continue;
        TSR_RETURN_IF_ERROR(run_copy(b, parts[i], k.input(0), k.output(i)));
      }
    }
    return Status::ok();
  });
}

struct GatherPush {
  uint64_t x, idx, y;
  uint32_t n, axis_len, n_idx, inner;
  int32_t idx64;
};

/// Gather with indices known when planning (checked in range then); other Gathers (indices
/// computed at run time) run on the CPU, which reports an out-of-range index.
Result<std::unique_ptr<Kernel>> make_gather(VulkanBackend* b, const CompileContext& ctx) {
  if (!ctx.has_input(0) || !ctx.has_input(1) || !word_dtype(ctx.input(0).dtype)) return decline();
  const ValueInfo& iv = ctx.input(1);
  if ((iv.dtype != DType::kInt64 && iv.dtype != DType::kInt32) || !iv.constant) return decline();
  const Shape& xs = ctx.input(0).shape;
  const int64_t rank = static_cast<int64_t>(xs.size());
  int64_t axis = ctx.node.attr_i("axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return decline();
  const int64_t axis_len = xs[static_cast<size_t>(axis)];
  const Tensor& idx = *iv.constant;
  for (int64_t j = 0; j < idx.numel(); ++j) {
    const int64_t v = iv.dtype == DType::kInt64 ? idx.data_as<int64_t>()[j] : idx.data_as<int32_t>()[j];
    if (v < -axis_len || v >= axis_len) return decline();  // the CPU kernel reports it
  }
  GatherPush p{};
  p.axis_len = static_cast<uint32_t>(axis_len);
  p.n_idx = static_cast<uint32_t>(idx.numel());
  p.inner = static_cast<uint32_t>(ref::dims_product(xs, static_cast<size_t>(axis) + 1, xs.size()));
  p.idx64 = iv.dtype == DType::kInt64;
  const int64_t n = numel(ctx.outputs[0].shape);
  if (n >= kMaxWords || numel(xs) >= kMaxWords || p.inner == 0) return decline();
  p.n = static_cast<uint32_t>(n);
  TSR_RETURN_IF_ERROR(b->device()->pipeline(Shader::kGather).status());
  return make_fn_kernel([b, p](const KernelContext& k) -> Status {
    GatherPush q = p;
    q.x = addr(k.input(0));
    q.idx = addr(k.input(1));
    q.y = addr(k.output(0));
    return b->dispatch_1d(Shader::kGather, &q, sizeof(q), q.n, {range_of(k.input(0)), range_of(k.input(1))},
                          {range_of(k.output(0))});
  });
}

}  // namespace

void add_data_ops(std::vector<VkOp>& ops) {
  for (const char* t : {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Dropout"}) ops.push_back({t, &make_copy});
  ops.push_back({"Transpose", &make_transpose});
  ops.push_back({"Slice", &make_slice});
  ops.push_back({"Expand", &make_expand});
  ops.push_back({"Concat", &make_concat_split});
  ops.push_back({"Split", &make_concat_split});
  ops.push_back({"Gather", &make_gather});
}

}  // namespace tessera::vk
