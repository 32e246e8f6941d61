// Compute-heavy ops on the Vulkan backend (float32): MatMul, Gemm (matmul.comp), Conv
// (conv2d.comp, conv_direct.comp), ConvTranspose (conv_transpose.comp), pooling
// (pool2d.comp), reductions and GlobalAveragePool (reduce.comp), Softmax, LogSoftmax and
// LayerNormalization (rows.comp), BatchNormalization (batchnorm.comp) and Resize
// (resize.comp). Attributes and geometry are parsed at plan time with the helpers the CPU
// reference kernels use; what a shader does not take is declined (the CPU runs it).
#include <algorithm>
#include <cmath>

#include "backends/cpu/ref/ref_util.h"
#include "backends/gpu_resize.h"
#include "backends/vulkan/vk_backend.h"
#include "runtime/ops/shape_params.h"
#include "runtime/ops/softmax_layout.h"
#include "runtime/ops/spatial_attrs.h"

namespace tessera::vk {

namespace {

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}
constexpr int64_t kMax = int64_t{1} << 31;
bool fits(int64_t v) { return v >= 0 && v < kMax; }
uint32_t u32(int64_t v) { return static_cast<uint32_t>(v); }
uint32_t ceil_div(int64_t a, int64_t b) { return static_cast<uint32_t>((a + b - 1) / b); }

// ---- MatMul and Gemm ----

struct MatMulPush {
  uint64_t a, b, c, y;
  uint32_t M, N, K, nb1;
  uint32_t as0, as1, bs0, bs1;
  uint32_t ars, acs, brs, bcs;
  uint32_t crs, ccs;
  float alpha, beta;
  int32_t has_c;
};

/// A matmul.comp kernel over `batch` batches; A, B and C are the node's inputs ia, ib, ic
/// (Gemm and MatMul: 0, 1, 2; a 1x1 Conv: W, X, bias = 1, 0, 2).
Result<std::unique_ptr<Kernel>> gemm_kernel(VulkanBackend* b, const MatMulPush& p, uint32_t batch, int ia = 0, int ib = 1,
                                            int ic = 2) {
  if (p.M == 0 || p.N == 0 || batch == 0) return make_fn_kernel([](const KernelContext&) { return Status::ok(); });
  if (ceil_div(p.N, 64) > 65535 || ceil_div(p.M, 64) > 65535 || batch > 65535) return decline();
  TSR_RETURN_IF_ERROR(b->device()->pipeline(Shader::kMatMul).status());
  return make_fn_kernel([b, p, batch, ia, ib, ic](const KernelContext& k) -> Status {
    MatMulPush q = p;
    q.a = addr(k.input(ia));
    q.b = addr(k.input(ib));
    q.c = q.has_c ? addr(k.input(ic)) : q.a;
    q.y = addr(k.output(0));
    const uint32_t g[3] = {ceil_div(q.N, 64), ceil_div(q.M, 64), batch};
    const Range c = q.has_c ? range_of(k.input(ic)) : Range{};
    return b->dispatch(Shader::kMatMul, &q, sizeof(q), g, {range_of(k.input(ia)), range_of(k.input(ib)), c},
                       {range_of(k.output(0))});
  });
}

/// MatMul-13: numpy matmul with broadcast batch dims. The output batch dims are split into
/// two groups (z0, z1) such that in each group every operand is either dense (its dims equal
/// the output's) or broadcast (all 1): that covers [B.., M, K] x [K, N], equal batches, and
/// attention's [B, H, S, D] x [B, H, D, S].
Result<std::unique_ptr<Kernel>> make_mat_mul(VulkanBackend* b, const CompileContext& ctx) {
  if (!all_float32(ctx) || !ctx.has_input(0) || !ctx.has_input(1)) return decline();
  Shape as = ctx.input(0).shape, bs = ctx.input(1).shape;
  if (as.empty() || bs.empty()) return decline();
  if (as.size() == 1) as.insert(as.begin(), 1);
  if (bs.size() == 1) bs.push_back(1);
  const int64_t M = as[as.size() - 2], K = as.back(), N = bs.back();
  if (bs[bs.size() - 2] != K || K == 0) return decline();
  const size_t rb = std::max(as.size(), bs.size()) - 2;
  Shape ab(rb, 1), bb(rb, 1), ob(rb, 1);
  for (size_t i = 0; i < as.size() - 2; ++i) ab[rb - (as.size() - 2) + i] = as[i];
  for (size_t i = 0; i < bs.size() - 2; ++i) bb[rb - (bs.size() - 2) + i] = bs[i];
  for (size_t i = 0; i < rb; ++i) {
    if (ab[i] != bb[i] && ab[i] != 1 && bb[i] != 1) return decline();
    ob[i] = std::max(ab[i], bb[i]);
  }
  const int64_t batch = numel(ob);
  if (!fits(batch * M * K) || !fits(batch * K * N) || !fits(batch * M * N)) return decline();
  // Find a split s: dims [0, s) and [s, rb) each dense-or-broadcast for both operands.
  auto kind = [&](const Shape& x, size_t lo, size_t hi) {  // 0 broadcast, 1 dense, -1 mixed
    bool all1 = true, eq = true;
    for (size_t i = lo; i < hi; ++i) {
      if (x[i] != 1) all1 = false;
      if (x[i] != ob[i]) eq = false;
    }
    return eq ? 1 : (all1 ? 0 : -1);
  };
  for (size_t s = 0; s <= rb; ++s) {
    const int a0 = kind(ab, 0, s), a1 = kind(ab, s, rb), b0 = kind(bb, 0, s), b1 = kind(bb, s, rb);
    if (a0 < 0 || a1 < 0 || b0 < 0 || b1 < 0) continue;
    const int64_t nb1 = ref::dims_product(ob, s, rb);
    MatMulPush p{};
    p.M = u32(M), p.N = u32(N), p.K = u32(K), p.nb1 = u32(nb1);
    p.as1 = a1 ? u32(M * K) : 0;
    p.as0 = a0 ? u32(M * K * (a1 ? nb1 : 1)) : 0;
    p.bs1 = b1 ? u32(K * N) : 0;
    p.bs0 = b0 ? u32(K * N * (b1 ? nb1 : 1)) : 0;
    p.ars = u32(K), p.acs = 1, p.brs = u32(N), p.bcs = 1;
    p.alpha = 1.f, p.beta = 0.f, p.has_c = 0;
    return gemm_kernel(b, p, u32(batch));
  }
  return decline();
}

/// Gemm-13: Y = alpha * op(A) op(B) + beta * C, C broadcast to [M, N].
Result<std::unique_ptr<Kernel>> make_gemm(VulkanBackend* b, const CompileContext& ctx) {
  if (!all_float32(ctx) || !ctx.has_input(0) || !ctx.has_input(1)) return decline();
  const Shape& as = ctx.input(0).shape;
  const Shape& bs = ctx.input(1).shape;
  if (as.size() != 2 || bs.size() != 2) return decline();
  const bool ta = ctx.node.attr_i("transA", 0) != 0, tb = ctx.node.attr_i("transB", 0) != 0;
  const int64_t M = ta ? as[1] : as[0], K = ta ? as[0] : as[1], N = tb ? bs[0] : bs[1];
  if ((tb ? bs[1] : bs[0]) != K || K == 0 || !fits(M * K) || !fits(K * N) || !fits(M * N)) return decline();
  MatMulPush p{};
  p.M = u32(M), p.N = u32(N), p.K = u32(K), p.nb1 = 1;
  p.ars = ta ? 1 : u32(K), p.acs = ta ? u32(M) : 1;
  p.brs = tb ? 1 : u32(N), p.bcs = tb ? u32(K) : 1;
  p.alpha = ctx.node.attr_f("alpha", 1.f);
  p.beta = ctx.node.attr_f("beta", 1.f);
  if (ctx.has_input(2) && p.beta != 0.f) {
    Shape c2 = ctx.input(2).shape;
    if (c2.size() > 2) return decline();
    c2.insert(c2.begin(), 2 - c2.size(), 1);
    if ((c2[0] != 1 && c2[0] != M) || (c2[1] != 1 && c2[1] != N)) return decline();
    p.has_c = 1;
    p.crs = c2[0] == 1 ? 0 : u32(c2[1]);
    p.ccs = c2[1] == 1 ? 0 : 1;
  }
  return gemm_kernel(b, p, 1);
}

// ---- Conv, ConvTranspose ----

struct ConvPush {
  uint64_t x, w, bias, y;
  uint32_t C, H, W, Mg;
  uint32_t OH, OW, KH, KW;
  uint32_t sh, sw, ph, pw;
  uint32_t dh, dw, group;
  int32_t has_bias;
  uint32_t n;
};

/// Fills the spatial fields of `p` from a 1-D or 2-D geometry (1-D as H = KH = 1).
bool set_geometry(const WindowGeometry& g, const Shape& xs, ConvPush* p) {
  const bool one = g.rank == 1;
  if (g.rank != 1 && g.rank != 2) return false;
  auto at = [&](const std::vector<int64_t>& v, int i, int64_t def) { return v.empty() ? def : v[static_cast<size_t>(i)]; };
  const int h = one ? -1 : 0, w = one ? 0 : 1;
  p->H = one ? 1 : u32(xs[2]);
  p->W = u32(xs.back());
  p->KH = h < 0 ? 1 : u32(g.kernel[h]);
  p->KW = u32(g.kernel[w]);
  p->OH = h < 0 ? 1 : u32(g.out[h]);
  p->OW = u32(g.out[w]);
  p->sh = h < 0 ? 1 : u32(at(g.strides, h, 1));
  p->sw = u32(at(g.strides, w, 1));
  p->dh = h < 0 ? 1 : u32(at(g.dilations, h, 1));
  p->dw = u32(at(g.dilations, w, 1));
  p->ph = h < 0 ? 0 : u32(at(g.pads_begin, h, 0));
  p->pw = u32(at(g.pads_begin, w, 0));
  return true;
}

// The operands of a float32 Conv or ConvTranspose the shaders take: X, W and Y of rank 3 or
// 4 (1-D or 2-D), each within 32-bit indexing. False: the node runs on the CPU.
bool conv_operands_fit(const CompileContext& ctx) {
  if (!all_float32(ctx) || !ctx.has_input(0) || !ctx.has_input(1) || ctx.outputs.size() != 1) return false;
  const Shape& xs = ctx.input(0).shape;
  const Shape& ws = ctx.input(1).shape;
  const Shape& ys = ctx.outputs[0].shape;
  if ((xs.size() != 3 && xs.size() != 4) || ws.size() != xs.size() || ys.size() != xs.size()) return false;
  return fits(numel(xs)) && fits(numel(ws)) && fits(numel(ys));
}

Result<std::unique_ptr<Kernel>> make_conv(VulkanBackend* b, const CompileContext& ctx) {
  if (!conv_operands_fit(ctx)) return decline();
  const Shape& xs = ctx.input(0).shape;
  const Shape& ws = ctx.input(1).shape;
  const Shape& ys = ctx.outputs[0].shape;
  for (int64_t d : xs)
    if (d <= 0) return decline();
  Result<WindowGeometry> geo = window_geometry(ctx.node, xs, Shape(ws.begin() + 2, ws.end()), false);
  if (!geo.is_ok()) return decline();  // the CPU kernel reports the error
  const int64_t group = ctx.node.attr_i("group", 1);
  if (group < 1 || xs[1] % group != 0 || ws[0] % group != 0 || ws[1] * group != xs[1]) return decline();
  if (ctx.has_input(2) && numel(ctx.input(2).shape) != ws[0]) return decline();
  ConvPush p{};
  if (!set_geometry(geo.value(), xs, &p)) return decline();
  p.C = u32(xs[1]);
  p.Mg = u32(ws[0] / group);
  p.group = u32(group);
  p.has_bias = ctx.has_input(2);
  p.n = u32(numel(ys));
  if (ys[0] != xs[0] || ys[1] != ws[0] || p.OH * p.OW * ys[0] * ys[1] != numel(ys)) return decline();
  const int64_t batch_groups = xs[0] * group;
  // A 1x1 convolution with stride 1 and no padding is a matrix product per image:
  // Y[n] [M, HW] = W [M, C] X[n] [C, HW] (+ bias per row): matmul.comp.
  if (group == 1 && p.KH == 1 && p.KW == 1 && p.sh == 1 && p.sw == 1 && p.ph == 0 && p.pw == 0 && p.OH == p.H &&
      p.OW == p.W && xs[0] <= 65535) {
    MatMulPush m{};
    m.M = p.Mg, m.N = p.H * p.W, m.K = p.C, m.nb1 = 1;
    m.as0 = 0, m.bs0 = p.C * p.H * p.W;
    m.ars = p.C, m.acs = 1, m.brs = p.H * p.W, m.bcs = 1;
    m.alpha = 1.f, m.beta = 1.f;
    m.has_c = p.has_bias, m.crs = 1, m.ccs = 0;
    return gemm_kernel(b, m, u32(xs[0]), 1, 0, 2);
  }
  // Few output channels per group (depthwise): one output per invocation; else the tiled
  // implicit GEMM (its 64-row tiles would be mostly empty otherwise).
  const bool direct = p.Mg < 16 || batch_groups > 65535 || ceil_div(int64_t{p.OH} * p.OW, 64) > 65535;
  const Shader s = direct ? Shader::kConvDirect : Shader::kConv2d;
  TSR_RETURN_IF_ERROR(b->device()->pipeline(s).status());
  return make_fn_kernel([b, p, s, batch_groups](const KernelContext& k) -> Status {
    ConvPush q = p;
    q.x = addr(k.input(0));
    q.w = addr(k.input(1));
    q.bias = q.has_bias ? addr(k.input(2)) : q.x;
    q.y = addr(k.output(0));
    const Range bias = q.has_bias ? range_of(k.input(2)) : Range{};
    if (s == Shader::kConvDirect)
      return b->dispatch_1d(s, &q, sizeof(q), q.n, {range_of(k.input(0)), range_of(k.input(1)), bias}, {range_of(k.output(0))});
    const uint32_t g[3] = {ceil_div(int64_t{q.OH} * q.OW, 64), ceil_div(q.Mg, 64), static_cast<uint32_t>(batch_groups)};
    return b->dispatch(s, &q, sizeof(q), g, {range_of(k.input(0)), range_of(k.input(1)), bias}, {range_of(k.output(0))});
  });
}

Result<std::unique_ptr<Kernel>> make_conv_transpose(VulkanBackend* b, const CompileContext& ctx) {
  if (!conv_operands_fit(ctx)) return decline();
  const Shape& xs = ctx.input(0).shape;
  const Shape& ws = ctx.input(1).shape;
  const Shape& ys = ctx.outputs[0].shape;
  const int64_t group = ctx.node.attr_i("group", 1);
  if (group < 1 || xs[1] % group != 0 || ws[0] != xs[1]) return decline();
  Result<WindowGeometry> geo = conv_transpose_geometry(ctx.node, xs, ws);
  if (!geo.is_ok()) return decline();
  ConvPush p{};
  if (!set_geometry(geo.value(), xs, &p)) return decline();
  p.C = u32(xs[1]);
  p.Mg = u32(ws[1]);
  p.group = u32(group);
  p.has_bias = ctx.has_input(2);
  if (p.has_bias && numel(ctx.input(2).shape) != ws[1] * group) return decline();
  p.n = u32(numel(ys));
  if (ys[1] != ws[1] * group || int64_t{p.OH} * p.OW * ys[0] * ys[1] != numel(ys)) return decline();
  TSR_RETURN_IF_ERROR(b->device()->pipeline(Shader::kConvTranspose).status());
  return make_fn_kernel([b, p](const KernelContext& k) -> Status {
    ConvPush q = p;
    q.x = addr(k.input(0));
    q.w = addr(k.input(1));
    q.bias = q.has_bias ? addr(k.input(2)) : q.x;
    q.y = addr(k.output(0));
    const Range bias = q.has_bias ? range_of(k.input(2)) : Range{};
    return b->dispatch_1d(Shader::kConvTranspose, &q, sizeof(q), q.n, {range_of(k.input(0)), range_of(k.input(1)), bias},
                          {range_of(k.output(0))});
  });
}

// ---- pooling ----

struct PoolPush {
  uint64_t x, y;
  uint32_t n;
  uint32_t H, W, OH, OW;
  uint32_t KH, KW, sh, sw;
  uint32_t ph, pw, dh, dw;
  int32_t is_max, count_include_pad;
};

Result<std::unique_ptr<Kernel>> make_pool(VulkanBackend* b, const CompileContext& ctx) {
  if (!ctx.has_input(0) || ctx.input(0).dtype != DType::kFloat32 || ctx.outputs[0].dtype != DType::kFloat32) return decline();
  for (size_t i = 1; i < ctx.node.outputs.size(); ++i)
    if (ctx.node.outputs[i] >= 0) return decline();  // MaxPool's Indices
  const Shape& xs = ctx.input(0).shape;
  if (xs.size() != 4 && xs.size() != 3) return decline();
  if (!fits(numel(xs)) || !fits(numel(ctx.outputs[0].shape))) return decline();
  Result<WindowGeometry> geo = window_geometry(ctx.node, xs, {}, ctx.node.attr_i("ceil_mode", 0) == 1);
  if (!geo.is_ok()) return decline();
  ConvPush c{};
  if (!set_geometry(geo.value(), xs, &c)) return decline();
  PoolPush p{};
  p.H = c.H, p.W = c.W, p.OH = c.OH, p.OW = c.OW, p.KH = c.KH, p.KW = c.KW, p.sh = c.sh, p.sw = c.sw;
  p.ph = c.ph, p.pw = c.pw, p.dh = c.dh, p.dw = c.dw;
  p.is_max = ctx.node.op_type == "MaxPool";
  p.count_include_pad = ctx.node.attr_i("count_include_pad", 0) == 1;
  const int64_t n = xs[0] * xs[1] * int64_t{p.OH} * p.OW;
  if (n != numel(ctx.outputs[0].shape)) return decline();
  p.n = u32(n);
  TSR_RETURN_IF_ERROR(b->device()->pipeline(Shader::kPool2d).status());
  return make_fn_kernel([b, p](const KernelContext& k) -> Status {
    PoolPush q = p;
    q.x = addr(k.input(0));
    q.y = addr(k.output(0));
    return b->dispatch_1d(Shader::kPool2d, &q, sizeof(q), q.n, {range_of(k.input(0))}, {range_of(k.output(0))});
  });
}

// ---- reductions ----

struct ReducePush {
  uint64_t x, y;
  uint32_t n, len, inner;
  int32_t op;
};

Result<std::unique_ptr<Kernel>> reduce_kernel(VulkanBackend* b, int64_t outer, int64_t len, int64_t inner, int op) {
  if (!fits(outer * len * inner)) return decline();
  ReducePush p{};
  p.n = u32(outer * inner), p.len = u32(len), p.inner = u32(inner), p.op = op;
  TSR_RETURN_IF_ERROR(b->device()->pipeline(Shader::kReduce).status());
  return make_fn_kernel([b, p](const KernelContext& k) -> Status {
    ReducePush q = p;
    q.x = addr(k.input(0));
    q.y = addr(k.output(0));
    return b->dispatch_1d(Shader::kReduce, &q, sizeof(q), q.n, {range_of(k.input(0))}, {range_of(k.output(0))});
  });
}

/// ReduceSum / ReduceMean / ReduceMax over one contiguous run of axes (any keepdims), and
/// GlobalAveragePool (the mean over every dim after the second).
Result<std::unique_ptr<Kernel>> make_reduce(VulkanBackend* b, const CompileContext& ctx) {
  if (!ctx.has_input(0) || ctx.input(0).dtype != DType::kFloat32 || ctx.outputs[0].dtype != DType::kFloat32) return decline();
  const Shape& xs = ctx.input(0).shape;
  const std::string& t = ctx.node.op_type;
  const bool gap = t == "GlobalAveragePool";
  const int op = t == "ReduceSum" ? 0 : (t == "ReduceMax" ? 2 : 1);
  if (gap) {
    if (xs.size() < 3) return decline();
    const int64_t len = ref::dims_product(xs, 2, xs.size());
    if (len == 0) return decline();
    return reduce_kernel(b, xs[0] * xs[1], len, 1, 1);
  }
  Result<ReduceParams> rp = resolve_reduce(ctx.node, xs, ref::const_inputs_of(ctx));
  if (!rp.is_ok()) return decline();
  const ReduceParams& p = rp.value();
  int first = -1, last = -1;
  for (size_t a = 0; a < p.reduced.size(); ++a)
    if (p.reduced[a] && xs[a] != 1) {
      if (first < 0) first = static_cast<int>(a);
      last = static_cast<int>(a);
    }
  if (p.noop || first < 0) {
    // Nothing (or only size-1 axes) reduced: the values are the input's; a reduction of
    // length 1 copies them.
    return reduce_kernel(b, numel(xs), 1, 1, op);
  }
  for (int a = first; a <= last; ++a)
    if (!p.reduced[static_cast<size_t>(a)] && xs[static_cast<size_t>(a)] != 1) return decline();  // not one contiguous run
  const int64_t outer = ref::dims_product(xs, 0, static_cast<size_t>(first));
  const int64_t len = ref::dims_product(xs, static_cast<size_t>(first), static_cast<size_t>(last) + 1);
  const int64_t inner = ref::dims_product(xs, static_cast<size_t>(last) + 1, xs.size());
  if (len == 0) return decline();  // empty reductions: the CPU's conventions
  return reduce_kernel(b, outer, len, inner, op);
}

// ---- rows: Softmax, LogSoftmax, LayerNormalization ----

struct RowsPush {
  uint64_t x, y, scale, bias;
  uint32_t rows, len, inner;
  int32_t op;
  float eps;
  uint32_t ns, nb;
  int32_t has_bias;
};

Result<std::unique_ptr<Kernel>> rows_kernel(VulkanBackend* b, const RowsPush& p, bool layer_norm) {
  if (p.rows == 0 || p.len == 0) return make_fn_kernel([](const KernelContext&) { return Status::ok(); });
  TSR_RETURN_IF_ERROR(b->device()->pipeline(Shader::kRows).status());
  return make_fn_kernel([b, p, layer_norm](const KernelContext& k) -> Status {
    RowsPush q = p;
    q.x = addr(k.input(0));
    q.y = addr(k.output(0));
    q.scale = layer_norm ? addr(k.input(1)) : q.x;
    q.bias = q.has_bias ? addr(k.input(2)) : q.x;
    const Range sc = layer_norm ? range_of(k.input(1)) : Range{};
    const Range bi = q.has_bias ? range_of(k.input(2)) : Range{};
    const uint32_t gx = std::min<uint32_t>(q.rows, 65535);
    const uint32_t g[3] = {gx, (q.rows + gx - 1) / gx, 1};
    return b->dispatch(Shader::kRows, &q, sizeof(q), g, {range_of(k.input(0)), sc, bi}, {range_of(k.output(0))});
  });
}

Result<std::unique_ptr<Kernel>> make_softmax(VulkanBackend* b, const CompileContext& ctx) {
  if (!ctx.has_input(0) || !all_float32(ctx)) return decline();
  Result<SoftmaxLayout> l = softmax_layout(ctx.node, ctx.input(0).shape);
  if (!l.is_ok()) return decline();
  const SoftmaxLayout lay = l.value();
  if (!fits(lay.outer * lay.axis_len * lay.inner)) return decline();
  RowsPush p{};
  p.rows = u32(lay.outer * lay.inner), p.len = u32(lay.axis_len), p.inner = u32(lay.inner);
  p.op = ctx.node.op_type == "LogSoftmax" ? 1 : 0;
  return rows_kernel(b, p, false);
}

Result<std::unique_ptr<Kernel>> make_layer_norm(VulkanBackend* b, const CompileContext& ctx) {
  if (!ctx.has_input(0) || !ctx.has_input(1) || !all_float32(ctx)) return decline();
  for (size_t i = 1; i < ctx.node.outputs.size(); ++i)
    if (ctx.node.outputs[i] >= 0) return decline();  // Mean and InvStdDev outputs: the CPU
  const Shape& xs = ctx.input(0).shape;
  const int64_t rank = static_cast<int64_t>(xs.size());
  int64_t axis = ctx.node.attr_i("axis", -1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank || !fits(numel(xs))) return decline();
  const int64_t outer = ref::dims_product(xs, 0, static_cast<size_t>(axis));
  const int64_t inner = ref::dims_product(xs, static_cast<size_t>(axis), xs.size());
  const int64_t ns = numel(ctx.input(1).shape);
  const bool has_b = ctx.has_input(2);
  const int64_t nb = has_b ? numel(ctx.input(2).shape) : 1;
  // Scale and bias broadcast to the normalized dims: as the CPU, index a % n for the sizes
  // that divide the row (a full row, or a trailing block).
  if (ns <= 0 || nb <= 0 || inner <= 0 || inner % ns != 0 || inner % nb != 0) return decline();
  RowsPush p{};
  p.rows = u32(outer), p.len = u32(inner), p.inner = 1, p.op = 2;
  p.eps = ctx.node.attr_f("epsilon", 1e-5f);
  p.ns = u32(ns), p.nb = u32(nb), p.has_bias = has_b;
  return rows_kernel(b, p, true);
}

// ---- BatchNormalization (inference) ----

struct BatchNormPush {
  uint64_t x, y, scale, bias, mean, var;
  uint32_t n, C, spatial;
  float eps;
};

Result<std::unique_ptr<Kernel>> make_batch_norm(VulkanBackend* b, const CompileContext& ctx) {
  if (!all_float32(ctx) || ctx.inputs.size() != 5) return decline();
  for (size_t i = 0; i < 5; ++i)
    if (!ctx.has_input(i)) return decline();
  for (size_t i = 1; i < ctx.node.outputs.size(); ++i)
    if (ctx.node.outputs[i] >= 0) return decline();  // training outputs
  if (ctx.node.attr_i("training_mode", 0) != 0 || ctx.node.attr_i("spatial", 1) != 1) return decline();
  const Shape& xs = ctx.input(0).shape;
  if (xs.size() < 2 || !fits(numel(xs))) return decline();
  const int64_t ch = xs[1];
  for (size_t i = 1; i < 5; ++i)
    if (numel(ctx.input(i).shape) != ch) return decline();
  BatchNormPush p{};
  p.n = u32(numel(xs)), p.C = u32(ch), p.spatial = u32(ref::dims_product(xs, 2, xs.size()));
  p.eps = ctx.node.attr_f("epsilon", 1e-5f);
  if (p.spatial == 0) return decline();
  TSR_RETURN_IF_ERROR(b->device()->pipeline(Shader::kBatchNorm).status());
  return make_fn_kernel([b, p](const KernelContext& k) -> Status {
    BatchNormPush q = p;
    q.x = addr(k.input(0)), q.scale = addr(k.input(1)), q.bias = addr(k.input(2));
    q.mean = addr(k.input(3)), q.var = addr(k.input(4)), q.y = addr(k.output(0));
    return b->dispatch_1d(Shader::kBatchNorm, &q, sizeof(q), q.n,
                          {range_of(k.input(0)), range_of(k.input(1)), range_of(k.input(2)), range_of(k.input(3)),
                           range_of(k.input(4))},
                          {range_of(k.output(0))});
  });
}

// ---- Resize ----

struct ResizePush {
  uint64_t x, y;
  uint32_t n, H, W, OH, OW;
  float scale_h, scale_w;
  int32_t coord, nearest, linear;
  int32_t exact;  // GpuResize2d::exact_nearest, in 32-bit integers (the shader's bound below)
};

Result<std::unique_ptr<Kernel>> make_resize(VulkanBackend* b, const CompileContext& ctx) {
  GpuResize2d r;
  if (!gpu_resize2d_of(ctx, &r) || !fits(numel(ctx.input(0).shape)) || !fits(numel(ctx.outputs[0].shape))) return decline();
  ResizePush p{};
  p.H = u32(r.h), p.W = u32(r.w), p.OH = u32(r.oh), p.OW = u32(r.ow);
  p.n = u32(r.planes * r.oh * r.ow);
  p.scale_h = r.scale_h, p.scale_w = r.scale_w;
  p.linear = r.linear;
  p.coord = r.coord;
  p.nearest = r.nearest;
  // The shader's exact path computes num + den, at most (2 out - 1) in + 2 out (o < out;
  // tf_half_pixel_for_nn), in 32-bit ints. (A bound of (2 out + 2) in let 26708 -> 40202
  // wrap: output 40201 read pixel 0.)
  const auto fits_i32 = [](int64_t in, int64_t out) { return (2 * out + 1) * in + 2 * out < (int64_t{1} << 31); };
  // Past that bound the node runs on the CPU: the float coordinates would miss exact ties.
  if (r.exact_nearest && !(fits_i32(r.h, r.oh) && fits_i32(r.w, r.ow))) return decline();
  p.exact = r.exact_nearest;
  TSR_RETURN_IF_ERROR(b->device()->pipeline(Shader::kResize).status());
  return make_fn_kernel([b, p](const KernelContext& k) -> Status {
    ResizePush q = p;
    q.x = addr(k.input(0));
    q.y = addr(k.output(0));
    return b->dispatch_1d(Shader::kResize, &q, sizeof(q), q.n, {range_of(k.input(0))}, {range_of(k.output(0))});
  });
}

}  // namespace

void add_nn_ops(std::vector<VkOp>& ops) {
  ops.push_back({"MatMul", &make_mat_mul});
  ops.push_back({"Gemm", &make_gemm});
  ops.push_back({"Conv", &make_conv});
  ops.push_back({"ConvTranspose", &make_conv_transpose});
  ops.push_back({"MaxPool", &make_pool});
  ops.push_back({"AveragePool", &make_pool});
  for (const char* t : {"ReduceSum", "ReduceMean", "ReduceMax", "GlobalAveragePool"}) ops.push_back({t, &make_reduce});
  ops.push_back({"Softmax", &make_softmax});
  ops.push_back({"LogSoftmax", &make_softmax});
  ops.push_back({"LayerNormalization", &make_layer_norm});
  ops.push_back({"BatchNormalization", &make_batch_norm});
  ops.push_back({"Resize", &make_resize});
  ops.push_back({"Upsample", &make_resize});
}

}  // namespace tessera::vk
