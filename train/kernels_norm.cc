// Training reference kernels: Softmax/LogSoftmax (ONNX -13 along one axis; -1/-11 coerce
// to 2-D at `axis`), LayerNormalization-17, BatchNormalization-15 (inference and training
// mode), the losses, and their gradient ops (tessera.train):
//   SoftmaxGrad(dY, Y; axis, legacy)      dX = Y * (dY - sum_axis(dY * Y))
//   LogSoftmaxGrad(dY, Y; axis, legacy)   dX = dY - exp(Y) * sum_axis(dY)
//   LayerNormalizationGrad(dY, X, Scale; axis, epsilon) -> dX, dScale, dB
//       xhat = (X - mean) * r, r = 1/sqrt(var + eps) over the normalized dims (size D);
//       dX = r * (g - mean(g) - xhat * mean(g * xhat)), g = dY * Scale
//   BatchNormalizationGrad(dY, X, Scale, mean, var; epsilon, training_mode) -> dX, dScale, dB
//       training: the same formula with statistics over (N, spatial) (Ioffe & Szegedy 2015);
//       inference: dX = dY * Scale / sqrt(var + eps) with the given running statistics
//   SoftmaxCrossEntropy(logits[N,C], labels int[N]; label_smoothing) -> loss[]:
//       loss = mean_n sum_c -q_nc log softmax(logits)_nc, q = (1 - e) onehot + e / C
//   SoftmaxCrossEntropyGrad(dL, logits, labels; label_smoothing): (softmax - q) * dL / N
//   MSELoss(pred, target) -> mean((pred - target)^2); MSELossGrad(dL, pred, target): 2 (p - t) dL / numel
#include <algorithm>

#include "train/kernels.h"

namespace tessera::train {
namespace {

struct AxisSplit {
  int64_t outer, len, inner;
};

AxisSplit axis_split(const Shape& s, int64_t axis_attr, bool legacy) {
  const int64_t r = static_cast<int64_t>(s.size());
  const int64_t axis = norm_axis(axis_attr, r);
  AxisSplit sp{1, 1, 1};
  for (int64_t i = 0; i < axis; ++i) sp.outer *= s[i];
  if (legacy) {
    for (int64_t i = axis; i < r; ++i) sp.len *= s[i];
  } else {
    sp.len = s[axis];
    for (int64_t i = axis + 1; i < r; ++i) sp.inner *= s[i];
  }
  return sp;
}

bool softmax_legacy(const Node& n) {
  if (n.domain == kTrainDomain) return n.attr_i("legacy", 0) != 0;
  return n.opset > 0 && n.opset < 13;
}
int64_t softmax_axis(const Node& n) { return n.attr_i("axis", softmax_legacy(n) ? 1 : -1); }

template <bool kLog>
void k_softmax(KernelArgs& a) {
  const Tensor& x = a.x(0);
  AxisSplit sp = axis_split(x.shape(), softmax_axis(a.node), softmax_legacy(a.node));
  Tensor y = alloc(x.dtype(), x.shape());
  float_dispatch(x.dtype(), a.node, [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data_as<T>();
    T* py = y.data_as<T>();
    for (int64_t o = 0; o < sp.outer; ++o)
      for (int64_t i = 0; i < sp.inner; ++i) {
        const int64_t base = o * sp.len * sp.inner + i;
        T mx = px[base];
        for (int64_t j = 1; j < sp.len; ++j) mx = std::max(mx, px[base + j * sp.inner]);
        T sum = 0;
        for (int64_t j = 0; j < sp.len; ++j) sum += std::exp(px[base + j * sp.inner] - mx);
        const T ls = std::log(sum);
        for (int64_t j = 0; j < sp.len; ++j) {
          const T v = px[base + j * sp.inner] - mx;
          py[base + j * sp.inner] = kLog ? v - ls : std::exp(v) / sum;
        }
      }
  });
  a.out[0] = y;
}

template <bool kLog>
void k_softmax_grad(KernelArgs& a) {
  const Tensor& dy = a.x(0);
  const Tensor& y = a.x(1);
  AxisSplit sp = axis_split(y.shape(), softmax_axis(a.node), softmax_legacy(a.node));
  Tensor dx = alloc(dy.dtype(), y.shape());
  float_dispatch(dy.dtype(), a.node, [&](auto tag) {
    using T = decltype(tag);
    const T* g = dy.data_as<T>();
    const T* py = y.data_as<T>();
    T* o = dx.data_as<T>();
    for (int64_t u = 0; u < sp.outer; ++u)
      for (int64_t i = 0; i < sp.inner; ++i) {
        const int64_t base = u * sp.len * sp.inner + i;
        T s = 0;
        for (int64_t j = 0; j < sp.len; ++j) {
          const int64_t k = base + j * sp.inner;
          s += kLog ? g[k] : g[k] * py[k];
        }
        for (int64_t j = 0; j < sp.len; ++j) {
          const int64_t k = base + j * sp.inner;
          o[k] = kLog ? g[k] - std::exp(py[k]) * s : py[k] * (g[k] - s);
        }
      }
  });
  a.out[0] = dx;
}

// LayerNormalization-17 over dims [axis, rank): Y = (X - mean) / sqrt(var + eps) * Scale + B.
void k_layer_norm(KernelArgs& a) {
  const Tensor& x = a.x(0);
  const int64_t r = static_cast<int64_t>(x.shape().size());
  const int64_t axis = norm_axis(a.node.attr_i("axis", -1), r);
  const double eps = a.node.attr_f("epsilon", 1e-5f);
  int64_t outer = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= x.shape()[i];
  const int64_t d = x.numel() / std::max<int64_t>(outer, 1);
  Shape ss(x.shape().begin(), x.shape().begin() + axis);
  for (int64_t i = axis; i < r; ++i) ss.push_back(1);
  Tensor y = alloc(x.dtype(), x.shape()), mean_t = alloc(x.dtype(), ss), rstd_t = alloc(x.dtype(), ss);
  float_dispatch(x.dtype(), a.node, [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data_as<T>();
    const T* sc = a.x(1).data_as<T>();
    const T* b = a.has(2) ? a.x(2).data_as<T>() : nullptr;
    if (a.x(1).numel() != d) throw KernelError("LayerNormalization: Scale has " + std::to_string(a.x(1).numel()) + " elements, the normalized dims " + std::to_string(d));
    for (int64_t o = 0; o < outer; ++o) {
      T m = 0, v = 0;
      for (int64_t j = 0; j < d; ++j) m += px[o * d + j];
      m /= T(d);
      for (int64_t j = 0; j < d; ++j) v += (px[o * d + j] - m) * (px[o * d + j] - m);
      v /= T(d);
      const T rs = T(1) / std::sqrt(v + T(eps));
      for (int64_t j = 0; j < d; ++j) y.data_as<T>()[o * d + j] = (px[o * d + j] - m) * rs * sc[j] + (b ? b[j] : T(0));
      mean_t.data_as<T>()[o] = m;
      rstd_t.data_as<T>()[o] = rs;
    }
  });
  a.out[0] = y;
  if (a.wants(1)) a.out[1] = mean_t;
  if (a.wants(2)) a.out[2] = rstd_t;
}

void k_layer_norm_grad(KernelArgs& a) {
  const Tensor& dy = a.x(0);
  const Tensor& x = a.x(1);
  const Tensor& scale = a.x(2);
  const int64_t r = static_cast<int64_t>(x.shape().size());
  const int64_t axis = norm_axis(a.node.attr_i("axis", -1), r);
  const double eps = a.node.attr_f("epsilon", 1e-5f);
  int64_t outer = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= x.shape()[i];
  const int64_t d = x.numel() / std::max<int64_t>(outer, 1);
  Tensor dx = alloc(dy.dtype(), x.shape()), ds = alloc(dy.dtype(), scale.shape()), db = alloc(dy.dtype(), scale.shape());
  float_dispatch(dy.dtype(), a.node, [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data_as<T>();
    const T* g = dy.data_as<T>();
    const T* sc = scale.data_as<T>();
    std::vector<T> xh(d), gs(d);
    for (int64_t o = 0; o < outer; ++o) {
      T m = 0, v = 0;
      for (int64_t j = 0; j < d; ++j) m += px[o * d + j];
      m /= T(d);
      for (int64_t j = 0; j < d; ++j) v += (px[o * d + j] - m) * (px[o * d + j] - m);
      v /= T(d);
      const T rs = T(1) / std::sqrt(v + T(eps));
      T mg = 0, mgx = 0;
      for (int64_t j = 0; j < d; ++j) {
        xh[j] = (px[o * d + j] - m) * rs;
        gs[j] = g[o * d + j] * sc[j];
        mg += gs[j];
        mgx += gs[j] * xh[j];
        ds.data_as<T>()[j] += g[o * d + j] * xh[j];
        db.data_as<T>()[j] += g[o * d + j];
      }
      mg /= T(d);
      mgx /= T(d);
      for (int64_t j = 0; j < d; ++j) dx.data_as<T>()[o * d + j] = rs * (gs[j] - mg - xh[j] * mgx);
    }
  });
  a.out[0] = dx;
  if (a.wants(1)) a.out[1] = ds;
  if (a.wants(2)) a.out[2] = db;
}

// Per channel of X[N, C, ...]: mean and 1/sqrt(var + eps), from the batch (training) or
// from the running statistics inputs 3 and 4 (inference).
template <typename T>
void bn_stats(const Tensor& x, const Tensor* rm, const Tensor* rv, bool training, double eps, std::vector<T>& mean,
              std::vector<T>& rstd, std::vector<T>& var) {
  const int64_t n = x.shape()[0], c = x.shape()[1], plane = x.numel() / std::max<int64_t>(n * c, 1);
  mean.assign(c, 0);
  rstd.assign(c, 0);
  var.assign(c, 0);
  const T* px = x.data_as<T>();
  for (int64_t j = 0; j < c; ++j) {
    T m = 0, v = 0;
    if (training) {
      for (int64_t i = 0; i < n; ++i)
        for (int64_t p = 0; p < plane; ++p) m += px[(i * c + j) * plane + p];
      m /= T(n * plane);
      for (int64_t i = 0; i < n; ++i)
        for (int64_t p = 0; p < plane; ++p) {
          T e = px[(i * c + j) * plane + p] - m;
          v += e * e;
        }
      v /= T(n * plane);
    } else {
      m = rm->data_as<T>()[j];
      v = rv->data_as<T>()[j];
    }
    mean[j] = m;
    var[j] = v;
    rstd[j] = T(1) / std::sqrt(v + T(eps));
  }
}

bool bn_training(const Node& n) { return n.attr_i("training_mode", 0) != 0; }

void k_batch_norm(KernelArgs& a) {
  const Tensor& x = a.x(0);
  const bool training = bn_training(a.node);
  const double eps = a.node.attr_f("epsilon", 1e-5f), mom = a.node.attr_f("momentum", 0.9f);
  const int64_t n = x.shape()[0], c = x.shape()[1], plane = x.numel() / std::max<int64_t>(n * c, 1);
  Tensor y = alloc(x.dtype(), x.shape());
  float_dispatch(x.dtype(), a.node, [&](auto tag) {
    using T = decltype(tag);
    std::vector<T> mean, rstd, var;
    bn_stats<T>(x, &a.x(3), &a.x(4), training, eps, mean, rstd, var);
    const T* px = x.data_as<T>();
    const T* sc = a.x(1).data_as<T>();
    const T* b = a.x(2).data_as<T>();
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < c; ++j)
        for (int64_t p = 0; p < plane; ++p) {
          const int64_t k = (i * c + j) * plane + p;
          y.data_as<T>()[k] = (px[k] - mean[j]) * rstd[j] * sc[j] + b[j];
        }
    // BatchNormalization-15 training outputs: running = input_running * momentum + batch * (1 - momentum).
    for (size_t o = 1; o <= 2; ++o) {
      if (!a.wants(o)) continue;
      Tensor t = alloc(x.dtype(), {c});
      const T* run = a.x(o + 2).data_as<T>();
      for (int64_t j = 0; j < c; ++j) t.data_as<T>()[j] = run[j] * T(mom) + (o == 1 ? mean[j] : var[j]) * T(1 - mom);
      a.out[o] = t;
    }
  });
  a.out[0] = y;
}

void k_batch_norm_grad(KernelArgs& a) {
  const Tensor& dy = a.x(0);
  const Tensor& x = a.x(1);
  const bool training = bn_training(a.node);
  const double eps = a.node.attr_f("epsilon", 1e-5f);
  const int64_t n = x.shape()[0], c = x.shape()[1], plane = x.numel() / std::max<int64_t>(n * c, 1);
  Tensor dx = alloc(dy.dtype(), x.shape()), ds = alloc(dy.dtype(), {c}), db = alloc(dy.dtype(), {c});
  float_dispatch(dy.dtype(), a.node, [&](auto tag) {
    using T = decltype(tag);
    std::vector<T> mean, rstd, var;
    bn_stats<T>(x, a.has(3) ? &a.x(3) : nullptr, a.has(4) ? &a.x(4) : nullptr, training, eps, mean, rstd, var);
    const T* px = x.data_as<T>();
    const T* g = dy.data_as<T>();
    const T* sc = a.x(2).data_as<T>();
    const T cnt = T(n * plane);
    for (int64_t j = 0; j < c; ++j) {
      T sg = 0, sgx = 0;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t p = 0; p < plane; ++p) {
          const int64_t k = (i * c + j) * plane + p;
          sg += g[k];
          sgx += g[k] * (px[k] - mean[j]) * rstd[j];
        }
      ds.data_as<T>()[j] = sgx;
      db.data_as<T>()[j] = sg;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t p = 0; p < plane; ++p) {
          const int64_t k = (i * c + j) * plane + p;
          const T xh = (px[k] - mean[j]) * rstd[j];
          dx.data_as<T>()[k] = training ? sc[j] * rstd[j] / cnt * (cnt * g[k] - sg - xh * sgx) : g[k] * sc[j] * rstd[j];
        }
    }
  });
  a.out[0] = dx;
  if (a.wants(1)) a.out[1] = ds;
  if (a.wants(2)) a.out[2] = db;
}

// LogSoftmaxJvp(dX, Y; axis, legacy): the tangent of LogSoftmax, dX - sum_axis(exp(Y) dX).
void k_log_softmax_jvp(KernelArgs& a) {
  const Tensor& dxt = a.x(0);
  const Tensor& y = a.x(1);
  AxisSplit sp = axis_split(y.shape(), softmax_axis(a.node), softmax_legacy(a.node));
  Tensor o = alloc(dxt.dtype(), y.shape());
  float_dispatch(dxt.dtype(), a.node, [&](auto tag) {
    using T = decltype(tag);
    const T* g = dxt.data_as<T>();
    const T* py = y.data_as<T>();
    for (int64_t u = 0; u < sp.outer; ++u)
      for (int64_t i = 0; i < sp.inner; ++i) {
        const int64_t base = u * sp.len * sp.inner + i;
        T s = 0;
        for (int64_t j = 0; j < sp.len; ++j) s += std::exp(py[base + j * sp.inner]) * g[base + j * sp.inner];
        for (int64_t j = 0; j < sp.len; ++j) o.data_as<T>()[base + j * sp.inner] = g[base + j * sp.inner] - s;
      }
  });
  a.out[0] = o;
}

// LayerNormalizationJvp(X, Scale, dX?, dScale?, dB?; axis, epsilon): the tangent of Y,
//   dY = Scale * r (dX - mean(dX) - xhat mean(dX xhat)) + xhat dScale + dB.
void k_layer_norm_jvp(KernelArgs& a) {
  const Tensor& x = a.x(0);
  const Tensor& scale = a.x(1);
  const int64_t r = static_cast<int64_t>(x.shape().size());
  const int64_t axis = norm_axis(a.node.attr_i("axis", -1), r);
  const double eps = a.node.attr_f("epsilon", 1e-5f);
  int64_t outer = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= x.shape()[i];
  const int64_t d = x.numel() / std::max<int64_t>(outer, 1);
  Tensor out = alloc(x.dtype(), x.shape());
  float_dispatch(x.dtype(), a.node, [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data_as<T>();
    const T* sc = scale.data_as<T>();
    const T* tx = a.has(2) ? a.x(2).data_as<T>() : nullptr;
    const T* ts = a.has(3) ? a.x(3).data_as<T>() : nullptr;
    const T* tb = a.has(4) ? a.x(4).data_as<T>() : nullptr;
    std::vector<T> xh(d);
    for (int64_t o = 0; o < outer; ++o) {
      T m = 0, v = 0;
      for (int64_t j = 0; j < d; ++j) m += px[o * d + j];
      m /= T(d);
      for (int64_t j = 0; j < d; ++j) v += (px[o * d + j] - m) * (px[o * d + j] - m);
      v /= T(d);
      const T rs = T(1) / std::sqrt(v + T(eps));
      T mt = 0, mtx = 0;
      for (int64_t j = 0; j < d; ++j) {
        xh[j] = (px[o * d + j] - m) * rs;
        if (tx) { mt += tx[o * d + j]; mtx += tx[o * d + j] * xh[j]; }
      }
      mt /= T(d);
      mtx /= T(d);
      for (int64_t j = 0; j < d; ++j) {
        T t = tx ? sc[j] * rs * (tx[o * d + j] - mt - xh[j] * mtx) : T(0);
        if (ts) t += xh[j] * ts[j];
        if (tb) t += tb[j];
        out.data_as<T>()[o * d + j] = t;
      }
    }
  });
  a.out[0] = out;
}

// BatchNormalizationJvp(X, Scale, mean, var, dX?, dScale?, dB?; epsilon, training_mode):
// the tangent of Y; in training mode the batch statistics move with dX:
//   dY = Scale r (dX - mean_c(dX) - xhat mean_c(dX xhat)) + xhat dScale + dB,
// in inference mode dY = Scale r dX + xhat dScale + dB.
void k_batch_norm_jvp(KernelArgs& a) {
  const Tensor& x = a.x(0);
  const bool training = bn_training(a.node);
  const double eps = a.node.attr_f("epsilon", 1e-5f);
  const int64_t n = x.shape()[0], c = x.shape()[1], plane = x.numel() / std::max<int64_t>(n * c, 1);
  Tensor out = alloc(x.dtype(), x.shape());
  float_dispatch(x.dtype(), a.node, [&](auto tag) {
    using T = decltype(tag);
    std::vector<T> mean, rstd, var;
    bn_stats<T>(x, a.has(2) ? &a.x(2) : nullptr, a.has(3) ? &a.x(3) : nullptr, training, eps, mean, rstd, var);
    const T* px = x.data_as<T>();
    const T* sc = a.x(1).data_as<T>();
    const T* tx = a.has(4) ? a.x(4).data_as<T>() : nullptr;
    const T* ts = a.has(5) ? a.x(5).data_as<T>() : nullptr;
    const T* tb = a.has(6) ? a.x(6).data_as<T>() : nullptr;
    const T cnt = T(n * plane);
    for (int64_t j = 0; j < c; ++j) {
      T mt = 0, mtx = 0;
      if (tx && training) {
        for (int64_t i = 0; i < n; ++i)
          for (int64_t p = 0; p < plane; ++p) {
            const int64_t k = (i * c + j) * plane + p;
            mt += tx[k];
            mtx += tx[k] * (px[k] - mean[j]) * rstd[j];
          }
        mt /= cnt;
        mtx /= cnt;
      }
      for (int64_t i = 0; i < n; ++i)
        for (int64_t p = 0; p < plane; ++p) {
          const int64_t k = (i * c + j) * plane + p;
          const T xh = (px[k] - mean[j]) * rstd[j];
          T t = tx ? sc[j] * rstd[j] * (tx[k] - mt - xh * mtx) : T(0);
          if (ts) t += xh * ts[j];
          if (tb) t += tb[j];
          out.data_as<T>()[k] = t;
        }
    }
  });
  a.out[0] = out;
}

// ---- losses ----
template <bool kGrad>
void k_softmax_ce(KernelArgs& a) {
  const Tensor& logits = a.x(kGrad ? 1 : 0);
  std::vector<int64_t> labels = to_ints(a.x(kGrad ? 2 : 1));
  if (logits.shape().size() != 2) throw KernelError("SoftmaxCrossEntropy: logits must be [N, C], got " + shape_to_string(logits.shape()));
  const int64_t n = logits.shape()[0], c = logits.shape()[1];
  if (static_cast<int64_t>(labels.size()) != n) throw KernelError("SoftmaxCrossEntropy: " + std::to_string(labels.size()) + " labels for " + std::to_string(n) + " rows");
  const double eps = a.node.attr_f("label_smoothing", 0.0f);
  float_dispatch(logits.dtype(), a.node, [&](auto tag) {
    using T = decltype(tag);
    const T* z = logits.data_as<T>();
    Tensor out = kGrad ? alloc(logits.dtype(), logits.shape()) : alloc(logits.dtype(), {});
    const T dl = kGrad ? a.x(0).data_as<T>()[0] : T(1);
    T loss = 0;
    for (int64_t i = 0; i < n; ++i) {
      if (labels[i] < 0 || labels[i] >= c) throw KernelError("SoftmaxCrossEntropy: label " + std::to_string(labels[i]) + " outside [0, " + std::to_string(c) + ")");
      T mx = z[i * c];
      for (int64_t j = 1; j < c; ++j) mx = std::max(mx, z[i * c + j]);
      T s = 0;
      for (int64_t j = 0; j < c; ++j) s += std::exp(z[i * c + j] - mx);
      const T lse = mx + std::log(s);
      for (int64_t j = 0; j < c; ++j) {
        const T q = T((j == labels[i] ? 1 - eps : 0) + eps / c);
        if (kGrad) out.data_as<T>()[i * c + j] = (std::exp(z[i * c + j] - lse) - q) * dl / T(n);
        else loss -= q * (z[i * c + j] - lse);
      }
    }
    if (!kGrad) out.data_as<T>()[0] = loss / T(n);
    a.out[0] = out;
  });
}

template <bool kGrad>
void k_mse(KernelArgs& a) {
  const Tensor& p = a.x(kGrad ? 1 : 0);
  const Tensor& t = a.x(kGrad ? 2 : 1);
  if (p.shape() != t.shape()) throw KernelError("MSELoss: prediction " + shape_to_string(p.shape()) + " and target " + shape_to_string(t.shape()) + " differ");
  float_dispatch(p.dtype(), a.node, [&](auto tag) {
    using T = decltype(tag);
    const T* pp = p.data_as<T>();
    const T* pt = t.data_as<T>();
    const T n = T(std::max<int64_t>(p.numel(), 1));
    if (kGrad) {
      const T dl = a.x(0).data_as<T>()[0];
      Tensor g = alloc(p.dtype(), p.shape());
      for (int64_t i = 0; i < p.numel(); ++i) g.data_as<T>()[i] = T(2) * (pp[i] - pt[i]) * dl / n;
      a.out[0] = g;
    } else {
      Tensor l = alloc(p.dtype(), {});
      T s = 0;
      for (int64_t i = 0; i < p.numel(); ++i) s += (pp[i] - pt[i]) * (pp[i] - pt[i]);
      l.data_as<T>()[0] = s / n;
      a.out[0] = l;
    }
  });
}

}  // namespace

void register_norm_kernels(KernelTable& t) {
  t[":Softmax"] = k_softmax<false>;
  t[":LogSoftmax"] = k_softmax<true>;
  t[":LayerNormalization"] = k_layer_norm;
  t[":BatchNormalization"] = k_batch_norm;
  const std::string d = std::string(kTrainDomain) + ":";
  t[d + "SoftmaxGrad"] = k_softmax_grad<false>;
  t[d + "LogSoftmaxGrad"] = k_softmax_grad<true>;
  t[d + "LayerNormalizationGrad"] = k_layer_norm_grad;
  t[d + "LogSoftmaxJvp"] = k_log_softmax_jvp;
  t[d + "LayerNormalizationJvp"] = k_layer_norm_jvp;
  t[d + "BatchNormalizationJvp"] = k_batch_norm_jvp;
  t[d + "BatchNormalizationGrad"] = k_batch_norm_grad;
  t[d + "SoftmaxCrossEntropy"] = k_softmax_ce<false>;
  t[d + "SoftmaxCrossEntropyGrad"] = k_softmax_ce<true>;
  t[d + "MSELoss"] = k_mse<false>;
  t[d + "MSELossGrad"] = k_mse<true>;
}

}  // namespace tessera::train
