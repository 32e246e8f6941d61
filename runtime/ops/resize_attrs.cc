// Resize / Upsample parameter resolution; see resize_attrs.h.
#include "runtime/ops/resize_attrs.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace tessera {

namespace {

Status fail(const Node& node, const std::string& msg) { return invalid_argument(node.describe() + ": " + msg); }

// The plan-time value of an optional input as doubles; `present` false when the input is
// omitted or empty (the ONNX "empty tensor means not given" convention).
Result<std::vector<double>> const_values(const Node& node, const ValueInfo* v, const char* name, bool* present) {
  *present = false;
  if (!v) return std::vector<double>{};
  if (!v->constant) {
    int64_t n = 1;
    for (int64_t d : v->shape) n *= d;
    if (n == 0) return std::vector<double>{};
    return unimplemented(node.describe() + ": input " + name + " must be computable before the run (a constant)");
  }
  const Tensor& t = *v->constant;
  std::vector<double> out(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) {
    switch (t.dtype()) {
      case DType::kFloat32: out[i] = t.data_as<float>()[i]; break;
      case DType::kFloat64: out[i] = t.data_as<double>()[i]; break;
      case DType::kInt64: out[i] = static_cast<double>(t.data_as<int64_t>()[i]); break;
      case DType::kInt32: out[i] = t.data_as<int32_t>()[i]; break;
      default: return fail(node, std::string("input ") + name + " has unsupported dtype " + dtype_name(t.dtype()));
    }
  }
  *present = !out.empty();
  return out;
}

// Maps the values of a per-axis input (length len(axes), or rank when axes is absent) to
// all dims; dims not in axes get `fill`.
Result<std::vector<double>> spread(const Node& node, const std::vector<double>& v, const std::vector<int64_t>& axes,
                                   size_t rank, double fill, const char* name) {
  if (v.size() != axes.size())
    return fail(node, std::string(name) + " has " + std::to_string(v.size()) + " values; expected " + std::to_string(axes.size()));
  std::vector<double> out(rank, fill);
  for (size_t i = 0; i < axes.size(); ++i) out[static_cast<size_t>(axes[i])] = v[i];
  return out;
}

Status parse_modes(const Node& node, ResizeParams& p) {
  const std::string mode = node.attr_s("mode", "nearest");
  if (mode == "nearest") p.mode = ResizeParams::Mode::kNearest;
  else if (mode == "linear" || mode == "bilinear" || mode == "trilinear") p.mode = ResizeParams::Mode::kLinear;
  else if (mode == "cubic" && node.op_type == "Resize" && node.opset >= 11) p.mode = ResizeParams::Mode::kCubic;
  else return fail(node, "unknown mode '" + mode + "'");
  if (node.op_type == "Upsample" || node.opset < 11) {
    p.coord = ResizeParams::Coord::kAsymmetric;
    p.nearest = ResizeParams::Nearest::kSimple;
    return Status::ok();
  }
  const std::string ct = node.attr_s("coordinate_transformation_mode", "half_pixel");
  using C = ResizeParams::Coord;
  if (ct == "half_pixel") p.coord = C::kHalfPixel;
  else if (ct == "half_pixel_symmetric") p.coord = C::kHalfPixelSymmetric;
  else if (ct == "pytorch_half_pixel") p.coord = C::kPytorchHalfPixel;
  else if (ct == "align_corners") p.coord = C::kAlignCorners;
  else if (ct == "asymmetric") p.coord = C::kAsymmetric;
  else if (ct == "tf_half_pixel_for_nn") p.coord = C::kTfHalfPixelForNn;
  else if (ct == "tf_crop_and_resize") p.coord = C::kTfCropAndResize;
  else return fail(node, "unknown coordinate_transformation_mode '" + ct + "'");
  const std::string nm = node.attr_s("nearest_mode", "round_prefer_floor");
  using N = ResizeParams::Nearest;
  if (nm == "round_prefer_floor") p.nearest = N::kRoundPreferFloor;
  else if (nm == "round_prefer_ceil") p.nearest = N::kRoundPreferCeil;
  else if (nm == "floor") p.nearest = N::kFloor;
  else if (nm == "ceil") p.nearest = N::kCeil;
  else return fail(node, "unknown nearest_mode '" + nm + "'");
  p.cubic_coeff_a = node.attr_f("cubic_coeff_a", -0.75f);
  const int64_t eo = node.attr_i("exclude_outside", 0);
  if (eo != 0 && eo != 1) return fail(node, "exclude_outside must be 0 or 1");
  p.exclude_outside = eo == 1;
  p.extrapolation_value = node.attr_f("extrapolation_value", 0.f);
  const int64_t aa = node.opset >= 18 ? node.attr_i("antialias", 0) : 0;
  if (aa != 0 && aa != 1) return fail(node, "antialias must be 0 or 1, got " + std::to_string(aa));
  // The spec applies the antialiasing filter to linear and cubic only; nearest ignores it.
  p.antialias = aa == 1 && p.mode != ResizeParams::Mode::kNearest;
  return Status::ok();
}

Status finish_sizes(const Node& node, ResizeParams& p) {
  for (size_t i = 0; i < p.out.size(); ++i)
    if (p.out[i] < 1 || p.out[i] > (int64_t{1} << 40))
      return fail(node, "output dim " + std::to_string(i) + " would be " + std::to_string(p.out[i]) + " (input " +
                            shape_to_string(p.in) + ")");
  return Status::ok();
}

}  // namespace

Result<ResizeParams> resize_params(const Node& node, const Shape& x_shape, const ValueInfo* roi, const ValueInfo* scales,
                                   const ValueInfo* sizes) {
  ResizeParams p;
  TSR_RETURN_IF_ERROR(parse_modes(node, p));
  const size_t rank = x_shape.size();
  if (rank == 0) return fail(node, "input X must have rank >= 1");
  if (rank > kMaxResizeRank)
    return unimplemented(node.describe() + ": at most " + std::to_string(kMaxResizeRank) + " dims are supported");
  for (int64_t d : x_shape)
    if (d < 1) return fail(node, "input X " + shape_to_string(x_shape) + " has an empty dim");
  p.in = x_shape;
  std::vector<int64_t> axes;
  if (node.opset >= 18 && node.find_attr("axes")) {
    for (int64_t a : node.attr_ints("axes")) {
      TSR_ASSIGN_OR_RETURN(int64_t ax, normalize_axis(a, static_cast<int64_t>(rank), node));
      for (int64_t seen : axes)
        if (seen == ax) return fail(node, "axes has a repeated axis " + std::to_string(a));
      axes.push_back(ax);
    }
  } else {
    for (size_t i = 0; i < rank; ++i) axes.push_back(static_cast<int64_t>(i));
  }
  bool has_roi = false, has_scales = false, has_sizes = false;
  // roi only matters for tf_crop_and_resize (it need not be a constant otherwise).
  const bool crop = p.coord == ResizeParams::Coord::kTfCropAndResize;
  TSR_ASSIGN_OR_RETURN(std::vector<double> roi_v, const_values(node, crop ? roi : nullptr, "roi", &has_roi));
  TSR_ASSIGN_OR_RETURN(std::vector<double> scales_v, const_values(node, scales, "scales", &has_scales));
  TSR_ASSIGN_OR_RETURN(std::vector<double> sizes_v, const_values(node, sizes, "sizes", &has_sizes));
  if (has_scales == has_sizes)
    return fail(node, has_scales ? "scales and sizes are both given; exactly one must be non-empty"
                                 : "neither scales nor sizes is given; exactly one must be non-empty");
  p.roi_start.assign(rank, 0.f);
  p.roi_end.assign(rank, 1.f);
  if (crop && has_roi) {
    if (roi_v.size() != 2 * axes.size())
      return fail(node, "roi has " + std::to_string(roi_v.size()) + " values; expected " + std::to_string(2 * axes.size()));
    for (size_t i = 0; i < axes.size(); ++i) {
      p.roi_start[static_cast<size_t>(axes[i])] = static_cast<float>(roi_v[i]);
      p.roi_end[static_cast<size_t>(axes[i])] = static_cast<float>(roi_v[axes.size() + i]);
    }
  }
  p.scales.assign(rank, 1.f);
  p.out = x_shape;
  if (has_scales) {
    TSR_ASSIGN_OR_RETURN(std::vector<double> s, spread(node, scales_v, axes, rank, 1.0, "scales"));
    for (size_t i = 0; i < rank; ++i) {
      if (!(s[i] > 0) || !std::isfinite(s[i])) return fail(node, "scales[" + std::to_string(i) + "] must be positive and finite");
      p.scales[i] = static_cast<float>(s[i]);
      // As onnxruntime: float product, truncated. The roi extent does not enter (ONNX shape
      // inference, its reference implementation and onnxruntime all ignore it).
      const float o = static_cast<float>(x_shape[i]) * p.scales[i];
      if (!(o < 1e12f)) return fail(node, "output dim " + std::to_string(i) + " is too large");
      p.out[i] = static_cast<int64_t>(o);
    }
  } else {
    std::vector<int64_t> int_sizes;
    for (double v : sizes_v) {
      if (!(v >= 1 && v <= static_cast<double>(int64_t{1} << 40))) return fail(node, "sizes value " + std::to_string(v) + " is out of range");
      int_sizes.push_back(static_cast<int64_t>(v));
    }
    const std::string policy = node.opset >= 18 ? node.attr_s("keep_aspect_ratio_policy", "stretch") : "stretch";
    if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
      return fail(node, "unknown keep_aspect_ratio_policy '" + policy + "'");
    if (int_sizes.size() != axes.size())
      return fail(node, "sizes has " + std::to_string(int_sizes.size()) + " values; expected " + std::to_string(axes.size()));
    for (int64_t v : int_sizes)
      if (v < 1) return fail(node, "sizes must be positive, got " + std::to_string(v));
    if (policy == "stretch") {
      p.scales_from_sizes = true;
      for (size_t i = 0; i < axes.size(); ++i) {
        const size_t ax = static_cast<size_t>(axes[i]);
        p.out[ax] = int_sizes[i];
        p.scales[ax] = static_cast<float>(int_sizes[i]) / static_cast<float>(x_shape[ax]);
      }
    } else {
      float s = policy == "not_larger" ? INFINITY : 0.f;
      for (size_t i = 0; i < axes.size(); ++i) {
        const float r = static_cast<float>(int_sizes[i]) / static_cast<float>(x_shape[static_cast<size_t>(axes[i])]);
        s = policy == "not_larger" ? std::min(s, r) : std::max(s, r);
      }
      for (int64_t a : axes) {
        const size_t ax = static_cast<size_t>(a);
        p.scales[ax] = s;
        p.out[ax] = static_cast<int64_t>(std::round(s * static_cast<float>(x_shape[ax])));
      }
    }
  }
  TSR_RETURN_IF_ERROR(finish_sizes(node, p));
  // The antialias filter has about 2 / scale (linear) or 4 / scale (cubic) taps per output.
  if (p.antialias)
    for (size_t i = 0; i < rank; ++i)
      if (!(static_cast<double>(p.scales[i]) * double{1 << 20} >= 1.0))
        return unimplemented(node.describe() + ": antialias with scale " + std::to_string(p.scales[i]) + " on dim " +
                             std::to_string(i) + " would need over 2^21 taps per output");
  return p;
}

Result<ResizeParams> upsample_params(const Node& node, const Shape& x_shape, const ValueInfo* scales) {
  ResizeParams p;
  TSR_RETURN_IF_ERROR(parse_modes(node, p));
  const size_t rank = x_shape.size();
  if (rank == 0) return fail(node, "input X must have rank >= 1");
  if (rank > kMaxResizeRank)
    return unimplemented(node.describe() + ": at most " + std::to_string(kMaxResizeRank) + " dims are supported");
  for (int64_t d : x_shape)
    if (d < 1) return fail(node, "input X " + shape_to_string(x_shape) + " has an empty dim");
  std::vector<double> s;
  if (node.opset < 9) {
    for (float f : node.attr_floats("scales")) s.push_back(f);
  } else {
    bool present = false;
    TSR_ASSIGN_OR_RETURN(s, const_values(node, scales, "scales", &present));
  }
  if (s.size() != rank)
    return fail(node, "scales has " + std::to_string(s.size()) + " values; expected " + std::to_string(rank));
  p.in = x_shape;
  p.out = x_shape;
  p.scales.assign(rank, 1.f);
  p.roi_start.assign(rank, 0.f);
  p.roi_end.assign(rank, 1.f);
  for (size_t i = 0; i < rank; ++i) {
    if (!(s[i] >= 1) || !std::isfinite(s[i])) return fail(node, "scales[" + std::to_string(i) + "] must be >= 1 and finite");
    p.scales[i] = static_cast<float>(s[i]);
    const float o = static_cast<float>(x_shape[i]) * p.scales[i];
    if (!(o < 1e12f)) return fail(node, "output dim " + std::to_string(i) + " is too large");
    p.out[i] = static_cast<int64_t>(o);
  }
  TSR_RETURN_IF_ERROR(finish_sizes(node, p));
  return p;
}

}  // namespace tessera
