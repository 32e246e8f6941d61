// NonMaxSuppression's shared algorithm (runtime/ops/non_max_suppression.cc plans the output
// length with it, backends/cpu/ref/non_max_suppression.cc computes the output with it), so
// the planner and the kernel can never disagree about the number of selected boxes.
#pragma once

#include <cstdint>

#include "tessera/graph.h"
#include "tessera/status.h"
#include "tessera/tensor.h"

namespace tessera {

/// The parameters of one NonMaxSuppression run (ONNX opset 10, 11), after the optional
/// inputs are resolved: an omitted or empty input takes its default.
struct NmsParams {
  int64_t num_batches = 0;
  int64_t num_classes = 0;
  int64_t num_boxes = 0;               // spatial_dimension
  int64_t max_output_boxes_per_class = 0;  // default 0: nothing is selected; negative counts as 0
  float iou_threshold = 0.0f;          // a box is suppressed when IoU > iou_threshold
  bool has_score_threshold = false;    // false: no score filtering
  float score_threshold = 0.0f;        // boxes with score <= score_threshold are dropped
  int64_t center_point_box = 0;        // 0: [y1, x1, y2, x2] (any diagonal corners); 1: [xc, yc, w, h]
};

/// Reads and checks the parameters from the node (center_point_box 0 or 1) and its inputs:
/// boxes float [B, N, 4], scores float [B, C, N], and the optional max_output_boxes_per_class
/// (int64 or int32), iou_threshold and score_threshold (float), each null (omitted) or of 0
/// elements (the default) or 1 element; iou_threshold must lie in [0, 1]. The schema calls it
/// with the plan-time values, the kernel with the run's tensors. Errors (invalid_argument)
/// name the node.
Result<NmsParams> nms_params(const Node& node, const Tensor& boxes, const Tensor& scores, const Tensor* max_output,
                             const Tensor* iou_threshold, const Tensor* score_threshold);

/// Greedy NMS, as the ONNX operator spec (NonMaxSuppression-11) and its reference
/// implementation define it. For each batch b and class c: the boxes with score above the
/// threshold (all boxes without one), visited by score descending (ties: lower box index
/// first); a box is selected unless its IoU with an already selected box of (b, c) is
/// > iou_threshold; at most max_output_boxes_per_class per (b, c). A box of zero area or
/// with an empty intersection never suppresses another (IoU taken as 0). NaN scores sort
/// last (and fail any score threshold).
///
/// boxes: float [num_batches, num_boxes, 4]; scores: float [num_batches, num_classes,
/// num_boxes], both row-major. `selected`, if not null, receives up to `capacity` triples
/// [batch, class, box] (row-major [count, 3] int64), in (b, c, selection) order; `scratch`
/// holds 2 * num_boxes int64 values. Allocates nothing. Returns the total number of selected
/// boxes (which may exceed `capacity`: then only `capacity` triples are written).
int64_t non_max_suppression(const float* boxes, const float* scores, const NmsParams& p, int64_t* selected,
                            int64_t capacity, int64_t* scratch);

}  // namespace tessera
