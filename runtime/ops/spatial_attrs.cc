// Window geometry of Conv, ConvTranspose and the pooling ops; see spatial_attrs.h.
#include "runtime/ops/spatial_attrs.h"

#include <algorithm>
#include <string>

namespace tessera {

namespace {

// Bound on kernel sizes, strides, dilations and pads: keeps every product below 2^62.
constexpr int64_t kMaxWindowAttr = int64_t{1} << 30;

Status fail(const Node& node, const std::string& msg) { return invalid_argument(node.describe() + ": " + msg); }

// Reads the int-list attribute `name` (default: `rank` copies of `def`), checks its length
// against `want` and its values against [lo, kMaxWindowAttr].
Result<std::vector<int64_t>> read_list(const Node& node, const char* name, size_t want, int64_t def, int64_t lo) {
  const Attribute* a = node.find_attr(name);
  if (!a) return std::vector<int64_t>(want, def);
  if (a->type != AttrType::kInts) return fail(node, std::string("attribute ") + name + " must be a list of ints");
  if (a->ints.size() != want)
    return fail(node, std::string("attribute ") + name + " has " + std::to_string(a->ints.size()) + " values; expected " +
                          std::to_string(want) + " for this input rank");
  for (int64_t v : a->ints)
    if (v < lo || v > kMaxWindowAttr)
      return fail(node, std::string("attribute ") + name + " value " + std::to_string(v) + " is out of range [" +
                            std::to_string(lo) + ", 2^30]");
  return a->ints;
}

Result<std::string> read_auto_pad(const Node& node) {
  std::string s = node.attr_s("auto_pad", "NOTSET");
  if (s.empty()) s = "NOTSET";
  if (s != "NOTSET" && s != "SAME_UPPER" && s != "SAME_LOWER" && s != "VALID")
    return fail(node, "unknown auto_pad '" + s + "' (expected NOTSET, SAME_UPPER, SAME_LOWER or VALID)");
  return s;
}

Status check_x_rank(const Node& node, const Shape& x_shape) {
  if (x_shape.size() < 3)
    return fail(node, "input X must have rank >= 3 ([N, C, D1, ...]), got " + shape_to_string(x_shape));
  if (x_shape.size() - 2 > static_cast<size_t>(kMaxSpatialDims))
    return unimplemented(node.describe() + ": at most " + std::to_string(kMaxSpatialDims) +
                         " spatial dims are supported, got " + shape_to_string(x_shape));
  // Bounds every later sum and product of sizes, pads, kernels and strides below 2^63.
  for (int64_t d : x_shape)
    if (d < 0 || d > (int64_t{1} << 40)) return fail(node, "input X has a bad shape " + shape_to_string(x_shape));
  return Status::ok();
}

}  // namespace

Result<WindowGeometry> window_geometry(const Node& node, const Shape& x_shape, const std::vector<int64_t>& w_kernel,
                                       bool ceil_mode) {
  TSR_RETURN_IF_ERROR(check_x_rank(node, x_shape));
  WindowGeometry g;
  g.rank = static_cast<int>(x_shape.size()) - 2;
  const size_t r = static_cast<size_t>(g.rank);
  g.in.assign(x_shape.begin() + 2, x_shape.end());
  if (node.find_attr("kernel_shape")) {
    TSR_ASSIGN_OR_RETURN(g.kernel, read_list(node, "kernel_shape", r, 1, 1));
    if (!w_kernel.empty() && g.kernel != w_kernel)
      return fail(node, "kernel_shape " + shape_to_string(g.kernel) + " does not match W's spatial shape " +
                            shape_to_string(w_kernel));
  } else if (!w_kernel.empty()) {
    g.kernel = w_kernel;
    for (int64_t k : g.kernel)
      if (k < 1 || k > kMaxWindowAttr) return fail(node, "W has a bad kernel size " + shape_to_string(w_kernel));
  } else {
    return fail(node, "attribute kernel_shape is required");
  }
  TSR_ASSIGN_OR_RETURN(g.strides, read_list(node, "strides", r, 1, 1));
  TSR_ASSIGN_OR_RETURN(g.dilations, read_list(node, "dilations", r, 1, 1));
  TSR_ASSIGN_OR_RETURN(std::vector<int64_t> pads, read_list(node, "pads", 2 * r, 0, 0));
  TSR_ASSIGN_OR_RETURN(std::string auto_pad, read_auto_pad(node));
  g.pads_begin.assign(pads.begin(), pads.begin() + g.rank);
  g.pads_end.assign(pads.begin() + g.rank, pads.end());
  g.out.resize(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t in = g.in[i], s = g.strides[i];
    const int64_t dk = (g.kernel[i] - 1) * g.dilations[i] + 1;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      g.out[i] = (in + s - 1) / s;
      // Conv clamps a negative total to 0; pooling keeps it (the window grid then starts
      // inside the input), as onnxruntime and the ONNX pooling formula do. Division
      // truncates toward zero, as in onnxruntime.
      int64_t total = (g.out[i] - 1) * s + dk - in;
      if (!w_kernel.empty()) total = std::max<int64_t>(total, 0);
      g.pads_begin[i] = auto_pad == "SAME_UPPER" ? total / 2 : (total + 1) / 2;
      g.pads_end[i] = total - g.pads_begin[i];
    } else {
      if (auto_pad == "VALID") g.pads_begin[i] = g.pads_end[i] = 0;
      const int64_t span = in + g.pads_begin[i] + g.pads_end[i] - dk;
      if (span < 0)
        return fail(node, "the window (extent " + std::to_string(dk) + ") is larger than the padded input (" +
                              std::to_string(in + g.pads_begin[i] + g.pads_end[i]) + ") in spatial dim " +
                              std::to_string(i));
      g.out[i] = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
      // With ceil_mode the last window must start inside the input or the begin padding
      // (ONNX shape inference and PyTorch drop a window that starts in the end padding).
      if (ceil_mode && (g.out[i] - 1) * s >= in + g.pads_begin[i]) --g.out[i];
    }
    if (g.out[i] < 1)
      return fail(node, "output spatial dim " + std::to_string(i) + " would be " + std::to_string(g.out[i]) +
                            " for input " + shape_to_string(x_shape));
  }
  return g;
}

Result<WindowGeometry> conv_transpose_geometry(const Node& node, const Shape& x_shape, const Shape& w_shape) {
  TSR_RETURN_IF_ERROR(check_x_rank(node, x_shape));
  if (w_shape.size() != x_shape.size())
    return fail(node, "W " + shape_to_string(w_shape) + " must have the rank of X " + shape_to_string(x_shape));
  WindowGeometry g;
  g.rank = static_cast<int>(x_shape.size()) - 2;
  const size_t r = static_cast<size_t>(g.rank);
  g.in.assign(x_shape.begin() + 2, x_shape.end());
  std::vector<int64_t> w_kernel(w_shape.begin() + 2, w_shape.end());
  if (node.find_attr("kernel_shape")) {
    TSR_ASSIGN_OR_RETURN(g.kernel, read_list(node, "kernel_shape", r, 1, 1));
    if (g.kernel != w_kernel)
      return fail(node, "kernel_shape " + shape_to_string(g.kernel) + " does not match W's spatial shape " +
                            shape_to_string(w_kernel));
  } else {
    g.kernel = w_kernel;
  }
  for (int64_t k : g.kernel)
    if (k < 1 || k > kMaxWindowAttr) return fail(node, "W has a bad kernel size " + shape_to_string(w_kernel));
  TSR_ASSIGN_OR_RETURN(g.strides, read_list(node, "strides", r, 1, 1));
  TSR_ASSIGN_OR_RETURN(g.dilations, read_list(node, "dilations", r, 1, 1));
  TSR_ASSIGN_OR_RETURN(std::vector<int64_t> pads, read_list(node, "pads", 2 * r, 0, 0));
  TSR_ASSIGN_OR_RETURN(std::vector<int64_t> out_pad, read_list(node, "output_padding", r, 0, 0));
  TSR_ASSIGN_OR_RETURN(std::string auto_pad, read_auto_pad(node));
  std::vector<int64_t> out_shape;
  if (const Attribute* a = node.find_attr("output_shape")) {
    if (a->type != AttrType::kInts) return fail(node, "attribute output_shape must be a list of ints");
    out_shape = a->ints;
    // Accept [D1, ...] or the full [N, C, D1, ...].
    if (out_shape.size() == r + 2) out_shape.erase(out_shape.begin(), out_shape.begin() + 2);
    if (out_shape.size() != r)
      return fail(node, "attribute output_shape has " + std::to_string(a->ints.size()) + " values; expected " +
                            std::to_string(r));
    for (int64_t v : out_shape)
      if (v < 1 || v > kMaxWindowAttr) return fail(node, "output_shape value " + std::to_string(v) + " is out of range");
  }
  g.pads_begin.assign(pads.begin(), pads.begin() + g.rank);
  g.pads_end.assign(pads.begin() + g.rank, pads.end());
  g.out.resize(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t dk = (g.kernel[i] - 1) * g.dilations[i] + 1;
    if (out_pad[i] >= g.strides[i] && out_pad[i] >= g.dilations[i])
      return fail(node, "output_padding " + std::to_string(out_pad[i]) + " must be smaller than the stride or dilation");
    if (g.in[i] > (int64_t{1} << 32))
      return fail(node, "input spatial dim " + std::to_string(i) + " is too large (" + std::to_string(g.in[i]) + ")");
    const int64_t full = g.strides[i] * (g.in[i] - 1) + out_pad[i] + dk;  // <= 2^62 + 2^30 + 2^60 + 1
    const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
    if (!out_shape.empty() || same) {
      g.out[i] = !out_shape.empty() ? out_shape[i] : g.in[i] * g.strides[i];
      // An output larger than the full transposed size gets pads 0 (the extra positions
      // hold only the bias), as in onnxruntime.
      const int64_t total = std::max<int64_t>(full - g.out[i], 0);
      g.pads_begin[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      g.pads_end[i] = total - g.pads_begin[i];
    } else {
      if (auto_pad == "VALID") g.pads_begin[i] = g.pads_end[i] = 0;
      g.out[i] = full - g.pads_begin[i] - g.pads_end[i];
    }
    if (g.out[i] < 1)
      return fail(node, "output spatial dim " + std::to_string(i) + " would be " + std::to_string(g.out[i]) +
                            " for input " + shape_to_string(x_shape));
  }
  return g;
}

Result<int64_t> check_conv_rank_and_group(const Node& node, const Shape& x, const Shape& w) {
  if (w.size() != x.size() || w.size() < 3)
    return invalid_argument(node.describe() + ": W " + shape_to_string(w) + " must have the rank of X " + shape_to_string(x) +
                            " (at least 3)");
  const int64_t group = node.attr_i("group", 1);
  if (group < 1) return invalid_argument(node.describe() + ": group must be >= 1, got " + std::to_string(group));
  return group;
}

Result<int64_t> check_conv_operands(const Node& node, const Shape& x, DType x_dtype, const Shape& w, DType w_dtype) {
  if (x_dtype != DType::kFloat32 || w_dtype != DType::kFloat32)
    return unimplemented(node.describe() + ": only float tensors are supported, got X " + dtype_name(x_dtype) + ", W " +
                         dtype_name(w_dtype));
  return check_conv_rank_and_group(node, x, w);
}

Status check_conv_channels(const Node& node, const Shape& x, const Shape& w, int64_t group) {
  const int64_t c = x[1], m = w[0];
  if (c % group != 0 || c / group != w[1])
    return invalid_argument(node.describe() + ": X has " + std::to_string(c) + " channels but W " + shape_to_string(w) +
                            " with group " + std::to_string(group) + " expects W.shape[1] * group channels");
  if (m % group != 0)
    return invalid_argument(node.describe() + ": W's " + std::to_string(m) + " output channels are not divisible by group " +
                            std::to_string(group));
  return Status::ok();
}

}  // namespace tessera
