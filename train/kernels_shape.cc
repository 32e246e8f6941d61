// Training reference kernels: tensor helpers, and the shape and indexing ops with their
// gradient ops. Shape ops move elements of any dtype (bytes); they follow the ONNX operator
// spec (Reshape-14, Flatten-13, Transpose-13, Concat-13, Slice-13 and Slice-1, Split-18/13/2,
// Squeeze/Unsqueeze-13 and -1, Gather-13, Shape-15, Cast-13, ConstantOfShape-9).
#include <algorithm>
#include <numeric>

#include "train/kernels.h"

namespace tessera::train {

Tensor alloc(DType dt, const Shape& s) {
  auto r = Tensor::allocate(dt, s);
  if (!r.is_ok()) throw KernelError(r.status().message());
  return std::move(r).value();
}

Tensor reshaped(const Tensor& t, const Shape& s) {
  if (numel_of(s) != t.numel())
    throw KernelError("cannot view " + t.describe() + " as " + shape_to_string(s));
  auto keep = std::make_shared<Tensor>(t);
  return Tensor::wrap(t.dtype(), s, const_cast<void*>(t.data()), std::static_pointer_cast<const void>(keep));
}

int64_t numel_of(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::vector<int64_t> strides_of(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
  return st;
}

std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out) {
  if (in.size() > out.size())
    throw KernelError(shape_to_string(in) + " does not broadcast to " + shape_to_string(out));
  std::vector<int64_t> st(out.size(), 0);
  std::vector<int64_t> own = strides_of(in);
  const size_t off = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == out[off + i])
      st[off + i] = in[i] == 1 ? 0 : own[i];
    else if (in[i] == 1)
      st[off + i] = 0;
    else
      throw KernelError(shape_to_string(in) + " does not broadcast to " + shape_to_string(out));
  }
  return st;
}

Shape broadcast_shape(const Shape& a, const Shape& b) {
  const size_t r = std::max(a.size(), b.size());
  Shape s(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da != db && da != 1 && db != 1)
      throw KernelError("shapes " + shape_to_string(a) + " and " + shape_to_string(b) + " do not broadcast");
    s[i] = da == 1 ? db : da;
  }
  return s;
}

std::vector<int64_t> to_ints(const Tensor& t) {
  std::vector<int64_t> v(t.numel());
  if (t.dtype() == DType::kInt64)
    for (int64_t i = 0; i < t.numel(); ++i) v[i] = t.data_as<int64_t>()[i];
  else if (t.dtype() == DType::kInt32)
    for (int64_t i = 0; i < t.numel(); ++i) v[i] = t.data_as<int32_t>()[i];
  else
    throw KernelError("expected an int32 or int64 tensor, got " + t.describe());
  return v;
}

Tensor from_ints(const std::vector<int64_t>& v, const Shape& s) {
  Tensor t = alloc(DType::kInt64, s);
  std::copy(v.begin(), v.end(), t.data_as<int64_t>());
  return t;
}

int64_t norm_axis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1))
    throw KernelError("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

Window2d window_2d(const Node& node, const Shape& x, const std::vector<int64_t>& kernel, bool ceil_mode) {
  if (x.size() != 3 && x.size() != 4)
    throw KernelError("input rank " + std::to_string(x.size()) + ": the training kernels support 1-D and 2-D windows");
  const bool one_d = x.size() == 3;
  const size_t nd = x.size() - 2;
  if (kernel.size() != nd) throw KernelError("kernel_shape has " + std::to_string(kernel.size()) + " dims");
  auto strides = node.attr_ints("strides", std::vector<int64_t>(nd, 1));
  auto dil = node.attr_ints("dilations", std::vector<int64_t>(nd, 1));
  auto pads = node.attr_ints("pads", std::vector<int64_t>(2 * nd, 0));
  if (strides.size() != nd || dil.size() != nd || pads.size() != 2 * nd)
    throw KernelError("strides/dilations/pads do not match the spatial rank");
  std::string auto_pad = node.attr_s("auto_pad", "NOTSET");
  std::vector<int64_t> in(x.begin() + 2, x.end()), out(nd), pb(nd), pe(nd);
  for (size_t i = 0; i < nd; ++i) {
    if (strides[i] < 1 || dil[i] < 1 || kernel[i] < 1) throw KernelError("strides, dilations and kernel must be >= 1");
    const int64_t ext = (kernel[i] - 1) * dil[i] + 1;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      out[i] = (in[i] + strides[i] - 1) / strides[i];
      int64_t total = std::max<int64_t>(0, (out[i] - 1) * strides[i] + ext - in[i]);
      pb[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pe[i] = total - pb[i];
    } else {
      if (auto_pad == "VALID") pads.assign(2 * nd, 0);
      pb[i] = pads[i];
      pe[i] = pads[i + nd];
      const int64_t span = in[i] + pb[i] + pe[i] - ext;
      out[i] = (ceil_mode ? (span + strides[i] - 1) / strides[i] : span / strides[i]) + 1;
      if (ceil_mode && (out[i] - 1) * strides[i] >= in[i] + pb[i]) --out[i];
    }
    if (out[i] < 1) throw KernelError("output size " + std::to_string(out[i]) + " < 1");
  }
  // 1-D windows are 2-D windows of height 1: spatial dim 0 is H (2-D only), the last is W.
  Window2d w{};
  w.n = x[0];
  w.c = x[1];
  const size_t last = nd - 1;
  w.ih = one_d ? 1 : in[0];
  w.iw = in[last];
  w.oh = one_d ? 1 : out[0];
  w.ow = out[last];
  w.kh = one_d ? 1 : kernel[0];
  w.kw = kernel[last];
  w.sh = one_d ? 1 : strides[0];
  w.sw = strides[last];
  w.dh = one_d ? 1 : dil[0];
  w.dw = dil[last];
  w.pt = one_d ? 0 : pb[0];
  w.pl = pb[last];
  return w;
}

namespace {

// Generic strided gather of any dtype: dst (row-major over `shape`) from src at offsets.
void strided_copy(const Tensor& src, const std::vector<int64_t>& src_strides, int64_t src_base, Tensor& dst) {
  const size_t es = dtype_size(src.dtype());
  const char* s = static_cast<const char*>(src.data());
  char* d = static_cast<char*>(dst.data());
  for_each_offset(dst.shape(), {src_strides}, [&](int64_t lin, const int64_t* off) {
    std::memcpy(d + lin * es, s + (src_base + off[0]) * es, es);
  });
}

void k_identity(KernelArgs& a) { a.out[0] = a.x(0); }

void k_constant(KernelArgs& a) {
  const Attribute* v = a.node.find_attr("value");
  if (!v || !v->t) throw KernelError("Constant without a tensor 'value' is not supported in training");
  a.out[0] = *v->t;
}

void k_shape(KernelArgs& a) {
  const Shape& s = a.x(0).shape();
  const int64_t r = static_cast<int64_t>(s.size());
  int64_t start = a.node.attr_i("start", 0), end = a.node.attr_i("end", r);
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = std::clamp<int64_t>(start, 0, r);
  end = std::clamp<int64_t>(end, start, r);
  a.out[0] = from_ints(std::vector<int64_t>(s.begin() + start, s.begin() + end), {end - start});
}

void k_cast(KernelArgs& a) {
  const Tensor& x = a.x(0);
  DType to = static_cast<DType>(a.node.attr_i("to", 0));
  if (to == x.dtype()) { a.out[0] = x; return; }
  Tensor y = alloc(to, x.shape());
  auto read = [&](int64_t i) -> double {
    switch (x.dtype()) {
      case DType::kFloat32: return x.data_as<float>()[i];
      case DType::kFloat64: return x.data_as<double>()[i];
      case DType::kInt64: return static_cast<double>(x.data_as<int64_t>()[i]);
      case DType::kInt32: return x.data_as<int32_t>()[i];
      case DType::kBool: return x.data_as<uint8_t>()[i];
      default: throw KernelError(std::string("Cast from ") + dtype_name(x.dtype()) + " is not supported in training");
    }
  };
  for (int64_t i = 0; i < x.numel(); ++i) {
    double v = read(i);
    switch (to) {
      case DType::kFloat32: y.data_as<float>()[i] = static_cast<float>(v); break;
      case DType::kFloat64: y.data_as<double>()[i] = v; break;
      case DType::kInt64: y.data_as<int64_t>()[i] = static_cast<int64_t>(v); break;
      case DType::kInt32: y.data_as<int32_t>()[i] = static_cast<int32_t>(v); break;
      case DType::kBool: y.data_as<uint8_t>()[i] = v != 0; break;
      default: throw KernelError(std::string("Cast to ") + dtype_name(to) + " is not supported in training");
    }
  }
  a.out[0] = y;
}

void k_constant_of_shape(KernelArgs& a) {
  Shape s = to_ints(a.x(0));
  const Attribute* v = a.node.find_attr("value");
  DType dt = v && v->t ? v->t->dtype() : DType::kFloat32;
  Tensor y = alloc(dt, s);
  if (v && v->t) {
    const size_t es = dtype_size(dt);
    for (int64_t i = 0; i < y.numel(); ++i)
      std::memcpy(static_cast<char*>(y.data()) + i * es, v->t->data(), es);
  }
  a.out[0] = y;
}

Shape reshape_target(const Shape& in, std::vector<int64_t> s, bool allowzero) {
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == 0 && !allowzero) {
      if (i >= in.size()) throw KernelError("Reshape: 0 at dim " + std::to_string(i) + " past the input rank");
      s[i] = in[i];
    }
    if (s[i] == -1) {
      if (infer >= 0) throw KernelError("Reshape: more than one -1");
      infer = static_cast<int64_t>(i);
    } else {
      known *= s[i];
    }
  }
  if (infer >= 0) s[infer] = known == 0 ? 0 : numel_of(in) / known;
  if (numel_of(s) != numel_of(in))
    throw KernelError("Reshape: cannot reshape " + shape_to_string(in) + " to " + shape_to_string(s));
  return s;
}

void k_reshape(KernelArgs& a) {
  Shape s = reshape_target(a.x(0).shape(), to_ints(a.x(1)), a.node.attr_i("allowzero", 0) != 0);
  a.out[0] = reshaped(a.x(0), s);
}

void k_flatten(KernelArgs& a) {
  const Shape& s = a.x(0).shape();
  int64_t axis = norm_axis(a.node.attr_i("axis", 1), static_cast<int64_t>(s.size()) + 1);
  int64_t outer = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= s[i];
  a.out[0] = reshaped(a.x(0), {outer, outer == 0 ? 0 : a.x(0).numel() / outer});
}

std::vector<int64_t> squeeze_axes(KernelArgs& a) {
  if (a.has(1)) return to_ints(a.x(1));
  return a.node.attr_ints("axes");
}

void k_squeeze(KernelArgs& a) {
  const Shape& s = a.x(0).shape();
  std::vector<int64_t> axes = squeeze_axes(a);
  std::vector<bool> drop(s.size(), false);
  if (axes.empty())
    for (size_t i = 0; i < s.size(); ++i) drop[i] = s[i] == 1;
  for (int64_t ax : axes) {
    int64_t n = norm_axis(ax, static_cast<int64_t>(s.size()));
    if (s[n] != 1) throw KernelError("Squeeze: dim " + std::to_string(n) + " is not 1");
    drop[n] = true;
  }
  Shape o;
  for (size_t i = 0; i < s.size(); ++i)
    if (!drop[i]) o.push_back(s[i]);
  a.out[0] = reshaped(a.x(0), o);
}

void k_unsqueeze(KernelArgs& a) {
  const Shape& s = a.x(0).shape();
  std::vector<int64_t> axes = squeeze_axes(a);
  const int64_t r = static_cast<int64_t>(s.size() + axes.size());
  std::vector<bool> ins(r, false);
  for (int64_t ax : axes) ins[norm_axis(ax, r)] = true;
  Shape o;
  size_t j = 0;
  for (int64_t i = 0; i < r; ++i) o.push_back(ins[i] ? 1 : s[j++]);
  a.out[0] = reshaped(a.x(0), o);
}

void k_transpose(KernelArgs& a) {
  const Tensor& x = a.x(0);
  const size_t r = x.shape().size();
  std::vector<int64_t> perm = a.node.attr_ints("perm");
  if (perm.empty())
    for (size_t i = 0; i < r; ++i) perm.push_back(static_cast<int64_t>(r - 1 - i));
  if (perm.size() != r) throw KernelError("Transpose: perm has " + std::to_string(perm.size()) + " entries for rank " + std::to_string(r));
  Shape o(r);
  std::vector<int64_t> st = strides_of(x.shape()), ost(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t p = norm_axis(perm[i], static_cast<int64_t>(r));
    o[i] = x.shape()[p];
    ost[i] = st[p];
  }
  Tensor y = alloc(x.dtype(), o);
  strided_copy(x, ost, 0, y);
  a.out[0] = y;
}

void k_concat(KernelArgs& a) {
  const Tensor& x0 = a.x(0);
  const int64_t r = static_cast<int64_t>(x0.shape().size());
  const int64_t axis = norm_axis(a.node.attr_i("axis", 0), r);
  Shape o = x0.shape();
  o[axis] = 0;
  for (size_t i = 0; i < a.in.size(); ++i) o[axis] += a.x(i).shape()[axis];
  Tensor y = alloc(x0.dtype(), o);
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= o[i];
  for (int64_t i = axis + 1; i < r; ++i) inner *= o[i];
  const size_t es = dtype_size(x0.dtype());
  int64_t at = 0;
  for (size_t i = 0; i < a.in.size(); ++i) {
    const Tensor& xi = a.x(i);
    const int64_t len = xi.shape()[axis] * inner;
    for (int64_t u = 0; u < outer; ++u)
      std::memcpy(static_cast<char*>(y.data()) + (u * o[axis] * inner + at) * es,
                  static_cast<const char*>(xi.data()) + u * len * es, len * es);
    at += len;
  }
  a.out[0] = y;
}

// Normalized Slice parameters (ONNX Slice-13): per dim start and step, output shape.
struct SliceSpec {
  Shape out;
  std::vector<int64_t> start, step;
};

SliceSpec slice_spec(const Shape& s, std::vector<int64_t> starts, std::vector<int64_t> ends, std::vector<int64_t> axes,
                     std::vector<int64_t> steps) {
  const int64_t r = static_cast<int64_t>(s.size());
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    throw KernelError("Slice: starts, ends, axes and steps differ in length");
  SliceSpec sp{s, std::vector<int64_t>(r, 0), std::vector<int64_t>(r, 1)};
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t ax = norm_axis(axes[i], r), d = s[ax], st = steps[i];
    if (st == 0) throw KernelError("Slice: step 0");
    int64_t b = starts[i], e = ends[i];
    if (b < 0) b += d;
    if (e < 0) e += d;
    if (st > 0) {
      b = std::clamp<int64_t>(b, 0, d);
      e = std::clamp<int64_t>(e, 0, d);
      sp.out[ax] = e > b ? (e - b + st - 1) / st : 0;
    } else {
      b = std::clamp<int64_t>(b, 0, d - 1);
      e = std::clamp<int64_t>(e, -1, d - 1);
      sp.out[ax] = b > e ? (b - e - st - 1) / (-st) : 0;
    }
    sp.start[ax] = b;
    sp.step[ax] = st;
  }
  return sp;
}

SliceSpec slice_spec_of(KernelArgs& a, const Shape& s, size_t first) {
  if (a.node.domain.empty() && a.node.opset > 0 && a.node.opset < 10)
    return slice_spec(s, a.node.attr_ints("starts"), a.node.attr_ints("ends"), a.node.attr_ints("axes"), {});
  return slice_spec(s, to_ints(a.x(first)), to_ints(a.x(first + 1)), a.has(first + 2) ? to_ints(a.x(first + 2)) : std::vector<int64_t>{},
                    a.has(first + 3) ? to_ints(a.x(first + 3)) : std::vector<int64_t>{});
}

void k_slice(KernelArgs& a) {
  const Tensor& x = a.x(0);
  SliceSpec sp = slice_spec_of(a, x.shape(), 1);
  std::vector<int64_t> st = strides_of(x.shape()), ss(st.size());
  int64_t base = 0;
  for (size_t i = 0; i < st.size(); ++i) {
    base += sp.start[i] * st[i];
    ss[i] = sp.step[i] * st[i];
  }
  Tensor y = alloc(x.dtype(), sp.out);
  strided_copy(x, ss, base, y);
  a.out[0] = y;
}

// SliceGrad(dy, shape(x), starts, ends, axes?, steps?; opset-1 style attrs when `legacy`):
// dx = zeros(shape(x)) with dy scattered where Slice read.
void k_slice_grad(KernelArgs& a) {
  const Tensor& dy = a.x(0);
  Shape xs = to_ints(a.x(1));
  SliceSpec sp = a.node.attr_i("legacy", 0)
                     ? slice_spec(xs, a.node.attr_ints("starts"), a.node.attr_ints("ends"), a.node.attr_ints("axes"), {})
                     : slice_spec_of(a, xs, 2);
  Tensor dx = alloc(dy.dtype(), xs);
  std::vector<int64_t> st = strides_of(xs), ss(st.size());
  int64_t base = 0;
  for (size_t i = 0; i < st.size(); ++i) {
    base += sp.start[i] * st[i];
    ss[i] = sp.step[i] * st[i];
  }
  const size_t es = dtype_size(dy.dtype());
  for_each_offset(dy.shape(), {ss}, [&](int64_t lin, const int64_t* off) {
    std::memcpy(static_cast<char*>(dx.data()) + (base + off[0]) * es, static_cast<const char*>(dy.data()) + lin * es, es);
  });
  a.out[0] = dx;
}

void k_split(KernelArgs& a) {
  const Tensor& x = a.x(0);
  const int64_t r = static_cast<int64_t>(x.shape().size());
  const int64_t axis = norm_axis(a.node.attr_i("axis", 0), r);
  const size_t n = a.node.outputs.size();
  std::vector<int64_t> sizes = a.has(1) ? to_ints(a.x(1)) : a.node.attr_ints("split");
  const int64_t d = x.shape()[axis];
  if (sizes.empty()) {
    int64_t each = (d + static_cast<int64_t>(n) - 1) / static_cast<int64_t>(n);
    for (size_t i = 0; i < n; ++i) sizes.push_back(std::min<int64_t>(each, d - each * static_cast<int64_t>(i)));
  }
  if (sizes.size() != n) throw KernelError("Split: " + std::to_string(sizes.size()) + " sizes for " + std::to_string(n) + " outputs");
  int64_t at = 0;
  for (size_t i = 0; i < n; ++i) {
    std::vector<int64_t> starts{at}, ends{at + sizes[i]}, axes{axis};
    SliceSpec sp = slice_spec(x.shape(), starts, ends, axes, {});
    std::vector<int64_t> st = strides_of(x.shape());
    Tensor y = alloc(x.dtype(), sp.out);
    strided_copy(x, st, at * st[axis], y);
    if (a.wants(i)) a.out[i] = y;
    at += sizes[i];
  }
}

// ConcatGrad(dy, shape(x_0), ..., shape(x_{n-1}); axis): dx_i = dy's slab i along axis.
void k_concat_grad(KernelArgs& a) {
  const Tensor& dy = a.x(0);
  const int64_t r = static_cast<int64_t>(dy.shape().size());
  const int64_t axis = norm_axis(a.node.attr_i("axis", 0), r);
  std::vector<int64_t> st = strides_of(dy.shape());
  int64_t at = 0;
  for (size_t i = 1; i < a.in.size(); ++i) {
    Shape xs = to_ints(a.x(i));
    if (a.wants(i - 1)) {
      Tensor y = alloc(dy.dtype(), xs);
      strided_copy(dy, st, at * st[axis], y);
      a.out[i - 1] = y;
    }
    at += xs[axis];
  }
}

void k_gather(KernelArgs& a) {
  const Tensor& x = a.x(0);
  std::vector<int64_t> idx = to_ints(a.x(1));
  const Shape& xs = x.shape();
  const int64_t r = static_cast<int64_t>(xs.size());
  const int64_t axis = norm_axis(a.node.attr_i("axis", 0), r);
  Shape o(xs.begin(), xs.begin() + axis);
  for (int64_t d : a.x(1).shape()) o.push_back(d);
  o.insert(o.end(), xs.begin() + axis + 1, xs.end());
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= xs[i];
  for (int64_t i = axis + 1; i < r; ++i) inner *= xs[i];
  Tensor y = alloc(x.dtype(), o);
  const size_t es = dtype_size(x.dtype());
  const int64_t n = static_cast<int64_t>(idx.size()), d = xs[axis];
  for (int64_t u = 0; u < outer; ++u)
    for (int64_t j = 0; j < n; ++j) {
      int64_t k = idx[j] < 0 ? idx[j] + d : idx[j];
      if (k < 0 || k >= d) throw KernelError("Gather: index " + std::to_string(idx[j]) + " out of range [" + std::to_string(-d) + ", " + std::to_string(d) + ")");
      std::memcpy(static_cast<char*>(y.data()) + ((u * n + j) * inner) * es,
                  static_cast<const char*>(x.data()) + ((u * d + k) * inner) * es, inner * es);
    }
  a.out[0] = y;
}

// GatherGrad(dy, indices, shape(data); axis): dx = zeros, dx[.., idx[j], ..] += dy[.., j, ..].
void k_gather_grad(KernelArgs& a) {
  const Tensor& dy = a.x(0);
  std::vector<int64_t> idx = to_ints(a.x(1));
  Shape xs = to_ints(a.x(2));
  const int64_t r = static_cast<int64_t>(xs.size());
  const int64_t axis = norm_axis(a.node.attr_i("axis", 0), r);
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= xs[i];
  for (int64_t i = axis + 1; i < r; ++i) inner *= xs[i];
  Tensor dx = alloc(dy.dtype(), xs);
  const int64_t n = static_cast<int64_t>(idx.size()), d = xs[axis];
  float_dispatch(dy.dtype(), a.node, [&](auto tag) {
    using T = decltype(tag);
    const T* g = dy.data_as<T>();
    T* o = dx.data_as<T>();
    for (int64_t u = 0; u < outer; ++u)
      for (int64_t j = 0; j < n; ++j) {
        int64_t k = idx[j] < 0 ? idx[j] + d : idx[j];
        for (int64_t i = 0; i < inner; ++i) o[(u * d + k) * inner + i] += g[(u * n + j) * inner + i];
      }
  });
  a.out[0] = dx;
}

// ZerosLike(x): zeros of x's shape and dtype.
void k_zeros_like(KernelArgs& a) { a.out[0] = alloc(a.x(0).dtype(), a.x(0).shape()); }

// ReshapeTo(x, shape): x viewed with the given shape (the gradient of every view op).
void k_reshape_to(KernelArgs& a) { a.out[0] = reshaped(a.x(0), to_ints(a.x(1))); }

}  // namespace

void register_shape_kernels(KernelTable& t) {
  t[":Identity"] = k_identity;
  t[":Constant"] = k_constant;
  t[":Shape"] = k_shape;
  t[":Cast"] = k_cast;
  t[":ConstantOfShape"] = k_constant_of_shape;
  t[":Reshape"] = k_reshape;
  t[":Flatten"] = k_flatten;
  t[":Squeeze"] = k_squeeze;
  t[":Unsqueeze"] = k_unsqueeze;
  t[":Transpose"] = k_transpose;
  t[":Concat"] = k_concat;
  t[":Slice"] = k_slice;
  t[":Split"] = k_split;
  t[":Gather"] = k_gather;
  const std::string d = std::string(kTrainDomain) + ":";
  t[d + "SliceGrad"] = k_slice_grad;
  t[d + "ConcatGrad"] = k_concat_grad;
  t[d + "GatherGrad"] = k_gather_grad;
  t[d + "ZerosLike"] = k_zeros_like;
  t[d + "ReshapeTo"] = k_reshape_to;
}

}  // namespace tessera::train
