// RoiAlign (ONNX opset 10, 16, 22): X [N, C, H, W] (float or double), rois [R, 4] of
// (x1, y1, x2, y2) in X's dtype, batch_indices int64 [R] -> Y [R, C, output_height,
// output_width]. Attributes: mode avg|max (default avg), output_height and output_width
// (>= 1, default 1), sampling_ratio (0..1024, default 0 = adaptive), spatial_scale (default 1),
// coordinate_transformation_mode half_pixel|output_half_pixel (opset 16; default half_pixel
// from opset 16 on, output_half_pixel, the only behaviour of opset 10, before). The math is
// in the kernel (backends/cpu/ref/roi_align.cc); batch_indices outside [0, N) are an error
// when the kernel runs.
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {
Status infer(InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  const ValueInfo& rois = ctx.input(1);
  const ValueInfo& bi = ctx.input(2);
  const Node& n = ctx.node();
  if (x.dtype != DType::kFloat32 && x.dtype != DType::kFloat64)
    return ctx.unsupported(std::string("X dtype ") + dtype_name(x.dtype) + " is not supported (float, double)");
  if (rois.dtype != x.dtype) return ctx.error("rois must have X's dtype " + std::string(dtype_name(x.dtype)));
  if (bi.dtype != DType::kInt64 && bi.dtype != DType::kInt32)
    return ctx.error(std::string("batch_indices must be int64, got ") + dtype_name(bi.dtype));
  if (x.shape.size() != 4 || x.shape[2] < 1 || x.shape[3] < 1)
    return ctx.error("X must be [N, C, H, W] with H, W >= 1, got " + shape_to_string(x.shape));
  if (rois.shape.size() != 2 || rois.shape[1] != 4)
    return ctx.error("rois must be [num_rois, 4], got " + shape_to_string(rois.shape));
  if (bi.shape.size() != 1 || bi.shape[0] != rois.shape[0])
    return ctx.error("batch_indices must be [num_rois] = [" + std::to_string(rois.shape[0]) + "], got " +
                     shape_to_string(bi.shape));
  const std::string mode = n.attr_s("mode", "avg");
  if (mode != "avg" && mode != "max") return ctx.error("mode '" + mode + "' is not avg or max");
  const std::string ctm = n.attr_s("coordinate_transformation_mode", n.opset >= 16 ? "half_pixel" : "output_half_pixel");
  if (ctm != "half_pixel" && ctm != "output_half_pixel")
    return ctx.error("coordinate_transformation_mode '" + ctm + "' is not half_pixel or output_half_pixel");
  const int64_t oh = n.attr_i("output_height", 1), ow = n.attr_i("output_width", 1);
  if (oh < 1 || ow < 1)
    return ctx.error("output_height and output_width must be >= 1, got " + std::to_string(oh) + " and " + std::to_string(ow));
  // Each output element averages sampling_ratio^2 samples: a ratio beyond 1024 (a million
  // samples per element) is surely a corrupt attribute, and would run for hours.
  if (n.attr_i("sampling_ratio", 0) < 0 || n.attr_i("sampling_ratio", 0) > 1024)
    return ctx.error("sampling_ratio must be in [0, 1024], got " + std::to_string(n.attr_i("sampling_ratio", 0)));
  ctx.output(0).dtype = x.dtype;
  ctx.output(0).shape = {rois.shape[0], x.shape[1], oh, ow};
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_RoiAlign = {"RoiAlign", 3, 3, 1, 1, infer};

}  // namespace tessera
