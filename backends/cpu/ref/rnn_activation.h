// The activation functions of the ONNX recurrent ops (LSTM, GRU, RNN): parsed from the
// `activations`, `activation_alpha` and `activation_beta` attributes once at compile time.
#pragma once

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <vector>

#include "tessera/graph.h"
#include "tessera/status.h"

namespace tessera::ref {

/// One activation with its alpha/beta (ONNX operator semantics of the same name).
struct RnnActivation {
  enum Kind { kSigmoid, kTanh, kRelu, kHardSigmoid, kLeakyRelu, kElu, kSoftsign, kSoftplus, kAffine, kScaledTanh, kThresholdedRelu };
  Kind kind = kSigmoid;
  float alpha = 0, beta = 0;

  float operator()(float x) const {
    switch (kind) {
      case kSigmoid: return 1.f / (1.f + std::exp(-x));
      case kTanh: return std::tanh(x);
      case kRelu: return std::max(x, 0.f);
      case kHardSigmoid: return std::max(0.f, std::min(1.f, alpha * x + beta));
      case kLeakyRelu: return x >= 0 ? x : alpha * x;
      case kElu: return x >= 0 ? x : alpha * (std::exp(x) - 1.f);
      case kSoftsign: return x / (1.f + std::abs(x));
      case kSoftplus: return std::log1p(std::exp(x));
      case kAffine: return alpha * x + beta;
      case kScaledTanh: return alpha * std::tanh(beta * x);
      case kThresholdedRelu: return x > alpha ? x : 0.f;
    }
    return x;
  }
};

/// Parses `activations` (names case-insensitive; `defaults` when the attribute is absent),
/// taking alpha/beta values from activation_alpha/activation_beta in order, one per
/// activation that uses them, with the ONNX operator defaults when the lists run out.
/// Errors (naming the node) on a wrong count or an unknown name.
inline Result<std::vector<RnnActivation>> parse_rnn_activations(const Node& node, const std::vector<std::string>& defaults) {
  std::vector<std::string> names = defaults;
  if (const Attribute* a = node.find_attr("activations")) {
    if (a->type != AttrType::kStrings) return invalid_argument(node.describe() + ": activations must be a list of strings");
    names = a->strings;
  }
  if (names.size() != defaults.size())
    return invalid_argument(node.describe() + ": activations has " + std::to_string(names.size()) + " entries; expected " +
                            std::to_string(defaults.size()));
  const std::vector<float> alphas = node.attr_floats("activation_alpha"), betas = node.attr_floats("activation_beta");
  size_t ai = 0, bi = 0;
  auto take = [](const std::vector<float>& v, size_t& i, float def) { return i < v.size() ? v[i++] : def; };
  std::vector<RnnActivation> out;
  for (const std::string& raw : names) {
    std::string n = raw;
    std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    RnnActivation f;
    if (n == "sigmoid") f.kind = RnnActivation::kSigmoid;
    else if (n == "tanh") f.kind = RnnActivation::kTanh;
    else if (n == "relu") f.kind = RnnActivation::kRelu;
    else if (n == "hardsigmoid") { f.kind = RnnActivation::kHardSigmoid; f.alpha = take(alphas, ai, 0.2f); f.beta = take(betas, bi, 0.5f); }
    else if (n == "leakyrelu") { f.kind = RnnActivation::kLeakyRelu; f.alpha = take(alphas, ai, 0.01f); }
    else if (n == "elu") { f.kind = RnnActivation::kElu; f.alpha = take(alphas, ai, 1.f); }
    else if (n == "softsign") f.kind = RnnActivation::kSoftsign;
    else if (n == "softplus") f.kind = RnnActivation::kSoftplus;
    else if (n == "affine") { f.kind = RnnActivation::kAffine; f.alpha = take(alphas, ai, 1.f); f.beta = take(betas, bi, 0.f); }
    else if (n == "scaledtanh") { f.kind = RnnActivation::kScaledTanh; f.alpha = take(alphas, ai, 1.f); f.beta = take(betas, bi, 1.f); }
    else if (n == "thresholdedrelu") { f.kind = RnnActivation::kThresholdedRelu; f.alpha = take(alphas, ai, 1.f); }
    else return unimplemented(node.describe() + ": activation '" + raw + "' is not supported");
    out.push_back(f);
  }
  return out;
}

}  // namespace tessera::ref
