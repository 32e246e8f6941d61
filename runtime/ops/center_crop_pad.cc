// CenterCropPad (ONNX opset 18, a function op the converter's ONNX 1.12 cannot expand):
// crops or zero-pads input_data so that dim axes[i] becomes shape[i], centered:
//   shape[i] < dim: keep [ (dim - shape[i]) / 2, ... ) (the odd element is dropped at the end)
//   shape[i] > dim: place the input at offset (shape[i] - dim) / 2 in zeros (the odd zero at
//   the end). Integer division rounds down.
// `shape` (int32 or int64, 1-D) must be known at plan time; attribute axes (default: all
// axes, in order; negative ones count from the end; no repeats) must have shape's length.
// Any dtype.
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {
Status infer(InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  if (dtype_size(x.dtype) == 0 || x.dtype == DType::kString)
    return ctx.unsupported(std::string("dtype ") + dtype_name(x.dtype) + " is not supported");
  const DType st = ctx.input(1).dtype;
  if (st != DType::kInt64 && st != DType::kInt32)
    return ctx.error(std::string("shape has dtype ") + dtype_name(st) + "; expected int32 or int64");
  if (ctx.input(1).shape.size() != 1) return ctx.error("shape must be 1-D, got " + shape_to_string(ctx.input(1).shape));
  TSR_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ctx.const_ints(1));
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  std::vector<int64_t> axes;
  if (ctx.node().find_attr("axes")) {
    for (int64_t a : ctx.node().attr_ints("axes")) {
      TSR_ASSIGN_OR_RETURN(int64_t ax, normalize_axis(a, rank, ctx.node()));
      for (int64_t seen : axes)
        if (seen == ax) return ctx.error("axes repeats axis " + std::to_string(a));
      axes.push_back(ax);
    }
  } else {
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  if (shape.size() != axes.size())
    return ctx.error("shape has " + std::to_string(shape.size()) + " values but there are " + std::to_string(axes.size()) +
                     " axes (input " + shape_to_string(x.shape) + ")");
  Shape out = x.shape;
  for (size_t i = 0; i < axes.size(); ++i) {
    if (shape[i] < 0 || shape[i] > (int64_t{1} << 40))
      return ctx.error("shape value " + std::to_string(shape[i]) + " for axis " + std::to_string(axes[i]) + " is out of range");
    out[static_cast<size_t>(axes[i])] = shape[i];
  }
  ctx.output(0) = {x.dtype, out, nullptr};
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_CenterCropPad = {"CenterCropPad", 2, 2, 1, 1, infer};

}  // namespace tessera
