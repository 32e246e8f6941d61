// Transpose (ONNX opset 1, 13, 21): output dim j is input dim perm[j]; perm defaults to
// reversing the dims and must be a permutation of 0..rank-1.
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {
Status infer(InferContext& ctx) {
  const Shape& in = ctx.input(0).shape;
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> perm = ctx.node().attr_ints("perm");
  if (ctx.node().find_attr("perm") == nullptr)
    for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
  if (static_cast<int64_t>(perm.size()) != rank)
    return ctx.error("perm has " + std::to_string(perm.size()) + " entries but the input has rank " + std::to_string(rank));
  std::vector<bool> seen(rank, false);
  Shape out(rank);
  for (int64_t j = 0; j < rank; ++j) {
    if (perm[j] < 0 || perm[j] >= rank || seen[perm[j]])
      return ctx.error("perm " + shape_to_string(perm) + " is not a permutation of 0.." + std::to_string(rank - 1));
    seen[perm[j]] = true;
    out[j] = in[perm[j]];
  }
  ctx.output(0) = {ctx.input(0).dtype, out, nullptr};
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_Transpose = {"Transpose", 1, 1, 1, 1, infer};

}  // namespace tessera
