#include "train/optim.h"

#include <algorithm>
#include <cmath>

namespace tessera::train {

Status validate(const OptimizerConfig& c) {
  if (c.kind != "sgd" && c.kind != "adamw") return invalid_argument("optimizer '" + c.kind + "': expected sgd or adamw");
  if (c.momentum < 0 || c.momentum >= 1) return invalid_argument("momentum must be in [0, 1)");
  if (c.nesterov && (c.momentum <= 0 || c.dampening != 0)) return invalid_argument("Nesterov momentum needs momentum > 0 and dampening 0");
  if (c.weight_decay < 0) return invalid_argument("weight decay must be >= 0");
  if (c.beta1 < 0 || c.beta1 >= 1 || c.beta2 < 0 || c.beta2 >= 1) return invalid_argument("AdamW betas must be in [0, 1)");
  if (c.eps <= 0) return invalid_argument("AdamW eps must be > 0");
  return Status::ok();
}

Status check_resumed_state(const OptimizerConfig& c, const std::string& param, const std::vector<std::string>& states) {
  const std::vector<std::string> kept =
      c.kind == "adamw" ? std::vector<std::string>{"exp_avg", "exp_avg_sq"} : std::vector<std::string>{"momentum_buffer"};
  std::string list;
  for (const std::string& k : kept) list += (list.empty() ? "'" : ", '") + k + "'";
  int found = 0;
  for (const std::string& st : states) {
    if (std::find(kept.begin(), kept.end(), st) == kept.end())
      return invalid_argument("checkpoint: optimizer state '" + param + "/" + st + "' is not one that " + c.kind + " keeps (" + list +
                              "); the checkpoint is of another optimizer or corrupt");
    if (std::count(states.begin(), states.end(), st) > 1)
      return invalid_argument("checkpoint: optimizer state '" + param + "/" + st + "' is given more than once");
    ++found;
  }
  if (found != 0 && found != static_cast<int>(kept.size()))
    return invalid_argument("checkpoint: parameter '" + param + "' has " + std::to_string(found) + " of the " + std::to_string(kept.size()) +
                            " optimizer states " + c.kind + " keeps (" + list + "); the checkpoint is incomplete");
  return Status::ok();
}

namespace {
Tensor& state_of(Param& p, const std::string& name) {
  for (auto& [n, t] : p.state)
    if (n == name) return t;
  p.state.push_back({name, Tensor::allocate(DType::kFloat32, p.value.shape()).value()});
  return p.state.back().second;
}
}  // namespace

Status optimizer_step(const OptimizerConfig& c, std::vector<Param>& params, const std::vector<Tensor>& grads, double lr,
                      int64_t step) {
  if (grads.size() != params.size()) return invalid_argument("optimizer: " + std::to_string(grads.size()) + " gradients for " + std::to_string(params.size()) + " parameters");
  for (size_t i = 0; i < params.size(); ++i) {
    Param& p = params[i];
    const Tensor& g = grads[i];
    if (g.dtype() != DType::kFloat32 || p.value.dtype() != DType::kFloat32 || g.shape() != p.value.shape())
      return invalid_argument("optimizer: gradient " + g.describe() + " does not match parameter '" + p.name + "' " + p.value.describe());
    float* w = p.value.data_as<float>();
    const float* gd = g.data_as<float>();
    const int64_t n = p.value.numel();
    if (c.kind == "sgd") {
      float* buf = c.momentum > 0 ? state_of(p, "momentum_buffer").data_as<float>() : nullptr;
      for (int64_t k = 0; k < n; ++k) {
        double gv = static_cast<double>(gd[k]) + c.weight_decay * w[k];
        if (buf) {
          double b = step == 0 ? gv : c.momentum * buf[k] + (1 - c.dampening) * gv;
          buf[k] = static_cast<float>(b);
          gv = c.nesterov ? gv + c.momentum * b : b;
        }
        w[k] = static_cast<float>(w[k] - lr * gv);
      }
    } else {
      float* m = state_of(p, "exp_avg").data_as<float>();
      float* v = state_of(p, "exp_avg_sq").data_as<float>();
      const double t = static_cast<double>(step + 1);
      const double bc1 = 1 - std::pow(c.beta1, t), bc2 = 1 - std::pow(c.beta2, t);
      for (int64_t k = 0; k < n; ++k) {
        double wv = w[k] * (1 - lr * c.weight_decay);
        const double gv = gd[k];
        const double mv = c.beta1 * m[k] + (1 - c.beta1) * gv;
        const double vv = c.beta2 * v[k] + (1 - c.beta2) * gv * gv;
        m[k] = static_cast<float>(mv);
        v[k] = static_cast<float>(vv);
        wv -= lr * (mv / bc1) / (std::sqrt(vv / bc2) + c.eps);
        w[k] = static_cast<float>(wv);
      }
    }
  }
  return Status::ok();
}

double clip_grad_global_norm(std::vector<Tensor>& grads, double max_norm) {
  double ss = 0;
  for (const Tensor& g : grads)
    for (int64_t k = 0; k < g.numel(); ++k) ss += static_cast<double>(g.data_as<float>()[k]) * g.data_as<float>()[k];
  const double norm = std::sqrt(ss);
  if (max_norm > 0 && norm > max_norm) {
    const double s = max_norm / (norm + 1e-6);
    for (Tensor& g : grads)
      for (int64_t k = 0; k < g.numel(); ++k) g.data_as<float>()[k] = static_cast<float>(g.data_as<float>()[k] * s);
  }
  return norm;
}

double lr_at(double lr, int64_t step, int64_t total, int64_t warmup, bool cosine, double min_lr) {
  if (warmup > 0 && step < warmup) return lr * static_cast<double>(step + 1) / static_cast<double>(warmup);
  if (!cosine || total <= warmup) return lr;
  const double t = std::min(1.0, static_cast<double>(step - warmup) / static_cast<double>(std::max<int64_t>(1, total - warmup)));
  return min_lr + 0.5 * (lr - min_lr) * (1 + std::cos(M_PI * t));
}

}  // namespace tessera::train
