// Training reference kernels: MatMul-13 (rank >= 2, batch dims broadcast), Gemm-13,
// Conv-11 (1-D/2-D, groups, dilations, auto_pad), MaxPool-12, AveragePool-11 and
// GlobalAveragePool-1, and their gradient ops in the tessera.train domain:
//   MatMulT(A, B; transA, transB)            Y = op(A) op(B), op(X) = X or X^T (last two dims)
//   ConvGradInput(dY, W, shape(X); Conv attrs)  dX[n,c,i] = sum_{m,k} dY[n,m,o] W[m,c,k], i = o*s - p + k*d
//   ConvGradWeight(X, dY, shape(W); attrs)      dW[m,c,k] = sum_{n,o} dY[n,m,o] X[n,c,o*s - p + k*d]
//   ConvBiasGrad(dY)                          dB[m] = sum_{n,o} dY[n,m,o]
//   MaxPoolGrad(dY, X; attrs)                 dY routed to the first maximum of each window
//   AveragePoolGrad(dY, shape(X); attrs)      dY / window count spread over the window
//   GlobalAveragePoolGrad(dY, shape(X))       dY / (H*W) over the plane
#include <algorithm>

#include "train/kernels.h"

namespace tessera::train {
namespace {

// C[M,N] (+)= A[M,K] B[K,N], row-major, i-k-j order (contiguous inner loop).
template <typename T>
void gemm_nn(const T* a, const T* b, T* c, int64_t m, int64_t n, int64_t k) {
  for (int64_t i = 0; i < m; ++i) {
    T* ci = c + i * n;
    for (int64_t p = 0; p < k; ++p) {
      const T av = a[i * k + p];
      if (av == T(0)) continue;
      const T* bp = b + p * n;
      for (int64_t j = 0; j < n; ++j) ci[j] += av * bp[j];
    }
  }
}

template <typename T>
std::vector<T> transposed(const T* x, int64_t rows, int64_t cols) {
  std::vector<T> t(rows * cols);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) t[j * rows + i] = x[i * cols + j];
  return t;
}

Tensor matmul_t(const Tensor& a, const Tensor& b, bool ta, bool tb, const Node& node) {
  const Shape& as = a.shape();
  const Shape& bs = b.shape();
  if (as.size() < 2 || bs.size() < 2)
    throw KernelError("MatMul with a 1-D operand is not supported in training (shapes " + shape_to_string(as) + ", " + shape_to_string(bs) + ")");
  const int64_t m = ta ? as[as.size() - 1] : as[as.size() - 2];
  const int64_t k = ta ? as[as.size() - 2] : as[as.size() - 1];
  const int64_t kb = tb ? bs[bs.size() - 1] : bs[bs.size() - 2];
  const int64_t n = tb ? bs[bs.size() - 2] : bs[bs.size() - 1];
  if (k != kb) throw KernelError("MatMul: inner dims differ (" + shape_to_string(as) + " x " + shape_to_string(bs) + ")");
  Shape ab(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
  Shape batch = broadcast_shape(ab, bb);
  Shape o = batch;
  o.push_back(m);
  o.push_back(n);
  Tensor y = alloc(a.dtype(), o);
  float_dispatch(a.dtype(), node, [&](auto tag) {
    using T = decltype(tag);
    const int64_t asz = as[as.size() - 2] * as[as.size() - 1], bsz = bs[bs.size() - 2] * bs[bs.size() - 1];
    for_each_offset(batch, {broadcast_strides(ab, batch), broadcast_strides(bb, batch)}, [&](int64_t lin, const int64_t* off) {
      const T* pa = a.data_as<T>() + off[0] * asz;
      const T* pb = b.data_as<T>() + off[1] * bsz;
      std::vector<T> at, bt;
      if (ta) { at = transposed(pa, k, m); pa = at.data(); }
      if (tb) { bt = transposed(pb, n, k); pb = bt.data(); }
      gemm_nn(pa, pb, y.data_as<T>() + lin * m * n, m, n, k);
    });
  });
  return y;
}

void k_matmul(KernelArgs& a) { a.out[0] = matmul_t(a.x(0), a.x(1), false, false, a.node); }
void k_matmul_t(KernelArgs& a) {
  a.out[0] = matmul_t(a.x(0), a.x(1), a.node.attr_i("transA", 0) != 0, a.node.attr_i("transB", 0) != 0, a.node);
}

// Gemm-13: Y = alpha * op(A) op(B) + beta * C, C unidirectionally broadcast to [M, N].
void k_gemm(KernelArgs& a) {
  Tensor y = matmul_t(a.x(0), a.x(1), a.node.attr_i("transA", 0) != 0, a.node.attr_i("transB", 0) != 0, a.node);
  const double alpha = a.node.attr_f("alpha", 1.0f), beta = a.node.attr_f("beta", 1.0f);
  float_dispatch(y.dtype(), a.node, [&](auto tag) {
    using T = decltype(tag);
    T* py = y.data_as<T>();
    if (alpha != 1.0)
      for (int64_t i = 0; i < y.numel(); ++i) py[i] *= T(alpha);
    if (a.has(2)) {
      const T* pc = a.x(2).data_as<T>();
      for_each_offset(y.shape(), {broadcast_strides(a.x(2).shape(), y.shape())},
                      [&](int64_t lin, const int64_t* off) { py[lin] += T(beta) * pc[off[0]]; });
    }
  });
  a.out[0] = y;
}

std::vector<int64_t> conv_kernel(const Node& node, const Shape& w) {
  std::vector<int64_t> k = node.attr_ints("kernel_shape");
  return k.empty() ? std::vector<int64_t>(w.begin() + 2, w.end()) : k;
}

Shape out_shape(const Window2d& g, int64_t channels, size_t rank) {
  return rank == 3 ? Shape{g.n, channels, g.ow} : Shape{g.n, channels, g.oh, g.ow};
}

// The three Conv loops share one traversal: for every (n, m, c, kh, kw, oh, ow) tap inside
// the input, f(x offset, w offset, y offset).
template <typename F>
void conv_taps(const Window2d& g, int64_t m_out, int64_t group, F&& f) {
  const int64_t cg = g.c / group, mg = m_out / group;
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t m = 0; m < m_out; ++m) {
      const int64_t grp = m / mg;
      for (int64_t c = 0; c < cg; ++c) {
        const int64_t xb = (n * g.c + grp * cg + c) * g.ih * g.iw, yb = (n * m_out + m) * g.oh * g.ow;
        for (int64_t kh = 0; kh < g.kh; ++kh)
          for (int64_t kw = 0; kw < g.kw; ++kw) {
            const int64_t wo = ((m * cg + c) * g.kh + kh) * g.kw + kw;
            // ow range whose input column is inside [0, iw).
            const int64_t col0 = kw * g.dw - g.pl;
            int64_t ow_lo = col0 >= 0 ? 0 : (-col0 + g.sw - 1) / g.sw;
            int64_t ow_hi = g.iw - 1 - col0 < 0 ? -1 : std::min<int64_t>(g.ow - 1, (g.iw - 1 - col0) / g.sw);
            if (ow_lo > ow_hi) continue;
            for (int64_t oh = 0; oh < g.oh; ++oh) {
              const int64_t ih = oh * g.sh - g.pt + kh * g.dh;
              if (ih < 0 || ih >= g.ih) continue;
              f(xb + ih * g.iw + col0, wo, yb + oh * g.ow, ow_lo, ow_hi, g.sw);
            }
          }
      }
    }
}

// Pointwise convolutions (1x1 kernel, stride 1, no padding; most of a MobileNet's work) as
// GEMMs per image and group: Y[m, p] = sum_c W[m, c] X[c, p], p over the H*W plane.
bool pointwise(const Window2d& g) {
  return g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.pt == 0 && g.pl == 0 && g.oh == g.ih && g.ow == g.iw;
}

void check_group(int64_t c, int64_t m, int64_t group, int64_t wc) {
  if (group < 1 || c % group || m % group || wc != c / group)
    throw KernelError("Conv: group " + std::to_string(group) + " does not fit " + std::to_string(c) + " input and " +
                      std::to_string(m) + " output channels (W has " + std::to_string(wc) + " per group)");
}

void k_conv(KernelArgs& a) {
  const Tensor& x = a.x(0);
  const Tensor& w = a.x(1);
  const int64_t group = a.node.attr_i("group", 1), m_out = w.shape()[0];
  Window2d g = window_2d(a.node, x.shape(), conv_kernel(a.node, w.shape()), false);
  check_group(g.c, m_out, group, w.shape()[1]);
  Tensor y = alloc(x.dtype(), out_shape(g, m_out, x.shape().size()));
  float_dispatch(x.dtype(), a.node, [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data_as<T>();
    const T* pw = w.data_as<T>();
    T* py = y.data_as<T>();
    if (pointwise(g)) {
      const int64_t cg = g.c / group, mg = m_out / group, plane = g.ih * g.iw;
      for (int64_t n = 0; n < g.n; ++n)
        for (int64_t gr = 0; gr < group; ++gr)
          gemm_nn(pw + gr * mg * cg, px + (n * g.c + gr * cg) * plane, py + (n * m_out + gr * mg) * plane, mg, plane, cg);
    } else {
      conv_taps(g, m_out, group, [&](int64_t xo, int64_t wo, int64_t yo, int64_t lo, int64_t hi, int64_t s) {
        const T wv = pw[wo];
        for (int64_t ow = lo; ow <= hi; ++ow) py[yo + ow] += wv * px[xo + ow * s];
      });
    }
    if (a.has(2)) {
      const T* pb = a.x(2).data_as<T>();
      const int64_t plane = g.oh * g.ow;
      for (int64_t n = 0; n < g.n; ++n)
        for (int64_t m = 0; m < m_out; ++m)
          for (int64_t i = 0; i < plane; ++i) py[(n * m_out + m) * plane + i] += pb[m];
    }
  });
  a.out[0] = y;
}

void k_conv_grad_input(KernelArgs& a) {
  const Tensor& dy = a.x(0);
  const Tensor& w = a.x(1);
  Shape xs = to_ints(a.x(2));
  const int64_t group = a.node.attr_i("group", 1), m_out = w.shape()[0];
  Window2d g = window_2d(a.node, xs, conv_kernel(a.node, w.shape()), false);
  Tensor dx = alloc(dy.dtype(), xs);
  float_dispatch(dy.dtype(), a.node, [&](auto tag) {
    using T = decltype(tag);
    const T* pg = dy.data_as<T>();
    const T* pw = w.data_as<T>();
    T* px = dx.data_as<T>();
    if (pointwise(g)) {  // dX[c, p] = sum_m W[m, c] dY[m, p]
      const int64_t cg = g.c / group, mg = m_out / group, plane = g.ih * g.iw;
      for (int64_t gr = 0; gr < group; ++gr) {
        std::vector<T> wt = transposed(pw + gr * mg * cg, mg, cg);
        for (int64_t n = 0; n < g.n; ++n)
          gemm_nn(wt.data(), pg + (n * m_out + gr * mg) * plane, px + (n * g.c + gr * cg) * plane, cg, plane, mg);
      }
    } else {
      conv_taps(g, m_out, group, [&](int64_t xo, int64_t wo, int64_t yo, int64_t lo, int64_t hi, int64_t s) {
        const T wv = pw[wo];
        for (int64_t ow = lo; ow <= hi; ++ow) px[xo + ow * s] += wv * pg[yo + ow];
      });
    }
  });
  a.out[0] = dx;
}

void k_conv_grad_weight(KernelArgs& a) {
  const Tensor& x = a.x(0);
  const Tensor& dy = a.x(1);
  Shape ws = to_ints(a.x(2));
  const int64_t group = a.node.attr_i("group", 1), m_out = ws[0];
  Window2d g = window_2d(a.node, x.shape(), conv_kernel(a.node, ws), false);
  Tensor dw = alloc(dy.dtype(), ws);
  float_dispatch(dy.dtype(), a.node, [&](auto tag) {
    using T = decltype(tag);
    const T* pg = dy.data_as<T>();
    const T* px = x.data_as<T>();
    T* pw = dw.data_as<T>();
    if (pointwise(g)) {  // dW[m, c] = sum_{n,p} dY[n, m, p] X[n, c, p]
      const int64_t cg = g.c / group, mg = m_out / group, plane = g.ih * g.iw;
      for (int64_t n = 0; n < g.n; ++n)
        for (int64_t gr = 0; gr < group; ++gr) {
          std::vector<T> xt = transposed(px + (n * g.c + gr * cg) * plane, cg, plane);
          gemm_nn(pg + (n * m_out + gr * mg) * plane, xt.data(), pw + gr * mg * cg, mg, cg, plane);
        }
    } else {
      conv_taps(g, m_out, group, [&](int64_t xo, int64_t wo, int64_t yo, int64_t lo, int64_t hi, int64_t s) {
        T acc = 0;
        for (int64_t ow = lo; ow <= hi; ++ow) acc += pg[yo + ow] * px[xo + ow * s];
        pw[wo] += acc;
      });
    }
  });
  a.out[0] = dw;
}

void k_conv_bias_grad(KernelArgs& a) {
  const Tensor& dy = a.x(0);
  const Shape& s = dy.shape();
  const int64_t n = s[0], m = s[1], plane = dy.numel() / std::max<int64_t>(n * m, 1);
  Tensor db = alloc(dy.dtype(), {m});
  float_dispatch(dy.dtype(), a.node, [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < m; ++j)
        for (int64_t p = 0; p < plane; ++p) db.data_as<T>()[j] += dy.data_as<T>()[(i * m + j) * plane + p];
  });
  a.out[0] = db;
}

// ---- pools ----
template <typename F>
void pool_windows(const Window2d& g, F&& f) {
  for (int64_t nc = 0; nc < g.n * g.c; ++nc)
    for (int64_t oh = 0; oh < g.oh; ++oh)
      for (int64_t ow = 0; ow < g.ow; ++ow) f(nc, oh, ow, (nc * g.oh + oh) * g.ow + ow);
}

Window2d pool_geometry(const Node& node, const Shape& xs) {
  std::vector<int64_t> k = node.attr_ints("kernel_shape");
  if (k.empty()) throw KernelError("pool without kernel_shape");
  if (node.op_type.rfind("MaxPool", 0) == 0 && node.outputs.size() > 1 && node.outputs[1] >= 0)
    throw KernelError("MaxPool's Indices output is not supported in training");
  return window_2d(node, xs, k, node.attr_i("ceil_mode", 0) != 0);
}

// For each window: the input offset of its first maximum (or -1 when the window is all padding).
template <typename T>
int64_t window_argmax(const Window2d& g, const T* x, int64_t nc, int64_t oh, int64_t ow) {
  int64_t best = -1;
  T bv = 0;
  for (int64_t kh = 0; kh < g.kh; ++kh) {
    const int64_t ih = oh * g.sh - g.pt + kh * g.dh;
    if (ih < 0 || ih >= g.ih) continue;
    for (int64_t kw = 0; kw < g.kw; ++kw) {
      const int64_t iw = ow * g.sw - g.pl + kw * g.dw;
      if (iw < 0 || iw >= g.iw) continue;
      const int64_t o = (nc * g.ih + ih) * g.iw + iw;
      if (best < 0 || x[o] > bv) { best = o; bv = x[o]; }
    }
  }
  return best;
}

void k_max_pool(KernelArgs& a) {
  const Tensor& x = a.x(0);
  Window2d g = pool_geometry(a.node, x.shape());
  Tensor y = alloc(x.dtype(), out_shape(g, g.c, x.shape().size()));
  float_dispatch(x.dtype(), a.node, [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data_as<T>();
    pool_windows(g, [&](int64_t nc, int64_t oh, int64_t ow, int64_t yo) {
      int64_t o = window_argmax(g, px, nc, oh, ow);
      y.data_as<T>()[yo] = o >= 0 ? px[o] : T(0);
    });
  });
  a.out[0] = y;
}

void k_max_pool_grad(KernelArgs& a) {
  const Tensor& dy = a.x(0);
  const Tensor& x = a.x(1);
  Window2d g = pool_geometry(a.node, x.shape());
  Tensor dx = alloc(dy.dtype(), x.shape());
  float_dispatch(dy.dtype(), a.node, [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data_as<T>();
    pool_windows(g, [&](int64_t nc, int64_t oh, int64_t ow, int64_t yo) {
      int64_t o = window_argmax(g, px, nc, oh, ow);
      if (o >= 0) dx.data_as<T>()[o] += dy.data_as<T>()[yo];
    });
  });
  a.out[0] = dx;
}

// Window element count of AveragePool-11: with count_include_pad the window clipped to the
// padded input, else clipped to the input.
int64_t avg_count(const Window2d& g, const Node& node, int64_t oh, int64_t ow, const Shape& xs) {
  const bool incl = node.attr_i("count_include_pad", 0) != 0;
  int64_t ch = 0, cw = 0;
  std::vector<int64_t> pads = node.attr_ints("pads");
  const int64_t pb_h = xs.size() == 4 && pads.size() == 4 ? pads[2] : 0, pb_w = pads.size() == 4 ? pads[3] : pads.size() == 2 ? pads[1] : 0;
  for (int64_t kh = 0; kh < g.kh; ++kh) {
    const int64_t ih = oh * g.sh - g.pt + kh * g.dh;
    if (incl ? (ih >= -g.pt && ih < g.ih + pb_h) : (ih >= 0 && ih < g.ih)) ++ch;
  }
  for (int64_t kw = 0; kw < g.kw; ++kw) {
    const int64_t iw = ow * g.sw - g.pl + kw * g.dw;
    if (incl ? (iw >= -g.pl && iw < g.iw + pb_w) : (iw >= 0 && iw < g.iw)) ++cw;
  }
  return ch * cw;
}

template <bool kGrad>
void k_avg_pool(KernelArgs& a) {
  const Tensor& x = a.x(0);  // dy for the gradient
  Shape xs = kGrad ? Shape(to_ints(a.x(1))) : x.shape();
  Window2d g = pool_geometry(a.node, xs);
  Tensor y = kGrad ? alloc(x.dtype(), xs) : alloc(x.dtype(), out_shape(g, g.c, xs.size()));
  float_dispatch(x.dtype(), a.node, [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data_as<T>();
    T* py = y.data_as<T>();
    pool_windows(g, [&](int64_t nc, int64_t oh, int64_t ow, int64_t yo) {
      const int64_t cnt = avg_count(g, a.node, oh, ow, xs);
      T acc = 0;
      for (int64_t kh = 0; kh < g.kh; ++kh) {
        const int64_t ih = oh * g.sh - g.pt + kh * g.dh;
        if (ih < 0 || ih >= g.ih) continue;
        for (int64_t kw = 0; kw < g.kw; ++kw) {
          const int64_t iw = ow * g.sw - g.pl + kw * g.dw;
          if (iw < 0 || iw >= g.iw) continue;
          const int64_t o = (nc * g.ih + ih) * g.iw + iw;
          if (kGrad) py[o] += px[yo] / T(cnt);
          else acc += px[o];
        }
      }
      if (!kGrad) py[yo] = cnt ? acc / T(cnt) : T(0);
    });
  });
  a.out[0] = y;
}

template <bool kGrad>
void k_global_avg_pool(KernelArgs& a) {
  const Tensor& x = a.x(0);
  Shape xs = kGrad ? Shape(to_ints(a.x(1))) : x.shape();
  if (xs.size() < 2) throw KernelError("GlobalAveragePool: rank < 2");
  const int64_t nc = xs[0] * xs[1], plane = numel_of(xs) / std::max<int64_t>(nc, 1);
  Shape ys = {xs[0], xs[1]};
  for (size_t i = 2; i < xs.size(); ++i) ys.push_back(1);
  Tensor y = alloc(x.dtype(), kGrad ? xs : ys);
  float_dispatch(x.dtype(), a.node, [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data_as<T>();
    T* py = y.data_as<T>();
    for (int64_t i = 0; i < nc; ++i) {
      if (kGrad) {
        for (int64_t p = 0; p < plane; ++p) py[i * plane + p] = px[i] / T(plane);
      } else {
        T acc = 0;
        for (int64_t p = 0; p < plane; ++p) acc += px[i * plane + p];
        py[i] = acc / T(plane);
      }
    }
  });
  a.out[0] = y;
}

// MaxPoolGather(dX, X; attrs): the forward-mode tangent of MaxPool, dX read at the first
// maximum of each window of X (the transpose of MaxPoolGrad).
void k_max_pool_gather(KernelArgs& a) {
  const Tensor& dx = a.x(0);
  const Tensor& x = a.x(1);
  Window2d g = pool_geometry(a.node, x.shape());
  Tensor y = alloc(dx.dtype(), out_shape(g, g.c, x.shape().size()));
  float_dispatch(dx.dtype(), a.node, [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data_as<T>();
    pool_windows(g, [&](int64_t nc, int64_t oh, int64_t ow, int64_t yo) {
      int64_t o = window_argmax(g, px, nc, oh, ow);
      y.data_as<T>()[yo] = o >= 0 ? dx.data_as<T>()[o] : T(0);
    });
  });
  a.out[0] = y;
}

}  // namespace

void register_linear_kernels(KernelTable& t) {
  t[":MatMul"] = k_matmul;
  t[":Gemm"] = k_gemm;
  t[":Conv"] = k_conv;
  t[":MaxPool"] = k_max_pool;
  t[":AveragePool"] = k_avg_pool<false>;
  t[":GlobalAveragePool"] = k_global_avg_pool<false>;
  const std::string d = std::string(kTrainDomain) + ":";
  t[d + "MatMulT"] = k_matmul_t;
  t[d + "ConvGradInput"] = k_conv_grad_input;
  t[d + "ConvGradWeight"] = k_conv_grad_weight;
  t[d + "ConvBiasGrad"] = k_conv_bias_grad;
  t[d + "MaxPoolGrad"] = k_max_pool_grad;
  t[d + "MaxPoolGather"] = k_max_pool_gather;
  t[d + "AveragePoolGrad"] = k_avg_pool<true>;
  t[d + "GlobalAveragePoolGrad"] = k_global_avg_pool<true>;
}

}  // namespace tessera::train
