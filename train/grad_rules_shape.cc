// Gradient rules of the shape and indexing ops: Reshape-14, Flatten-13, Squeeze/Unsqueeze
// (-13 and -1), Transpose-13, Concat-13, Slice (-13 and -1), Split, Gather-13.
#include <numeric>

#include "train/grad_rules.h"

namespace tessera::train {
namespace {

using A = GradContext;

// Views: dX = dY viewed with X's shape.
Status grad_view(GradContext& c) {
  c.set(0, c.add("ReshapeTo", {c.dy(0), c.shape(c.in(0))}));
  return Status::ok();
}

// Transpose-13: dX = Transpose(dY, perm^-1) (no perm: the reversal, its own inverse).
Status grad_transpose(GradContext& c) {
  std::vector<int64_t> perm = c.node().attr_ints("perm");
  std::vector<Attribute> at;
  if (!perm.empty()) {
    std::vector<int64_t> inv(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) {
      int64_t p = perm[i] < 0 ? perm[i] + static_cast<int64_t>(perm.size()) : perm[i];
      if (p < 0 || p >= static_cast<int64_t>(perm.size())) return invalid_argument("Transpose: bad perm");
      inv[p] = static_cast<int64_t>(i);
    }
    at.push_back(A::attr_ints("perm", inv));
  }
  c.set(0, c.onnx("Transpose", {c.dy(0)}, at));
  return Status::ok();
}

// Concat-13: dX_i = the slab of dY that X_i filled.
Status grad_concat(GradContext& c) {
  std::vector<int> ins = {c.dy(0)};
  for (int v : c.node().inputs) ins.push_back(c.shape(v));
  std::vector<int> o = c.add_n("ConcatGrad", ins, c.node().inputs.size(), c.attrs());
  for (size_t i = 0; i < o.size(); ++i) c.set(i, o[i]);
  return Status::ok();
}

// Slice: dX = zeros(X) with dY written where Slice read.
Status grad_slice(GradContext& c) {
  const bool legacy = c.node().opset > 0 && c.node().opset < 10;
  std::vector<int> ins = {c.dy(0), c.shape(c.in(0))};
  for (size_t i = 1; !legacy && i < c.node().inputs.size(); ++i) ins.push_back(c.in(i));
  std::vector<Attribute> at = c.attrs();
  at.push_back(A::attr_i("legacy", legacy ? 1 : 0));
  c.set(0, c.add("SliceGrad", ins, at));
  return Status::ok();
}

// Split: dX = Concat(dY_0, ..., dY_{n-1}) along axis, zeros for outputs without a cotangent.
Status grad_split(GradContext& c) {
  std::vector<int> parts;
  for (size_t i = 0; i < c.node().outputs.size(); ++i) {
    if (c.out(i) < 0) return unimplemented("Split with an omitted output");
    parts.push_back(c.dy(i) >= 0 ? c.dy(i) : c.add("ZerosLike", {c.out(i)}));
  }
  c.set(0, c.onnx("Concat", parts, {A::attr_i("axis", c.node().attr_i("axis", 0))}));
  return Status::ok();
}

// Gather-13 (embeddings): dData = scatter-add of dY rows at the indices.
Status grad_gather(GradContext& c) {
  c.set(0, c.add("GatherGrad", {c.dy(0), c.in(1), c.shape(c.in(0))}, c.attrs()));
  return Status::ok();
}

}  // namespace

void register_shape_grads(GradRuleTable& t) {
  t[":Reshape"] = grad_view;
  t[":Flatten"] = grad_view;
  t[":Squeeze"] = grad_view;
  t[":Unsqueeze"] = grad_view;
  t[":Transpose"] = grad_transpose;
  t[":Concat"] = grad_concat;
  t[":Slice"] = grad_slice;
  t[":Split"] = grad_split;
  t[":Gather"] = grad_gather;
}

}  // namespace tessera::train
