// Training reference kernels: elementwise ops with numpy broadcasting (ONNX Add/Sub/Mul/Div-14,
// Pow-15, Where-16, Expand-13, Equal/Less/Greater-13, Max/Min/Sum/Mean-13), activations (Relu-14, LeakyRelu-16, Sigmoid-13, Tanh-13, HardSigmoid-6,
// HardSwish-14, Gelu-20, Erf-13, Clip-13, Neg, Exp, Log, Sqrt), reductions (ReduceSum-13,
// ReduceMean-18 and the attribute forms before them), Dropout-13, and their gradient ops in
// the tessera.train domain. Every float kernel runs in float32 and float64.
#include <algorithm>
#include <random>

#include "train/kernels.h"

namespace tessera::train {
namespace {

constexpr double kSqrt2 = 1.4142135623730951;
constexpr double kInvSqrtPi2 = 1.1283791670955126;  // 2 / sqrt(pi)
constexpr double kSqrt2OverPi = 0.7978845608028654;

// ---- binary with broadcast ----
template <typename T, typename F>
Tensor binary(const Tensor& a, const Tensor& b, F f) {
  Shape o = broadcast_shape(a.shape(), b.shape());
  Tensor y = alloc(a.dtype(), o);
  const T* pa = a.data_as<T>();
  const T* pb = b.data_as<T>();
  T* py = y.data_as<T>();
  if (a.shape() == o && b.shape() == o) {
    for (int64_t i = 0; i < y.numel(); ++i) py[i] = f(pa[i], pb[i]);
  } else if (a.shape() == o && b.numel() == 1) {
    for (int64_t i = 0; i < y.numel(); ++i) py[i] = f(pa[i], pb[0]);
  } else {
    for_each_offset(o, {broadcast_strides(a.shape(), o), broadcast_strides(b.shape(), o)},
                    [&](int64_t lin, const int64_t* off) { py[lin] = f(pa[off[0]], pb[off[1]]); });
  }
  return y;
}

template <int kOp>
void k_binary(KernelArgs& a) {
  const Tensor& x = a.x(0);
  const Tensor& w = a.x(1);
  if (x.dtype() != w.dtype()) throw KernelError("inputs differ in dtype");
  if (x.dtype() == DType::kInt64 && kOp <= 3) {  // shape arithmetic
    Tensor xd = x, wd = w;
    a.out[0] = binary<int64_t>(xd, wd, [](int64_t p, int64_t q) {
      return kOp == 0 ? p + q : kOp == 1 ? p - q : kOp == 2 ? p * q : (q ? p / q : 0);
    });
    return;
  }
  float_dispatch(x.dtype(), a.node, [&](auto tag) {
    using T = decltype(tag);
    a.out[0] = binary<T>(x, w, [](T p, T q) -> T {
      if constexpr (kOp == 0) return p + q;
      if constexpr (kOp == 1) return p - q;
      if constexpr (kOp == 2) return p * q;
      if constexpr (kOp == 3) return p / q;
      return std::pow(p, q);
    });
  });
}

// ---- unary ----
// kind: forward value f(x), and (for the gradient ops) f'(x) or f'(from y).
enum class Unary { kRelu, kLeakyRelu, kSigmoid, kTanh, kHardSigmoid, kHardSwish, kGelu, kErf, kNeg, kExp, kLog, kSqrt, kClip };

template <typename T>
T unary_value(Unary k, T x, double alpha, double beta, bool tanh_approx) {
  switch (k) {
    case Unary::kRelu: return x > 0 ? x : T(0);
    case Unary::kLeakyRelu: return x >= 0 ? x : T(alpha * x);
    case Unary::kSigmoid: return T(1) / (T(1) + std::exp(-x));
    case Unary::kTanh: return std::tanh(x);
    case Unary::kHardSigmoid: return std::max(T(0), std::min(T(1), T(alpha * x + beta)));
    case Unary::kHardSwish: return x * std::max(T(0), std::min(T(1), T(x / 6 + 0.5)));
    case Unary::kGelu:
      if (tanh_approx) return T(0.5) * x * (T(1) + std::tanh(T(kSqrt2OverPi) * (x + T(0.044715) * x * x * x)));
      return T(0.5) * x * (T(1) + std::erf(x / T(kSqrt2)));
    case Unary::kErf: return std::erf(x);
    case Unary::kNeg: return -x;
    case Unary::kExp: return std::exp(x);
    case Unary::kLog: return std::log(x);
    case Unary::kSqrt: return std::sqrt(x);
    case Unary::kClip: return std::max(T(alpha), std::min(T(beta), x));
  }
  return x;
}

// d f / d x at input x (ONNX's one-sided conventions at kinks: the derivative of the branch
// that the forward takes, e.g. Relu'(0) = 0, HardSigmoid' = 0 at the clamps).
template <typename T>
T unary_deriv(Unary k, T x, double alpha, double beta, bool tanh_approx) {
  switch (k) {
    case Unary::kRelu: return x > 0 ? T(1) : T(0);
    case Unary::kLeakyRelu: return x >= 0 ? T(1) : T(alpha);
    case Unary::kSigmoid: { T s = T(1) / (T(1) + std::exp(-x)); return s * (T(1) - s); }
    case Unary::kTanh: { T t = std::tanh(x); return T(1) - t * t; }
    case Unary::kHardSigmoid: { T v = T(alpha * x + beta); return v > 0 && v < 1 ? T(alpha) : T(0); }
    case Unary::kHardSwish: return x < -3 ? T(0) : x > 3 ? T(1) : T(x / 3 + 0.5);
    case Unary::kGelu:
      if (tanh_approx) {
        T u = T(kSqrt2OverPi) * (x + T(0.044715) * x * x * x), t = std::tanh(u);
        T du = T(kSqrt2OverPi) * (T(1) + T(3 * 0.044715) * x * x);
        return T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t * t) * du;
      }
      return T(0.5) * (T(1) + std::erf(x / T(kSqrt2))) + x * std::exp(-x * x / 2) / T(std::sqrt(2 * M_PI));
    case Unary::kErf: return T(kInvSqrtPi2) * std::exp(-x * x);
    case Unary::kNeg: return T(-1);
    case Unary::kExp: return std::exp(x);
    case Unary::kLog: return T(1) / x;
    case Unary::kSqrt: return T(0.5) / std::sqrt(x);
    case Unary::kClip: return x >= T(alpha) && x <= T(beta) ? T(1) : T(0);
  }
  return T(1);
}

struct UnaryParams {
  double alpha = 0, beta = 0;
  bool tanh_approx = false;
};

UnaryParams unary_params(Unary k, KernelArgs& a, bool grad) {
  UnaryParams p;
  if (k == Unary::kLeakyRelu) p.alpha = a.node.attr_f("alpha", 0.01f);
  if (k == Unary::kHardSigmoid) { p.alpha = a.node.attr_f("alpha", 0.2f); p.beta = a.node.attr_f("beta", 0.5f); }
  if (k == Unary::kGelu) p.tanh_approx = a.node.attr_s("approximate", "none") == "tanh";
  if (k == Unary::kClip) {
    // Clip-13: min and max are inputs 1 and 2 (forward) or 2 and 3 (ClipGrad(dy, x, min, max)).
    p.alpha = -INFINITY;
    p.beta = INFINITY;
    const size_t base = grad ? 2 : 1;
    auto scalar = [&](size_t i) {
      double v = 0;
      float_dispatch(a.x(i).dtype(), a.node, [&](auto tag) { v = a.x(i).template data_as<decltype(tag)>()[0]; });
      return v;
    };
    if (a.has(base)) p.alpha = scalar(base);
    if (a.has(base + 1)) p.beta = scalar(base + 1);
    if (a.node.find_attr("min")) p.alpha = a.node.attr_f("min", 0);
    if (a.node.find_attr("max")) p.beta = a.node.attr_f("max", 0);
  }
  return p;
}

template <Unary kKind>
void k_unary(KernelArgs& a) {
  const Tensor& x = a.x(0);
  UnaryParams p = unary_params(kKind, a, false);
  float_dispatch(x.dtype(), a.node, [&](auto tag) {
    using T = decltype(tag);
    Tensor y = alloc(x.dtype(), x.shape());
    const T* px = x.data_as<T>();
    T* py = y.data_as<T>();
    for (int64_t i = 0; i < x.numel(); ++i) py[i] = unary_value<T>(kKind, px[i], p.alpha, p.beta, p.tanh_approx);
    a.out[0] = y;
  });
}

// <Op>Grad(dy, x): dx = dy * f'(x).
template <Unary kKind>
void k_unary_grad(KernelArgs& a) {
  const Tensor& dy = a.x(0);
  const Tensor& x = a.x(1);
  UnaryParams p = unary_params(kKind, a, true);
  float_dispatch(dy.dtype(), a.node, [&](auto tag) {
    using T = decltype(tag);
    Tensor dx = alloc(dy.dtype(), x.shape());
    const T* g = dy.data_as<T>();
    const T* px = x.data_as<T>();
    T* o = dx.data_as<T>();
    for (int64_t i = 0; i < x.numel(); ++i) o[i] = g[i] * unary_deriv<T>(kKind, px[i], p.alpha, p.beta, p.tanh_approx);
    a.out[0] = dx;
  });
}

// Gradients from the output y (what the backward keeps instead of x):
// ReluGradY: dy*(y>0); SigmoidGradY: dy*y*(1-y); TanhGradY: dy*(1-y^2); ExpGradY: dy*y.
template <int kOp>
void k_grad_from_y(KernelArgs& a) {
  const Tensor& dy = a.x(0);
  const Tensor& y = a.x(1);
  float_dispatch(dy.dtype(), a.node, [&](auto tag) {
    using T = decltype(tag);
    Tensor dx = alloc(dy.dtype(), y.shape());
    const T* g = dy.data_as<T>();
    const T* py = y.data_as<T>();
    T* o = dx.data_as<T>();
    for (int64_t i = 0; i < y.numel(); ++i) {
      T v = py[i];
      o[i] = kOp == 0 ? (v > 0 ? g[i] : T(0)) : kOp == 1 ? g[i] * v * (T(1) - v) : kOp == 2 ? g[i] * (T(1) - v * v) : g[i] * v;
    }
    a.out[0] = dx;
  });
}

// ---- reductions ----
std::vector<int64_t> reduce_axes(KernelArgs& a, size_t axes_input, int64_t rank, bool* noop) {
  std::vector<int64_t> axes;
  if (a.has(axes_input)) axes = to_ints(a.x(axes_input));
  else axes = a.node.attr_ints("axes");
  *noop = axes.empty() && a.node.attr_i("noop_with_empty_axes", 0) != 0;
  if (axes.empty())
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  for (int64_t& ax : axes) ax = norm_axis(ax, rank);
  return axes;
}

template <bool kMean>
void k_reduce(KernelArgs& a) {
  const Tensor& x = a.x(0);
  const int64_t r = static_cast<int64_t>(x.shape().size());
  bool noop = false;
  std::vector<int64_t> axes = reduce_axes(a, 1, r, &noop);
  if (noop) { a.out[0] = x; return; }
  const bool keep = a.node.attr_i("keepdims", 1) != 0;
  Shape kept = x.shape();
  for (int64_t ax : axes) kept[ax] = 1;
  Shape o;
  for (int64_t i = 0; i < r; ++i)
    if (keep || std::find(axes.begin(), axes.end(), i) == axes.end()) o.push_back(kept[i]);
  float_dispatch(x.dtype(), a.node, [&](auto tag) {
    using T = decltype(tag);
    Tensor y = alloc(x.dtype(), o);
    T* py = y.data_as<T>();
    const T* px = x.data_as<T>();
    for_each_offset(x.shape(), {broadcast_strides(kept, x.shape())}, [&](int64_t lin, const int64_t* off) { py[off[0]] += px[lin]; });
    if (kMean) {
      const T inv = T(y.numel()) / T(std::max<int64_t>(x.numel(), 1));
      for (int64_t i = 0; i < y.numel(); ++i) py[i] *= inv;
    }
    a.out[0] = y;
  });
}

// ReduceSumTo(dy, shape): sums dy over the dims that numpy broadcasting expanded from `shape`
// (the gradient of a broadcast operand); a plain view when the shapes already agree.
void k_reduce_sum_to(KernelArgs& a) {
  const Tensor& dy = a.x(0);
  Shape s = to_ints(a.x(1));
  if (s == dy.shape()) { a.out[0] = dy; return; }
  float_dispatch(dy.dtype(), a.node, [&](auto tag) {
    using T = decltype(tag);
    Tensor y = alloc(dy.dtype(), s);
    T* py = y.data_as<T>();
    const T* g = dy.data_as<T>();
    for_each_offset(dy.shape(), {broadcast_strides(s, dy.shape())}, [&](int64_t lin, const int64_t* off) { py[off[0]] += g[lin]; });
    a.out[0] = y;
  });
}

// ReduceGrad(dy, shape(x), axes?; axes, keepdims, mean, noop_with_empty_axes): dx = dy
// broadcast back over the reduced axes (divided by their element count for a mean).
void k_reduce_grad(KernelArgs& a) {
  const Tensor& dy = a.x(0);
  Shape xs = to_ints(a.x(1));
  const int64_t r = static_cast<int64_t>(xs.size());
  bool noop = false;
  std::vector<int64_t> axes = reduce_axes(a, 2, r, &noop);
  if (noop) { a.out[0] = dy; return; }
  Shape kept = xs;
  int64_t count = 1;
  for (int64_t ax : axes) { count *= xs[ax]; kept[ax] = 1; }
  const bool mean = a.node.attr_i("mean", 0) != 0;
  float_dispatch(dy.dtype(), a.node, [&](auto tag) {
    using T = decltype(tag);
    Tensor dx = alloc(dy.dtype(), xs);
    T* o = dx.data_as<T>();
    const T* g = dy.data_as<T>();
    const T scale = mean ? T(1) / T(std::max<int64_t>(count, 1)) : T(1);
    for_each_offset(xs, {broadcast_strides(kept, xs)}, [&](int64_t lin, const int64_t* off) { o[lin] = g[off[0]] * scale; });
    a.out[0] = dx;
  });
}

// ---- Dropout-13: Y = X * mask / (1 - ratio) in training mode, with mask ~ Bernoulli(1 - ratio)
// from a generator seeded by the run (same seed, same mask); identity otherwise.
void k_dropout(KernelArgs& a) {
  const Tensor& x = a.x(0);
  double ratio = 0.5;
  if (a.has(1)) float_dispatch(a.x(1).dtype(), a.node, [&](auto tag) { ratio = a.x(1).template data_as<decltype(tag)>()[0]; });
  bool training = a.has(2) && a.x(2).data_as<uint8_t>()[0] != 0;
  if (a.node.find_attr("training_mode")) training = a.node.attr_i("training_mode", 0) != 0;  // tessera.train override
  Tensor mask = alloc(DType::kBool, x.shape());
  uint8_t* m = mask.data_as<uint8_t>();
  if (!training || ratio == 0) {
    std::fill(m, m + x.numel(), 1);
    a.out[0] = x;
  } else {
    std::mt19937_64 gen(a.seed ^ std::hash<std::string>{}(a.node.name));
    std::uniform_real_distribution<double> u(0, 1);
    for (int64_t i = 0; i < x.numel(); ++i) m[i] = u(gen) >= ratio;
    float_dispatch(x.dtype(), a.node, [&](auto tag) {
      using T = decltype(tag);
      Tensor y = alloc(x.dtype(), x.shape());
      const T s = T(1 / (1 - ratio));
      for (int64_t i = 0; i < x.numel(); ++i) y.data_as<T>()[i] = m[i] ? x.data_as<T>()[i] * s : T(0);
      a.out[0] = y;
    });
  }
  if (a.wants(1)) a.out[1] = mask;
}

// DropoutGrad(dy, mask, ratio?, training_mode?; the forward node's attributes):
// dx = dy * mask / (1 - ratio) in training mode, dy otherwise.
void k_dropout_grad(KernelArgs& a) {
  const Tensor& dy = a.x(0);
  const uint8_t* m = a.x(1).data_as<uint8_t>();
  double ratio = 0.5;
  if (a.has(2)) float_dispatch(a.x(2).dtype(), a.node, [&](auto tag) { ratio = a.x(2).template data_as<decltype(tag)>()[0]; });
  bool training = a.has(3) && a.x(3).data_as<uint8_t>()[0] != 0;
  if (a.node.find_attr("training_mode")) training = a.node.attr_i("training_mode", 0) != 0;
  const double scale = training ? 1 / (1 - ratio) : 1.0;
  float_dispatch(dy.dtype(), a.node, [&](auto tag) {
    using T = decltype(tag);
    Tensor dx = alloc(dy.dtype(), dy.shape());
    for (int64_t i = 0; i < dy.numel(); ++i) dx.data_as<T>()[i] = m[i] ? dy.data_as<T>()[i] * T(scale) : T(0);
    a.out[0] = dx;
  });
}

// ---- Where-16, Expand-13, comparisons (Equal/Less/Greater-13), Max/Min/Sum/Mean-13 ----
// Where(C, A, B): Y = C ? A : B with three-way broadcasting.
void k_where(KernelArgs& a) {
  const Tensor& c = a.x(0);
  const Tensor& p = a.x(1);
  const Tensor& q = a.x(2);
  Shape o = broadcast_shape(broadcast_shape(c.shape(), p.shape()), q.shape());
  Tensor y = alloc(p.dtype(), o);
  const size_t es = dtype_size(p.dtype());
  const uint8_t* pc = c.data_as<uint8_t>();
  for_each_offset(o, {broadcast_strides(c.shape(), o), broadcast_strides(p.shape(), o), broadcast_strides(q.shape(), o)},
                  [&](int64_t lin, const int64_t* off) {
                    const void* src = pc[off[0]] ? static_cast<const char*>(p.data()) + off[1] * es
                                                 : static_cast<const char*>(q.data()) + off[2] * es;
                    std::memcpy(static_cast<char*>(y.data()) + lin * es, src, es);
                  });
  a.out[0] = y;
}

// WhereGrad(dY, C; select): dY where C == select, else 0 (shape of dY; C broadcast).
void k_where_grad(KernelArgs& a) {
  const Tensor& dy = a.x(0);
  const Tensor& c = a.x(1);
  const uint8_t want = a.node.attr_i("select", 1) != 0;
  float_dispatch(dy.dtype(), a.node, [&](auto tag) {
    using T = decltype(tag);
    Tensor dx = alloc(dy.dtype(), dy.shape());
    const uint8_t* pc = c.data_as<uint8_t>();
    for_each_offset(dy.shape(), {broadcast_strides(c.shape(), dy.shape())}, [&](int64_t lin, const int64_t* off) {
      dx.data_as<T>()[lin] = (pc[off[0]] != 0) == want ? dy.data_as<T>()[lin] : T(0);
    });
    a.out[0] = dx;
  });
}

void k_expand(KernelArgs& a) {
  const Tensor& x = a.x(0);
  Shape o = broadcast_shape(x.shape(), to_ints(a.x(1)));
  Tensor y = alloc(x.dtype(), o);
  const size_t es = dtype_size(x.dtype());
  for_each_offset(o, {broadcast_strides(x.shape(), o)}, [&](int64_t lin, const int64_t* off) {
    std::memcpy(static_cast<char*>(y.data()) + lin * es, static_cast<const char*>(x.data()) + off[0] * es, es);
  });
  a.out[0] = y;
}

template <int kCmp>  // 0 Equal, 1 Less, 2 Greater
void k_compare(KernelArgs& a) {
  const Tensor& p = a.x(0);
  const Tensor& q = a.x(1);
  Shape o = broadcast_shape(p.shape(), q.shape());
  Tensor y = alloc(DType::kBool, o);
  auto read = [](const Tensor& t, int64_t i) -> double {
    switch (t.dtype()) {
      case DType::kFloat32: return t.data_as<float>()[i];
      case DType::kFloat64: return t.data_as<double>()[i];
      case DType::kInt64: return static_cast<double>(t.data_as<int64_t>()[i]);
      case DType::kInt32: return t.data_as<int32_t>()[i];
      case DType::kBool: return t.data_as<uint8_t>()[i];
      default: throw KernelError(std::string("comparison of ") + dtype_name(t.dtype()) + " is not supported in training");
    }
  };
  for_each_offset(o, {broadcast_strides(p.shape(), o), broadcast_strides(q.shape(), o)}, [&](int64_t lin, const int64_t* off) {
    const double u = read(p, off[0]), v = read(q, off[1]);
    y.data_as<uint8_t>()[lin] = kCmp == 0 ? u == v : kCmp == 1 ? u < v : u > v;
  });
  a.out[0] = y;
}

// Max/Min/Sum/Mean-13 (variadic, broadcasting): folded pairwise left to right.
template <int kOp>  // 0 Max, 1 Min, 2 Sum, 3 Mean
void k_variadic(KernelArgs& a) {
  float_dispatch(a.x(0).dtype(), a.node, [&](auto tag) {
    using T = decltype(tag);
    Tensor acc = a.x(0);
    for (size_t i = 1; i < a.in.size(); ++i)
      acc = binary<T>(acc, a.x(i), [](T p, T q) { return kOp == 0 ? std::max(p, q) : kOp == 1 ? std::min(p, q) : p + q; });
    if (kOp == 3) {
      Tensor m = alloc(acc.dtype(), acc.shape());
      for (int64_t k = 0; k < acc.numel(); ++k) m.data_as<T>()[k] = acc.data_as<T>()[k] / T(a.in.size());
      acc = m;
    } else if (a.in.size() == 1) {
      acc = a.x(0);
    }
    a.out[0] = acc;
  });
}

// MaxMinGrad(dY, X_i, Y; ...): dY where X_i (broadcast) equals the result Y, else 0 (shape of
// dY). Ties send the gradient to every input that attains the extremum.
void k_max_min_grad(KernelArgs& a) {
  const Tensor& dy = a.x(0);
  const Tensor& x = a.x(1);
  const Tensor& y = a.x(2);
  float_dispatch(dy.dtype(), a.node, [&](auto tag) {
    using T = decltype(tag);
    Tensor dx = alloc(dy.dtype(), dy.shape());
    for_each_offset(dy.shape(), {broadcast_strides(x.shape(), dy.shape()), broadcast_strides(y.shape(), dy.shape())},
                    [&](int64_t lin, const int64_t* off) {
                      dx.data_as<T>()[lin] = x.data_as<T>()[off[0]] == y.data_as<T>()[off[1]] ? dy.data_as<T>()[lin] : T(0);
                    });
    a.out[0] = dx;
  });
}

}  // namespace

void register_elementwise_kernels(KernelTable& t) {
  t[":Where"] = k_where;
  t[":Expand"] = k_expand;
  t[":Equal"] = k_compare<0>;
  t[":Less"] = k_compare<1>;
  t[":Greater"] = k_compare<2>;
  t[":Max"] = k_variadic<0>;
  t[":Min"] = k_variadic<1>;
  t[":Sum"] = k_variadic<2>;
  t[":Mean"] = k_variadic<3>;
  t[":Add"] = k_binary<0>;
  t[":Sub"] = k_binary<1>;
  t[":Mul"] = k_binary<2>;
  t[":Div"] = k_binary<3>;
  t[":Pow"] = k_binary<4>;
  t[":Relu"] = k_unary<Unary::kRelu>;
  t[":LeakyRelu"] = k_unary<Unary::kLeakyRelu>;
  t[":Sigmoid"] = k_unary<Unary::kSigmoid>;
  t[":Tanh"] = k_unary<Unary::kTanh>;
  t[":HardSigmoid"] = k_unary<Unary::kHardSigmoid>;
  t[":HardSwish"] = k_unary<Unary::kHardSwish>;
  t[":Gelu"] = k_unary<Unary::kGelu>;
  t[":Erf"] = k_unary<Unary::kErf>;
  t[":Neg"] = k_unary<Unary::kNeg>;
  t[":Exp"] = k_unary<Unary::kExp>;
  t[":Log"] = k_unary<Unary::kLog>;
  t[":Sqrt"] = k_unary<Unary::kSqrt>;
  t[":Clip"] = k_unary<Unary::kClip>;
  t[":ReduceSum"] = k_reduce<false>;
  t[":ReduceMean"] = k_reduce<true>;
  t[":Dropout"] = k_dropout;
  const std::string d = std::string(kTrainDomain) + ":";
  t[d + "LeakyReluGrad"] = k_unary_grad<Unary::kLeakyRelu>;
  t[d + "HardSigmoidGrad"] = k_unary_grad<Unary::kHardSigmoid>;
  t[d + "HardSwishGrad"] = k_unary_grad<Unary::kHardSwish>;
  t[d + "GeluGrad"] = k_unary_grad<Unary::kGelu>;
  t[d + "ErfGrad"] = k_unary_grad<Unary::kErf>;
  t[d + "LogGrad"] = k_unary_grad<Unary::kLog>;
  t[d + "SqrtGrad"] = k_unary_grad<Unary::kSqrt>;
  t[d + "ClipGrad"] = k_unary_grad<Unary::kClip>;
  t[d + "ReluGrad"] = k_grad_from_y<0>;
  t[d + "SigmoidGrad"] = k_grad_from_y<1>;
  t[d + "TanhGrad"] = k_grad_from_y<2>;
  t[d + "ExpGrad"] = k_grad_from_y<3>;
  t[d + "ReduceSumTo"] = k_reduce_sum_to;
  t[d + "WhereGrad"] = k_where_grad;
  t[d + "MaxMinGrad"] = k_max_min_grad;
  t[d + "ReduceGrad"] = k_reduce_grad;
  t[d + "Dropout"] = k_dropout;
  t[d + "DropoutGrad"] = k_dropout_grad;
}

}  // namespace tessera::train
