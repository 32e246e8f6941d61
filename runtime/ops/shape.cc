// Shape (ONNX opset 1, 13, 15, 19, 21) and Size (1, 13, 19, 21). Both outputs are known
// from the input shape, so inference sets them as plan-time constants.
//   Shape: int64 [end - start], the input dims[start:end]; start (default 0) and end
//   (default rank) from opset 15, negative ones add the rank, then clamp to [0, rank].
//   Size: int64 scalar, the element count.
#include <algorithm>
#include <cstring>

#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {

Status infer_shape(InferContext& ctx) {
  const Shape& in = ctx.input(0).shape;
  const int64_t rank = static_cast<int64_t>(in.size());
  int64_t start = 0, end = rank;
  if (ctx.node().opset >= 15) {
    start = ctx.node().attr_i("start", 0);
    end = ctx.node().attr_i("end", rank);
  }
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, 0, rank);
  const int64_t n = std::max<int64_t>(end - start, 0);
  TSR_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(DType::kInt64, {n}));
  for (int64_t i = 0; i < n; ++i) t.data_as<int64_t>()[i] = in[start + i];
  ctx.output(0) = {DType::kInt64, {n}, std::make_shared<const Tensor>(std::move(t))};
  return Status::ok();
}

Status infer_size(InferContext& ctx) {
  TSR_ASSIGN_OR_RETURN(int64_t numel, shape_numel(ctx.input(0).shape));
  TSR_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(DType::kInt64, {}));
  t.data_as<int64_t>()[0] = numel;
  ctx.output(0) = {DType::kInt64, {}, std::make_shared<const Tensor>(std::move(t))};
  return Status::ok();
}

}  // namespace

const OpSchema kSchema_Shape = {"Shape", 1, 1, 1, 1, infer_shape};
const OpSchema kSchema_Size = {"Size", 1, 1, 1, 1, infer_size};

}  // namespace tessera
