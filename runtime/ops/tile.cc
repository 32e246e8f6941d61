// Tile (ONNX opset 6, 13): output dim a = input dim a * repeats[a]; `repeats` is int64
// 1-D with one non-negative entry per input dim, known at plan time.
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {
Status infer(InferContext& ctx) {
  TSR_ASSIGN_OR_RETURN(std::vector<int64_t> repeats, ctx.const_ints(1));
  const Shape& in = ctx.input(0).shape;
  if (repeats.size() != in.size())
    return ctx.error("repeats has " + std::to_string(repeats.size()) + " entries but the input has rank " +
                     std::to_string(in.size()));
  Shape out(in.size());
  for (size_t a = 0; a < in.size(); ++a) {
    if (repeats[a] < 0) return ctx.error("repeats " + shape_to_string(repeats) + " has a negative entry");
    if (repeats[a] != 0 && in[a] > kMaxTensorBytes / repeats[a]) return ctx.error("tiled shape is too large");
    out[a] = in[a] * repeats[a];
  }
  ctx.output(0) = {ctx.input(0).dtype, out, nullptr};
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_Tile = {"Tile", 2, 2, 1, 1, infer};

}  // namespace tessera
