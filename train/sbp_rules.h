// Per-op SBP facts shared by the converter's `--shard` pattern finder (converter/sharding.cc)
// and the training side's placement propagation (train/tensor_parallel.cc), kept in one
// place so that what the converter annotates is what training can run. Header only: the
// converter does not link train/.
#pragma once

#include <set>
#include <string>

namespace tessera::train {

/// ONNX elementwise ops (numpy broadcasting) whose output keeps a Split(d) placement of
/// their operands, the other operands being split alike or broadcast along d (a bias, a
/// scalar constant): x[S(d)] op y[S(d) or B] -> S(d). Megatron-LM's column-parallel
/// activations (Shoeybi et al. 2019, section 3: GeLU applied to each rank's slice of XA).
inline bool keeps_split(const std::string& onnx_op) {
  static const std::set<std::string> k = {"Add", "Sub", "Mul", "Div", "Relu", "Gelu", "Erf", "Tanh", "Sigmoid", "Neg",
                                          "Exp", "Sqrt", "Identity", "LeakyRelu", "Elu", "Selu", "Softplus", "HardSigmoid",
                                          "HardSwish", "Abs", "Log", "Reciprocal", "Clip"};
  return k.count(onnx_op) != 0;
}

}  // namespace tessera::train
