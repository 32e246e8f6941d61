// The CUDA backend's own-kernel ops: parse attributes and shapes at plan time (with the
// same helpers the CPU reference uses), decline what the kernels do not take, and return a
// kernel that launches backends/cuda/*.cu on the session's stream. Semantics: the ONNX
// operator specs, as the CPU reference kernels (backends/cpu/ref/) implement them.
#include <algorithm>
#include <cfloat>
#include <cmath>

#include "backends/cpu/ref/ref_util.h"
#include "backends/cuda/cuda_backend.h"
#include "backends/unary_math.h"
#include "backends/cuda/cuda_kernels.h"
#include "backends/gpu_resize.h"
#include "runtime/ops/softmax_layout.h"
#include "runtime/ops/spatial_attrs.h"

namespace tessera::cuda {

namespace {

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

/// A kernel from a callable returning cudaError_t for the launch; errors name the op.
template <typename F>
Result<std::unique_ptr<Kernel>> launch_kernel(const CompileContext& ctx, F f) {
  std::string what = ctx.node.op_type;
  return make_fn_kernel([f, what](const KernelContext& k) -> Status { return cuda_check(f(k), what); });
}

// ---- data movement ----

/// Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout (inference): the bytes are
/// unchanged; one device-to-device copy (the planner does not alias values yet).
Result<std::unique_ptr<Kernel>> make_copy(const CudaContext& c, const CompileContext& ctx) {
  if (!ctx.has_input(0) || ctx.outputs.empty()) return decline();
  if (ctx.node.op_type == "Dropout") {
    for (size_t i = 1; i < ctx.node.outputs.size(); ++i)
      if (ctx.node.outputs[i] >= 0) return decline();  // the mask output
    if (ctx.has_input(2)) {                            // training_mode: only a constant false
      if (!ctx.input(2).constant || ctx.input(2).constant->numel() != 1 || ctx.input(2).dtype != DType::kBool ||
          ctx.input(2).constant->data_as<bool>()[0])
        return decline();
    }
  }
  if (ctx.outputs[0].dtype != ctx.input(0).dtype || numel(ctx.outputs[0].shape) != numel(ctx.input(0).shape)) return decline();
  if (dtype_size(ctx.input(0).dtype) == 0) return decline();
  const CudaContext* cp = &c;
  return launch_kernel(ctx, [cp](const KernelContext& k) -> cudaError_t {
    const size_t bytes = k.output(0).nbytes();
    if (bytes == 0 || k.output(0).data() == k.input(0).data()) return cudaSuccess;
    return cudaMemcpyAsync(k.output(0).data(), k.input(0).data(), bytes, cudaMemcpyDeviceToDevice, cp->stream);
  });
}

/// Merges adjacent dims that move together (in order) under `perm`; returns the collapsed
/// input dims and permutation.
void collapse_perm(const Shape& in, const std::vector<int64_t>& perm, Shape* cin, std::vector<int64_t>* cperm) {
  // Groups: runs of consecutive output positions whose input axes are consecutive.
  std::vector<std::vector<int64_t>> groups;
  for (size_t j = 0; j < perm.size(); ++j) {
    if (in[perm[j]] == 1) continue;  // size-1 dims do not matter
    if (!groups.empty() && groups.back().back() + 1 == perm[j]) {
      // consecutive only if no non-unit axis between them was skipped
      groups.back().push_back(perm[j]);
    } else {
      groups.push_back({perm[j]});
    }
  }
  // Order groups by their first input axis to number them.
  std::vector<size_t> order(groups.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return groups[a][0] < groups[b][0]; });
  std::vector<int64_t> index_of(groups.size());
  cin->clear();
  for (size_t r = 0; r < order.size(); ++r) {
    index_of[order[r]] = static_cast<int64_t>(r);
    int64_t size = 1;
    for (int64_t a : groups[order[r]]) size *= in[a];
    cin->push_back(size);
  }
  cperm->clear();
  for (size_t g = 0; g < groups.size(); ++g) cperm->push_back(index_of[g]);
}

Result<std::unique_ptr<Kernel>> make_transpose(const CudaContext& c, const CompileContext& ctx) {
  if (!ctx.has_input(0)) return decline();
  const Shape& xs = ctx.input(0).shape;
  const int64_t rank = static_cast<int64_t>(xs.size());
  const int es = static_cast<int>(dtype_size(ctx.input(0).dtype));
  if (es != 1 && es != 2 && es != 4 && es != 8) return decline();
  std::vector<int64_t> perm = ctx.node.attr_ints("perm");
  if (!ctx.node.find_attr("perm"))
    for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
  if (static_cast<int64_t>(perm.size()) != rank) return decline();
  std::vector<bool> seen(rank, false);
  for (int64_t& p : perm) {
    if (p < 0) p += rank;
    if (p < 0 || p >= rank || seen[p]) return decline();
    seen[p] = true;
  }
  Shape cin;
  std::vector<int64_t> cperm;
  collapse_perm(xs, perm, &cin, &cperm);
  const int64_t n = numel(xs);
  const CudaContext* cp = &c;
  // [B, R, C] -> [B, C, R] (or [R, C] -> [C, R]): the tiled kernel.
  const bool swap2 = cperm.size() == 2 && cperm[0] == 1;
  const bool swap3 = cperm.size() == 3 && cperm[0] == 0 && cperm[1] == 2 && cperm[2] == 1;
  if ((swap2 || swap3) && (es == 4 || es == 8) && (swap2 || cin[0] <= 65535)) {
    const int64_t b = swap3 ? cin[0] : 1, r = swap3 ? cin[1] : cin[0], cc = swap3 ? cin[2] : cin[1];
    if ((r + 31) / 32 <= 65535)
      return launch_kernel(ctx, [cp, b, r, cc, es](const KernelContext& k) {
        return launch_transpose_tiled(k.input(0).data(), k.output(0).data(), b, r, cc, es, cp->stream);
      });
  }
  if (cin.size() > static_cast<size_t>(kMaxDims)) return decline();
  // The last axis stays last (e.g. BERT's [B, S, H, D] -> [B, H, S, D]): move its rows in
  // 16-byte units, a quarter of the index arithmetic of 4-byte elements. (Device values
  // are 64-byte aligned in the arena.)
  int64_t n_units = n;
  int unit = es;
  if (!cperm.empty() && cperm.back() == static_cast<int64_t>(cin.size()) - 1 && (cin.back() * es) % 16 == 0) {
    cin.back() = cin.back() * es / 16;
    n_units = n * es / 16;
    unit = 16;
  }
  StridedView v;
  v.rank = static_cast<int>(cin.size());
  std::vector<int64_t> in_strides(cin.size(), 1);
  for (int64_t i = static_cast<int64_t>(cin.size()) - 2; i >= 0; --i) in_strides[i] = in_strides[i + 1] * cin[i + 1];
  for (size_t j = 0; j < cperm.size(); ++j) {
    v.out_dims[j] = cin[cperm[j]];
    v.in_strides[j] = in_strides[cperm[j]];
  }
  return launch_kernel(ctx, [cp, v, n, es, n_units, unit](const KernelContext& k) {
    if (v.rank == 0)  // all dims 1 (or empty): a plain copy
      return n ? cudaMemcpyAsync(k.output(0).data(), k.input(0).data(), n * es, cudaMemcpyDeviceToDevice, cp->stream)
               : cudaSuccess;
    return launch_strided_copy(k.input(0).data(), k.output(0).data(), n_units, unit, v, cp->stream);
  });
}

Result<std::unique_ptr<Kernel>> make_slice(const CudaContext& c, const CompileContext& ctx) {
  if (!ctx.has_input(0)) return decline();
  const Shape& xs = ctx.input(0).shape;
  const int es = static_cast<int>(dtype_size(ctx.input(0).dtype));
  if ((es != 1 && es != 2 && es != 4 && es != 8) || xs.size() > static_cast<size_t>(kMaxDims)) return decline();
  Result<SliceParams> sp = resolve_slice(ctx.node, xs, ref::const_inputs_of(ctx));
  if (!sp.is_ok()) return decline();
  const SliceParams& p = sp.value();
  StridedView v;
  v.rank = static_cast<int>(xs.size());
  std::vector<int64_t> strides = ref::contiguous_strides(xs);
  for (size_t a = 0; a < xs.size(); ++a) {
    v.out_dims[a] = p.out[a];
    v.in_strides[a] = strides[a] * p.step[a];
    v.in_offset += strides[a] * p.start[a];
  }
  const int64_t n = numel(p.out);
  const CudaContext* cp = &c;
  return launch_kernel(ctx, [cp, v, n, es](const KernelContext& k) {
    if (v.rank == 0) return n ? cudaMemcpyAsync(k.output(0).data(), k.input(0).data(), es, cudaMemcpyDeviceToDevice, cp->stream)
                              : cudaSuccess;
    return launch_strided_copy(k.input(0).data(), k.output(0).data(), n, es, v, cp->stream);
  });
}

Result<std::unique_ptr<Kernel>> make_expand(const CudaContext& c, const CompileContext& ctx) {
  if (!ctx.has_input(0) || ctx.outputs.empty()) return decline();
  const Shape& xs = ctx.input(0).shape;
  const Shape& os = ctx.outputs[0].shape;
  const int es = static_cast<int>(dtype_size(ctx.input(0).dtype));
  if ((es != 1 && es != 2 && es != 4 && es != 8) || os.size() > static_cast<size_t>(kMaxDims) || os.size() < xs.size())
    return decline();
  StridedView v;
  v.rank = static_cast<int>(os.size());
  std::vector<int64_t> strides = ref::contiguous_strides(xs);
  const size_t lead = os.size() - xs.size();
  for (size_t d = 0; d < os.size(); ++d) {
    v.out_dims[d] = os[d];
    v.in_strides[d] = d < lead || xs[d - lead] == 1 ? 0 : strides[d - lead];
  }
  const int64_t n = numel(os);
  const CudaContext* cp = &c;
  return launch_kernel(ctx, [cp, v, n, es](const KernelContext& k) {
    if (v.rank == 0) return n ? cudaMemcpyAsync(k.output(0).data(), k.input(0).data(), es, cudaMemcpyDeviceToDevice, cp->stream)
                              : cudaSuccess;
    return launch_strided_copy(k.input(0).data(), k.output(0).data(), n, es, v, cp->stream);
  });
}

/// Concat (ONNX Concat-13) and Split (Split-18): rows of outer = prod(dims before axis);
/// each input (output) holds a band of its axis_len * inner elements per row: one 2-D
/// device copy (cudaMemcpy2DAsync) per input (output).
Result<std::unique_ptr<Kernel>> make_concat_split(const CudaContext& c, const CompileContext& ctx) {
  const bool concat = ctx.node.op_type == "Concat";
  if (!ctx.has_input(0)) return decline();
  const Shape& ref_shape = concat ? ctx.outputs[0].shape : ctx.input(0).shape;
  const int64_t rank = static_cast<int64_t>(ref_shape.size());
  int64_t axis = ctx.node.attr_i("axis", concat ? 1 : 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return decline();
  const size_t es = dtype_size(ctx.input(0).dtype);
  if (es == 0) return decline();
  const int64_t outer = ref::dims_product(ref_shape, 0, static_cast<size_t>(axis));
  const int64_t inner = ref::dims_product(ref_shape, static_cast<size_t>(axis) + 1, ref_shape.size());
  const size_t wide_row = static_cast<size_t>(ref_shape[axis] * inner) * es;  // bytes per row of the whole
  std::vector<size_t> band;      // bytes per row of each part
  std::vector<size_t> offset;    // byte offset of each part within a row of the whole
  size_t off = 0;
  const size_t parts = concat ? ctx.inputs.size() : ctx.outputs.size();
  for (size_t i = 0; i < parts; ++i) {
    if (concat && !ctx.has_input(i)) return decline();
    if (!concat && (ctx.node.outputs.size() <= i || ctx.node.outputs[i] < 0)) {
      // An omitted output: still advance past its band (its shape is known).
    }
    const Shape& s = concat ? ctx.input(i).shape : ctx.outputs[i].shape;
    if (static_cast<int64_t>(s.size()) != rank) return decline();
    const size_t b = static_cast<size_t>(s[axis] * inner) * es;
    band.push_back(b);
    offset.push_back(off);
    off += b;
  }
  if (off != wide_row) return decline();
  const CudaContext* cp = &c;
  return make_fn_kernel([cp, concat, band, offset, wide_row, outer](const KernelContext& k) -> Status {
    for (size_t i = 0; i < band.size(); ++i) {
      if (band[i] == 0 || outer == 0) continue;
      if (concat) {
        auto* dst = static_cast<uint8_t*>(k.output(0).data()) + offset[i];
        TSR_RETURN_IF_ERROR(cuda_check(cudaMemcpy2DAsync(dst, wide_row, k.input(i).data(), band[i], band[i],
                                                         static_cast<size_t>(outer), cudaMemcpyDeviceToDevice, cp->stream),
                                       "Concat"));
      } else {
        if (i >= k.outputs.size() || !k.outputs[i]) continue;
        const auto* src = static_cast<const uint8_t*>(k.input(0).data()) + offset[i];
        TSR_RETURN_IF_ERROR(cuda_check(cudaMemcpy2DAsync(k.output(i).data(), band[i], src, wide_row, band[i],
                                                         static_cast<size_t>(outer), cudaMemcpyDeviceToDevice, cp->stream),
                                       "Split"));
      }
    }
    return Status::ok();
  });
}

Result<std::unique_ptr<Kernel>> make_gather(const CudaContext& c, const CompileContext& ctx) {
  if (!ctx.has_input(0) || !ctx.has_input(1)) return decline();
  const Shape& xs = ctx.input(0).shape;
  const DType it = ctx.input(1).dtype;
  if (it != DType::kInt64 && it != DType::kInt32) return decline();
  const int es = static_cast<int>(dtype_size(ctx.input(0).dtype));
  if (es != 1 && es != 2 && es != 4 && es != 8) return decline();
  const int64_t rank = static_cast<int64_t>(xs.size());
  int64_t axis = ctx.node.attr_i("axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return decline();
  const int64_t outer = ref::dims_product(xs, 0, static_cast<size_t>(axis));
  const int64_t inner = ref::dims_product(xs, static_cast<size_t>(axis) + 1, xs.size());
  const int64_t axis_len = xs[axis];
  const int64_t n_idx = numel(ctx.input(1).shape);
  const bool i64 = it == DType::kInt64;
  const CudaContext* cp = &c;
  return launch_kernel(ctx, [cp, outer, inner, axis_len, n_idx, i64, es](const KernelContext& k) {
    return launch_gather(k.input(0).data(), k.input(1).data(), i64, k.output(0).data(), outer, axis_len, n_idx, inner, es,
                         cp->error_flag, cp->stream);
  });
}

// ---- elementwise math ----

Result<std::unique_ptr<Kernel>> make_binary(const CudaContext& c, const CompileContext& ctx) {
  static const std::pair<const char*, BinaryOp> kOps[] = {{"Add", BinaryOp::kAdd}, {"Sub", BinaryOp::kSub},
                                                          {"Mul", BinaryOp::kMul}, {"Div", BinaryOp::kDiv},
                                                          {"Pow", BinaryOp::kPow}, {"PRelu", BinaryOp::kPRelu}};
  BinaryOp op = BinaryOp::kAdd;
  bool found = false;
  for (const auto& [name, o] : kOps)
    if (ctx.node.op_type == name) op = o, found = true;
  if (!found || ctx.inputs.size() != 2 || !ctx.has_input(0) || !ctx.has_input(1) || !all_float32(ctx)) return decline();
  const Shape& as = ctx.input(0).shape;
  const Shape& bs = ctx.input(1).shape;
  const Shape& os = ctx.outputs[0].shape;
  if (os.size() > static_cast<size_t>(kMaxDims) || as.size() > os.size() || bs.size() > os.size()) return decline();
  BinaryBroadcast p;
  p.rank = static_cast<int>(os.size());
  p.a_dense = as == os;
  p.b_dense = bs == os;
  auto strides_for = [&](const Shape& s, int64_t* out) {
    const size_t lead = os.size() - s.size();
    int64_t stride = 1;
    for (size_t d = os.size(); d-- > 0;) {
      if (d < lead) {
        out[d] = 0;
        continue;
      }
      const int64_t n = s[d - lead];
      out[d] = n == 1 ? 0 : stride;
      stride *= n;
    }
  };
  for (size_t d = 0; d < os.size(); ++d) p.out_dims[d] = os[d];
  strides_for(as, p.a_strides);
  strides_for(bs, p.b_strides);
  const int64_t n = numel(os);
  const CudaContext* cp = &c;
  return launch_kernel(ctx, [cp, op, p, n](const KernelContext& k) {
    return launch_binary_f32(op, k.input(0).data_as<float>(), k.input(1).data_as<float>(), k.output(0).data_as<float>(), n, p,
                             cp->stream);
  });
}

Result<std::unique_ptr<Kernel>> make_unary(const CudaContext& c, const CompileContext& ctx) {
  if (!ctx.has_input(0) || !all_float32(ctx)) return decline();
  UnaryMath u;
  if (!unary_math_of_node(ctx, &u)) return decline();
  const UnaryOp op = u.op;
  const double alpha = u.alpha, beta = u.beta;
  const int64_t n = numel(ctx.input(0).shape);
  const CudaContext* cp = &c;
  return launch_kernel(ctx, [cp, op, n, alpha, beta](const KernelContext& k) {
    return launch_unary_f32(op, k.input(0).data_as<float>(), k.output(0).data_as<float>(), n, alpha, beta, cp->stream);
  });
}

// ---- rows: softmax, normalization, reductions ----

Result<std::unique_ptr<Kernel>> make_softmax(const CudaContext& c, const CompileContext& ctx) {
  if (!ctx.has_input(0) || !all_float32(ctx)) return decline();
  Result<SoftmaxLayout> l = softmax_layout(ctx.node, ctx.input(0).shape);
  if (!l.is_ok()) return decline();
  const SoftmaxLayout lay = l.value();
  const bool log = ctx.node.op_type == "LogSoftmax";
  const CudaContext* cp = &c;
  return launch_kernel(ctx, [cp, lay, log](const KernelContext& k) {
    return launch_softmax_f32(k.input(0).data_as<float>(), k.output(0).data_as<float>(), lay.outer, lay.axis_len, lay.inner,
                              log, cp->stream);
  });
}

Result<std::unique_ptr<Kernel>> make_layer_norm(const CudaContext& c, const CompileContext& ctx) {
  if (!ctx.has_input(0) || !ctx.has_input(1) || !all_float32(ctx)) return decline();
  const Shape& xs = ctx.input(0).shape;
  const int64_t rank = static_cast<int64_t>(xs.size());
  int64_t axis = ctx.node.attr_i("axis", -1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return decline();
  const int64_t outer = ref::dims_product(xs, 0, static_cast<size_t>(axis));
  const int64_t inner = ref::dims_product(xs, static_cast<size_t>(axis), xs.size());
  const int64_t scale_n = numel(ctx.input(1).shape);
  const bool has_b = ctx.has_input(2);
  const int64_t b_n = has_b ? numel(ctx.input(2).shape) : 1;
  if (scale_n <= 0 || b_n <= 0 || inner <= 0) return decline();
  const double eps = ctx.node.attr_f("epsilon", 1e-5f);
  const CudaContext* cp = &c;
  return launch_kernel(ctx, [cp, outer, inner, scale_n, has_b, b_n, eps](const KernelContext& k) {
    float* mean = k.outputs.size() > 1 && k.outputs[1] ? k.output(1).data_as<float>() : nullptr;
    float* inv = k.outputs.size() > 2 && k.outputs[2] ? k.output(2).data_as<float>() : nullptr;
    return launch_layer_norm_f32(k.input(0).data_as<float>(), k.input(1).data_as<float>(), scale_n,
                                 has_b ? k.input(2).data_as<float>() : nullptr, b_n, k.output(0).data_as<float>(), mean, inv,
                                 outer, inner, eps, cp->stream);
  });
}

/// ReduceSum / ReduceMean over one contiguous run of axes (any keepdims); GlobalAveragePool.
Result<std::unique_ptr<Kernel>> make_reduce(const CudaContext& c, const CompileContext& ctx) {
  if (!ctx.has_input(0) || ctx.input(0).dtype != DType::kFloat32 || ctx.outputs[0].dtype != DType::kFloat32) return decline();
  const Shape& xs = ctx.input(0).shape;
  const bool gap = ctx.node.op_type == "GlobalAveragePool";
  const bool mean = gap || ctx.node.op_type == "ReduceMean";
  int64_t outer = 1, len = 1, inner = 1;
  if (gap) {
    if (xs.size() < 3) return decline();
    outer = xs[0] * xs[1];
    len = ref::dims_product(xs, 2, xs.size());
  } else {
    Result<ReduceParams> rp = resolve_reduce(ctx.node, xs, ref::const_inputs_of(ctx));
    if (!rp.is_ok()) return decline();
    const ReduceParams& p = rp.value();
    if (p.noop) return make_copy(c, ctx);
    int first = -1, last = -1;
    for (size_t a = 0; a < p.reduced.size(); ++a)
      if (p.reduced[a] && xs[a] != 1) {
        if (first < 0) first = static_cast<int>(a);
        last = static_cast<int>(a);
      }
    if (first < 0) {  // only size-1 axes reduced: a copy (sum) or the same values (mean)
      return make_copy(c, ctx);
    }
    for (int a = first; a <= last; ++a)
      if (!p.reduced[a] && xs[a] != 1) return decline();  // not one contiguous run
    outer = ref::dims_product(xs, 0, static_cast<size_t>(first));
    len = ref::dims_product(xs, static_cast<size_t>(first), static_cast<size_t>(last) + 1);
    inner = ref::dims_product(xs, static_cast<size_t>(last) + 1, xs.size());
  }
  if (len == 0) return decline();  // empty reductions: the CPU's conventions
  const CudaContext* cp = &c;
  return launch_kernel(ctx, [cp, outer, len, inner, mean](const KernelContext& k) {
    return launch_reduce_f32(k.input(0).data_as<float>(), k.output(0).data_as<float>(), outer, len, inner, mean, cp->stream);
  });
}

Result<std::unique_ptr<Kernel>> make_batch_norm(const CudaContext& c, const CompileContext& ctx) {
  if (!all_float32(ctx) || ctx.inputs.size() != 5) return decline();
  for (size_t i = 0; i < 5; ++i)
    if (!ctx.has_input(i)) return decline();
  for (size_t i = 1; i < ctx.node.outputs.size(); ++i)
    if (ctx.node.outputs[i] >= 0) return decline();  // training outputs
  if (ctx.node.attr_i("training_mode", 0) != 0 || ctx.node.attr_i("spatial", 1) != 1) return decline();
  const Shape& xs = ctx.input(0).shape;
  if (xs.size() < 2) return decline();
  const int64_t ch = xs[1];
  for (size_t i = 1; i < 5; ++i)
    if (numel(ctx.input(i).shape) != ch) return decline();
  const int64_t n = xs[0], spatial = ref::dims_product(xs, 2, xs.size());
  const double eps = ctx.node.attr_f("epsilon", 1e-5f);
  const CudaContext* cp = &c;
  return launch_kernel(ctx, [cp, n, ch, spatial, eps](const KernelContext& k) {
    return launch_batch_norm_f32(k.input(0).data_as<float>(), k.input(1).data_as<float>(), k.input(2).data_as<float>(),
                                 k.input(3).data_as<float>(), k.input(4).data_as<float>(), k.output(0).data_as<float>(), n, ch,
                                 spatial, eps, cp->stream);
  });
}

Result<std::unique_ptr<Kernel>> make_pool(const CudaContext& c, const CompileContext& ctx) {
  if (!ctx.has_input(0) || ctx.input(0).dtype != DType::kFloat32 || ctx.outputs[0].dtype != DType::kFloat32) return decline();
  for (size_t i = 1; i < ctx.node.outputs.size(); ++i)
    if (ctx.node.outputs[i] >= 0) return decline();  // MaxPool's Indices
  const Shape& xs = ctx.input(0).shape;
  if (xs.size() != 4) return decline();
  Result<WindowGeometry> geo = window_geometry(ctx.node, xs, {}, ctx.node.attr_i("ceil_mode", 0) == 1);
  if (!geo.is_ok()) return decline();
  const WindowGeometry& g = geo.value();
  if (g.out[0] != ctx.outputs[0].shape[2] || g.out[1] != ctx.outputs[0].shape[3]) return decline();
  Pool2d p;
  p.planes = xs[0] * xs[1];
  p.h = xs[2];
  p.w = xs[3];
  p.oh = g.out[0];
  p.ow = g.out[1];
  p.kh = g.kernel[0];
  p.kw = g.kernel[1];
  p.sh = g.strides[0];
  p.sw = g.strides[1];
  p.ph = g.pads_begin[0];
  p.pw = g.pads_begin[1];
  p.dh = g.dilations.empty() ? 1 : g.dilations[0];
  p.dw = g.dilations.empty() ? 1 : g.dilations[1];
  p.max = ctx.node.op_type == "MaxPool";
  p.count_include_pad = ctx.node.attr_i("count_include_pad", 0) == 1;
  const CudaContext* cp = &c;
  return launch_kernel(ctx, [cp, p](const KernelContext& k) {
    return launch_pool2d_f32(k.input(0).data_as<float>(), k.output(0).data_as<float>(), p, cp->stream);
  });
}

Result<std::unique_ptr<Kernel>> make_resize(const CudaContext& c, const CompileContext& ctx) {
  GpuResize2d g;
  if (!gpu_resize2d_of(ctx, &g)) return decline();
  Resize2d r;
  r.planes = g.planes, r.h = g.h, r.w = g.w, r.oh = g.oh, r.ow = g.ow;
  r.scale_h = g.scale_h, r.scale_w = g.scale_w;
  r.linear = g.linear;
  r.coord_mode = g.coord;
  r.nearest_mode = g.nearest;
  r.exact_nearest = g.exact_nearest;
  const CudaContext* cp = &c;
  return launch_kernel(ctx, [cp, r](const KernelContext& k) {
    return launch_resize2d_f32(k.input(0).data_as<float>(), k.output(0).data_as<float>(), r, cp->stream);
  });
}

}  // namespace

void add_basic_ops(std::vector<CudaOp>& ops) {
  for (const char* t : {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Dropout"}) ops.push_back({t, &make_copy});
  ops.push_back({"Transpose", &make_transpose});
  ops.push_back({"Slice", &make_slice});
  ops.push_back({"Expand", &make_expand});
  ops.push_back({"Concat", &make_concat_split});
  ops.push_back({"Split", &make_concat_split});
  ops.push_back({"Gather", &make_gather});
  for (const char* t : {"Add", "Sub", "Mul", "Div", "Pow", "PRelu"}) ops.push_back({t, &make_binary});
  for (const char* t : {"Relu", "LeakyRelu", "Elu", "Selu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Softplus",
                        "Softsign", "Gelu", "Erf", "Exp", "Log", "Sqrt", "Reciprocal", "Abs", "Neg", "Floor", "Ceil", "Sin",
                        "Cos", "Mish", "Clip"})
    ops.push_back({t, &make_unary});
  ops.push_back({"Softmax", &make_softmax});
  ops.push_back({"LogSoftmax", &make_softmax});
  ops.push_back({"LayerNormalization", &make_layer_norm});
  ops.push_back({"ReduceSum", &make_reduce});
  ops.push_back({"ReduceMean", &make_reduce});
  ops.push_back({"GlobalAveragePool", &make_reduce});
  ops.push_back({"BatchNormalization", &make_batch_norm});
  ops.push_back({"MaxPool", &make_pool});
  ops.push_back({"AveragePool", &make_pool});
  ops.push_back({"Resize", &make_resize});
  ops.push_back({"Upsample", &make_resize});
}

}  // namespace tessera::cuda
