// Reverse-mode automatic differentiation as a graph transform (train/autodiff.cc), and
// forward mode (Jacobian-vector products) on top of it.
//
// append_backward(g, loss, wrt) appends to `g` the nodes that compute, for a cotangent `w`
// of the value `loss` (fed as the new graph input `<loss>_grad`, same shape and dtype as
// `loss`; for a scalar loss feed 1), the vector-Jacobian products
//     d(wrt_i) = J_i^T w,   J_i = d loss / d wrt_i.
// Nodes are visited in reverse topological order; each op's gradient rule (one per op, the
// table of train/grad_rules.h, rules in train/grad_rules_*.cc) emits backward nodes in ONNX
// ops or in ops of the "tessera.train" domain. Where a value feeds several nodes its
// gradient contributions are summed (Add); where an elementwise op broadcast an operand the
// gradient is summed back to the operand's shape (tessera.train.ReduceSumTo). Rules read
// only what their math needs (e.g. Relu's output, not its input), so the interpreter frees
// the other forward activations during the forward pass.
//
// Method: the adjoint (reverse accumulation) method, as in Griewank & Walther, "Evaluating
// Derivatives" (2008), ch. 3; per-op rules follow MNN's one-gradient-per-op layout.
#pragma once

#include <string>
#include <vector>

#include "tessera/graph.h"
#include "tessera/status.h"

namespace tessera::train {

struct BackwardInfo {
  std::string seed;                // graph input carrying the cotangent of `loss`
  std::vector<std::string> grads;  // per wrt value: the value holding its gradient
  size_t forward_nodes = 0;        // g.nodes[0, forward_nodes) are the forward graph
};

/// Appends the backward graph of `loss` with respect to the values `wrt` (initializers or
/// graph inputs of float dtype). A wrt value that `loss` does not depend on gets a gradient
/// of zeros (tessera.train.ZerosLike). Errors: kNotFound for an unknown value name;
/// kInvalidArgument for a non-float wrt value; kUnimplemented naming the first node on a
/// path from `wrt` to `loss` whose op has no gradient rule ("Foo 'node': no gradient rule").
Result<BackwardInfo> append_backward(Graph& g, const std::string& loss, const std::vector<std::string>& wrt);

/// Names of the forward node outputs (g.nodes[0, forward_nodes)) that backward nodes read:
/// the activations a training step keeps alive from the forward to the backward pass.
std::vector<std::string> saved_activations(const Graph& g, size_t forward_nodes);

/// The op types that have a gradient rule ("domain:op" for non-ONNX ops), sorted.
std::vector<std::string> differentiable_ops();

struct JvpInfo {
  std::vector<std::string> tangent_inputs;  // per wrt: the new graph input carrying its tangent v_i
  std::string output_tangent;               // the value holding J v for `output`
};

/// Forward mode: appends nodes computing the Jacobian-vector product J v of `output` with
/// respect to `wrt`, for tangents v fed as the new graph inputs `<wrt>_tangent` (same shape
/// and dtype as the wrt value). Nodes are visited in topological order; each op's tangent
/// rule (one per op, train/jvp_rules.cc) maps input tangents to output tangents, mostly by
/// reusing the op itself (linear ops), its backward ops (elementwise derivatives) or a few
/// tessera.train ops (MaxPoolGather, LogSoftmaxJvp, LayerNormalizationJvp,
/// BatchNormalizationJvp). Method: forward accumulation (Griewank & Walther 2008, ch. 3).
/// Errors: as append_backward; kUnimplemented naming the first node on the path whose op has
/// no tangent rule.
Result<JvpInfo> append_jvp(Graph& g, const std::string& output, const std::vector<std::string>& wrt);

}  // namespace tessera::train
