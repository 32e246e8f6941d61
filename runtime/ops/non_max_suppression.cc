// NonMaxSuppression (ONNX opset 10, 11): selects, per batch and class, the boxes that score
// highest without overlapping a better box by more than iou_threshold (IoU). Inputs boxes
// float [B, N, 4], scores float [B, C, N], optional max_output_boxes_per_class (int64,
// default 0), iou_threshold (float, default 0) and score_threshold (float, default: no
// filtering); an omitted input (empty name) or an empty tensor takes the default. Output
// selected_indices int64 [count, 3] of [batch, class, box]. The count depends on the
// inputs' values, so all of them must be known when planning: the session plans small
// inputs by value (re-planning when they change), as for NonZero; larger boxes or scores
// computed inside the model are not supported yet. non_max_suppression() is shared with
// the kernel.
#include "runtime/ops/non_max_suppression.h"

#include <algorithm>
#include <cmath>

#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {

Status check_shapes(const Node& node, DType bd, const Shape& b, DType sd, const Shape& s) {
  auto err = [&](const std::string& m) { return invalid_argument(node.describe() + ": " + m); };
  if (bd != DType::kFloat32 || sd != DType::kFloat32)
    return unimplemented(node.describe() + ": boxes and scores must be float, got " + dtype_name(bd) + " and " +
                         dtype_name(sd));
  if (b.size() != 3 || b[2] != 4) return err("boxes must be [num_batches, spatial_dimension, 4], got " + shape_to_string(b));
  if (s.size() != 3) return err("scores must be [num_batches, num_classes, spatial_dimension], got " + shape_to_string(s));
  if (s[0] != b[0] || s[2] != b[1])
    return err("scores " + shape_to_string(s) + " do not match boxes " + shape_to_string(b) +
               " (num_batches and spatial_dimension must agree)");
  return Status::ok();
}

// The single value of an optional scalar input; `present` false for null or empty.
template <typename T>
Status optional_scalar(const Node& node, const Tensor* t, const char* name, bool* present, T* out) {
  *present = false;
  if (!t || t->numel() == 0) return Status::ok();
  if (t->numel() != 1)
    return invalid_argument(node.describe() + ": " + name + " must hold one value, got shape " + shape_to_string(t->shape()));
  switch (t->dtype()) {
    case DType::kInt64: *out = static_cast<T>(t->data_as<int64_t>()[0]); break;
    case DType::kInt32: *out = static_cast<T>(t->data_as<int32_t>()[0]); break;
    case DType::kFloat32: *out = static_cast<T>(t->data_as<float>()[0]); break;
    case DType::kFloat64: *out = static_cast<T>(t->data_as<double>()[0]); break;
    default:
      return invalid_argument(node.describe() + ": " + name + " has unsupported dtype " + dtype_name(t->dtype()));
  }
  *present = true;
  return Status::ok();
}

// IoU(box i, box j) > threshold, with the boxes in `format` (center_point_box). Boxes that do
// not intersect, or of zero area, never suppress (onnxruntime and the ONNX reference agree).
bool suppresses(const float* a, const float* b, int64_t center_point_box, float threshold) {
  float ax0, ax1, ay0, ay1, bx0, bx1, by0, by1;
  if (center_point_box == 0) {
    ax0 = std::min(a[1], a[3]); ax1 = std::max(a[1], a[3]);
    ay0 = std::min(a[0], a[2]); ay1 = std::max(a[0], a[2]);
    bx0 = std::min(b[1], b[3]); bx1 = std::max(b[1], b[3]);
    by0 = std::min(b[0], b[2]); by1 = std::max(b[0], b[2]);
  } else {
    ax0 = a[0] - a[2] / 2; ax1 = a[0] + a[2] / 2;
    ay0 = a[1] - a[3] / 2; ay1 = a[1] + a[3] / 2;
    bx0 = b[0] - b[2] / 2; bx1 = b[0] + b[2] / 2;
    by0 = b[1] - b[3] / 2; by1 = b[1] + b[3] / 2;
  }
  const float ix0 = std::max(ax0, bx0), ix1 = std::min(ax1, bx1);
  if (!(ix1 > ix0)) return false;
  const float iy0 = std::max(ay0, by0), iy1 = std::min(ay1, by1);
  if (!(iy1 > iy0)) return false;
  const float inter = (ix1 - ix0) * (iy1 - iy0);
  const float area_a = (ax1 - ax0) * (ay1 - ay0), area_b = (bx1 - bx0) * (by1 - by0);
  const float uni = area_a + area_b - inter;
  if (!(inter > 0) || !(area_a > 0) || !(area_b > 0) || !(uni > 0)) return false;
  return inter / uni > threshold;
}

}  // namespace

Result<NmsParams> nms_params(const Node& node, const Tensor& boxes, const Tensor& scores, const Tensor* max_output,
                             const Tensor* iou_threshold, const Tensor* score_threshold) {
  TSR_RETURN_IF_ERROR(check_shapes(node, boxes.dtype(), boxes.shape(), scores.dtype(), scores.shape()));
  NmsParams p;
  p.num_batches = boxes.shape()[0];
  p.num_boxes = boxes.shape()[1];
  p.num_classes = scores.shape()[1];
  p.center_point_box = node.attr_i("center_point_box", 0);
  if (p.center_point_box != 0 && p.center_point_box != 1)
    return invalid_argument(node.describe() + ": center_point_box must be 0 or 1, got " + std::to_string(p.center_point_box));
  bool present = false;
  TSR_RETURN_IF_ERROR(optional_scalar(node, max_output, "max_output_boxes_per_class", &present, &p.max_output_boxes_per_class));
  if (present && max_output->dtype() != DType::kInt64 && max_output->dtype() != DType::kInt32)
    return invalid_argument(node.describe() + ": max_output_boxes_per_class must be int64, got " + dtype_name(max_output->dtype()));
  p.max_output_boxes_per_class = std::max<int64_t>(p.max_output_boxes_per_class, 0);
  TSR_RETURN_IF_ERROR(optional_scalar(node, iou_threshold, "iou_threshold", &present, &p.iou_threshold));
  if (!(p.iou_threshold >= 0.0f && p.iou_threshold <= 1.0f))
    return invalid_argument(node.describe() + ": iou_threshold must be in [0, 1], got " + std::to_string(p.iou_threshold));
  TSR_RETURN_IF_ERROR(optional_scalar(node, score_threshold, "score_threshold", &p.has_score_threshold, &p.score_threshold));
  return p;
}

int64_t non_max_suppression(const float* boxes, const float* scores, const NmsParams& p, int64_t* selected,
                            int64_t capacity, int64_t* scratch) {
  int64_t* order = scratch;                 // candidate box indices, best first
  int64_t* kept = scratch + p.num_boxes;    // selected box indices of the current (b, c)
  int64_t total = 0;
  for (int64_t b = 0; b < p.num_batches; ++b) {
    const float* bb = boxes + b * p.num_boxes * 4;
    for (int64_t c = 0; c < p.num_classes; ++c) {
      const float* sc = scores + (b * p.num_classes + c) * p.num_boxes;
      int64_t n = 0;
      for (int64_t i = 0; i < p.num_boxes; ++i)
        if (!p.has_score_threshold || sc[i] > p.score_threshold) order[n++] = i;
      // Score descending, ties by index ascending; NaN last (keeps the order strict-weak).
      std::sort(order, order + n, [&](int64_t i, int64_t j) {
        const bool ni = std::isnan(sc[i]), nj = std::isnan(sc[j]);
        if (ni != nj) return nj;
        if (!ni && sc[i] != sc[j]) return sc[i] > sc[j];
        return i < j;
      });
      int64_t k = 0;
      for (int64_t s = 0; s < n && k < p.max_output_boxes_per_class; ++s) {
        const float* cand = bb + order[s] * 4;
        bool keep = true;
        for (int64_t q = 0; q < k && keep; ++q) keep = !suppresses(cand, bb + kept[q] * 4, p.center_point_box, p.iou_threshold);
        if (!keep) continue;
        kept[k++] = order[s];
        if (selected && total < capacity) {
          selected[total * 3 + 0] = b;
          selected[total * 3 + 1] = c;
          selected[total * 3 + 2] = order[s];
        }
        ++total;
      }
    }
  }
  return total;
}

namespace {
Status infer(InferContext& ctx) {
  const ValueInfo& boxes = ctx.input(0);
  const ValueInfo& scores = ctx.input(1);
  TSR_RETURN_IF_ERROR(check_shapes(ctx.node(), boxes.dtype, boxes.shape, scores.dtype, scores.shape));
  const int64_t cpb = ctx.node().attr_i("center_point_box", 0);
  if (cpb != 0 && cpb != 1) return ctx.error("center_point_box must be 0 or 1, got " + std::to_string(cpb));
  const Tensor* opt[3] = {nullptr, nullptr, nullptr};
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) continue;
    const ValueInfo& v = ctx.input(i);
    if (i >= 2 && v.shape.size() > 1)
      return ctx.error("input " + std::to_string(i) + " must be a scalar or hold one value, got shape " +
                       shape_to_string(v.shape));
    if (!v.constant)
      return ctx.unsupported("input " + std::to_string(i) +
                             " must be computable before the run (NonMaxSuppression's output length depends on its values)");
    if (i >= 2) opt[i - 2] = v.constant.get();
  }
  TSR_ASSIGN_OR_RETURN(NmsParams p, nms_params(ctx.node(), *boxes.constant, *scores.constant, opt[0], opt[1], opt[2]));
  std::vector<int64_t> scratch(static_cast<size_t>(p.num_boxes) * 2);
  const int64_t count = non_max_suppression(boxes.constant->data_as<float>(), scores.constant->data_as<float>(), p,
                                            nullptr, 0, scratch.data());
  ctx.output(0).dtype = DType::kInt64;
  ctx.output(0).shape = {count, 3};
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_NonMaxSuppression = {"NonMaxSuppression", 2, 5, 1, 1, infer};

}  // namespace tessera
