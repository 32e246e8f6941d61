// Resize / Upsample parameters shared by their schemas and the reference kernel: the
// attributes, and the per-dim scales and output sizes resolved from the plan-time scales /
// sizes / roi inputs (ONNX Resize-10/11/13/18/19, Upsample-7/9).
//
// Output sizes (ONNX spec): from scales, out = floor(in * scale) (for tf_crop_and_resize
// too: ONNX shape inference and onnxruntime do not multiply by the roi extent); from sizes, out = sizes and scale = out / in, or with
// keep_aspect_ratio_policy not_larger / not_smaller one scale s = min / max over the axes
// of sizes / in and out = round(s * in). antialias (opset 18+) applies to linear and cubic
// only (nearest ignores it, as the spec describes it). Before opset 11 the coordinate transformation is
// asymmetric and nearest rounds down when upsampling and up when downsampling (as in
// onnxruntime's "simple" nearest mode).
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/ops/op_schema.h"
#include "runtime/ops/resize_nearest.h"

namespace tessera {

/// Most dims a Resize / Upsample input may have (the kernel keeps fixed-size index arrays).
constexpr size_t kMaxResizeRank = 8;

/// Everything the Resize kernel needs, resolved at plan time.
struct ResizeParams {
  enum class Mode { kNearest, kLinear, kCubic };
  enum class Coord { kHalfPixel, kHalfPixelSymmetric, kPytorchHalfPixel, kAlignCorners, kAsymmetric, kTfHalfPixelForNn, kTfCropAndResize };
  enum class Nearest { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil, kSimple };
  Mode mode = Mode::kNearest;
  Coord coord = Coord::kHalfPixel;
  Nearest nearest = Nearest::kRoundPreferFloor;
  float cubic_coeff_a = -0.75f;
  bool exclude_outside = false;
  float extrapolation_value = 0.f;
  bool antialias = false;        // opset 18+, linear and cubic: filter stretched by 1 / scale when downsampling
  Shape in, out;                 // all dims of X and Y
  std::vector<float> scales;     // per dim (1 for dims not resized)
  // `sizes` given with keep_aspect_ratio_policy stretch: the coordinate transforms use out /
  // in (in double; nearest in exact integer arithmetic, runtime/ops/resize_nearest.h), not
  // the float `scales` (whose rounding moved exact ties of nearest Resize to the
  // neighbouring pixel: 28 -> 52 rows, half_pixel, ceil).
  bool scales_from_sizes = false;
  std::vector<float> roi_start;  // per dim, in normalized coordinates (tf_crop_and_resize)
  std::vector<float> roi_end;
};

/// The codes of runtime/ops/resize_nearest.h (shared with the GPU kernels): 0 half_pixel,
/// 1 asymmetric, 2 align_corners, 3 pytorch_half_pixel, 4 tf_half_pixel_for_nn,
/// 5 half_pixel_symmetric; -1 for tf_crop_and_resize, which has none.
inline int resize_coord_code(ResizeParams::Coord c) {
  using C = ResizeParams::Coord;
  switch (c) {
    case C::kHalfPixel: return 0;
    case C::kAsymmetric: return 1;
    case C::kAlignCorners: return 2;
    case C::kPytorchHalfPixel: return 3;
    case C::kTfHalfPixelForNn: return 4;
    case C::kHalfPixelSymmetric: return 5;
    case C::kTfCropAndResize: return -1;
  }
  return -1;
}

/// 0 round_prefer_floor, 1 round_prefer_ceil, 2 floor, 3 ceil, 4 simple (Upsample before
/// opset 11), as runtime/ops/resize_nearest.h numbers them.
inline int resize_nearest_code(ResizeParams::Nearest n) {
  using N = ResizeParams::Nearest;
  switch (n) {
    case N::kRoundPreferFloor: return 0;
    case N::kRoundPreferCeil: return 1;
    case N::kFloor: return 2;
    case N::kCeil: return 3;
    case N::kSimple: return 4;
  }
  return 0;
}

/// Whether nearest Resize along an axis of `in` -> `out` takes the exact integer path of
/// runtime/ops/resize_nearest.h: scales from `sizes`, a transformation other than
/// tf_crop_and_resize, and both lengths within kResizeExactMaxLength. The CPU reference and
/// the GPU kernels decide with this (the GPU kernels also check their own 32-bit bound).
inline bool resize_nearest_exact(const ResizeParams& p, int64_t in, int64_t out) {
  return p.mode == ResizeParams::Mode::kNearest && p.scales_from_sizes &&
         p.coord != ResizeParams::Coord::kTfCropAndResize && in <= kResizeExactMaxLength &&
         out <= kResizeExactMaxLength;
}

/// Resize (opsets 10..21). `roi`, `scales`, `sizes` are the ValueInfos of those inputs or
/// nullptr when omitted (for opset 10 pass the scales input as `scales`). Their values must
/// be plan-time constants (unimplemented otherwise). Errors (invalid_argument, naming the
/// node) on unknown modes, wrong list lengths, non-positive scales or output sizes, or both
/// / neither of scales and sizes given.
Result<ResizeParams> resize_params(const Node& node, const Shape& x_shape, const ValueInfo* roi, const ValueInfo* scales,
                                   const ValueInfo* sizes);

/// Upsample (opset 7: the `scales` attribute; opset 9: the scales input, passed as `scales`).
/// Scales must be >= 1.
Result<ResizeParams> upsample_params(const Node& node, const Shape& x_shape, const ValueInfo* scales);

}  // namespace tessera
