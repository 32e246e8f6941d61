// Optimizers, learning-rate schedules and gradient clipping for float32 parameters.
//
// SGD follows torch.optim.SGD (PyTorch 2.x): g = grad + weight_decay * p; with momentum mu,
//   b = g on the first step, else b = mu * b + (1 - dampening) * g;
//   g = g + mu * b (Nesterov) or g = b; p = p - lr * g.
// AdamW follows Loshchilov & Hutter, "Decoupled Weight Decay Regularization" (ICLR 2019), as
// torch.optim.AdamW computes it: p = p * (1 - lr * weight_decay);
//   m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2; t = step number from 1;
//   p = p - lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps).
// Arithmetic is in double per element, stored as float32.
#pragma once

#include <string>
#include <vector>

#include "tessera/status.h"
#include "tessera/tensor.h"

namespace tessera::train {

struct OptimizerConfig {
  std::string kind = "sgd";   // "sgd" | "adamw"
  double momentum = 0;        // SGD
  double dampening = 0;       // SGD
  bool nesterov = false;      // SGD (needs momentum > 0, dampening = 0)
  double weight_decay = 0;    // SGD: L2 added to the gradient; AdamW: decoupled
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;  // AdamW
};

/// A trainable parameter: its name in the graph, its value (float32, owned, updated in
/// place) and the optimizer's state tensors (same shape), by state name.
struct Param {
  std::string name;
  Tensor value;
  std::vector<std::pair<std::string, Tensor>> state;  // "momentum_buffer" | "exp_avg", "exp_avg_sq"
};

/// Checks the config: kind known, rates in range. Errors (kInvalidArgument) name the field.
Status validate(const OptimizerConfig& c);

/// One optimizer step over every parameter. `grads[i]` is the float32 gradient of
/// params[i] (same shape); `step` counts completed steps before this one (0 on the first).
/// Creates the state tensors on the first step. Errors: kInvalidArgument on a shape or
/// dtype mismatch naming the parameter.
Status optimizer_step(const OptimizerConfig& c, std::vector<Param>& params, const std::vector<Tensor>& grads, double lr,
                      int64_t step);

/// Checks the optimizer state a checkpoint gives one parameter (`states`: its state names)
/// against what optimizer_step keeps for `c.kind`: SGD "momentum_buffer"; AdamW "exp_avg"
/// and "exp_avg_sq", both or neither (a parameter without state starts from zeros, as on
/// the first step). Errors (kInvalidArgument) name the parameter and the state: a state
/// this optimizer does not keep (another optimizer's, or a misnamed one) would otherwise be
/// carried along unused while the optimizer started its own from zeros.
Status check_resumed_state(const OptimizerConfig& c, const std::string& param, const std::vector<std::string>& states);

/// Scales all gradients by min(1, max_norm / (norm + 1e-6)) where norm is the global L2 norm
/// of all of them together (torch.nn.utils.clip_grad_norm_). Returns the norm before
/// clipping. max_norm <= 0: no clipping.
double clip_grad_global_norm(std::vector<Tensor>& grads, double max_norm);

/// Learning rate at `step` (0-based) of `total` steps: linear warm-up from lr/warmup to lr
/// over the first `warmup` steps, then cosine decay to min_lr (Loshchilov & Hutter, SGDR,
/// ICLR 2017) when cosine is set, else constant.
double lr_at(double lr, int64_t step, int64_t total, int64_t warmup, bool cosine, double min_lr = 0);

}  // namespace tessera::train
