// Resize reference kernel (ONNX Resize-10/11/13/18/19, also Upsample-7/9). Separable
// interpolation: for each dim and output index o, the plan precomputes up to 4 taps
// (input index, weight) from the original coordinate
//   half_pixel:            x = (o + 0.5) / scale - 0.5
//   half_pixel_symmetric:  x = in/2 * (1 - out / (scale * in)) + (o + 0.5) / scale - 0.5
//   pytorch_half_pixel:    x = out > 1 ? (o + 0.5) / scale - 0.5 : 0
//   align_corners:         x = out == 1 ? 0 : o * (in - 1) / (out - 1)
//   asymmetric:            x = o / scale
//   tf_half_pixel_for_nn:  x = (o + 0.5) / scale
//   tf_crop_and_resize:    x = out > 1 ? start * (in - 1) + o * (end - start) * (in - 1) / (out - 1)
//                                      : (start + end) / 2 * (in - 1)
//                          (x outside [0, in - 1] gives extrapolation_value)
// nearest: one tap at the rounded x (nearest_mode), clamped to [0, in - 1]; with `sizes`
//          (scale = out / in) x is the exact fraction and the rounding exact at ties
//          (runtime/ops/resize_nearest.h), else x in double from the float scale;
// linear:  x clamped to [0, in - 1], taps floor(x) and floor(x) + 1 (clamped) with weights
//          1 - t and t, t = x - floor(x);
// cubic:   taps floor(x) - 1 .. floor(x) + 2 (indices clamped to the edge) with Keys'
//          weights for A = cubic_coeff_a; exclude_outside zeroes the taps outside the input
//          and renormalizes the weights to sum 1.
// antialias (linear and cubic), as the ONNX reference implementation (op_resize.py) does:
// with s = min(scale, 1), x0 = floor(x) and r = x - x0 (r = 1 and x0 = x - 1 when x is an
// integer), the taps are x0 + i for i in [i0, 1 - i0] with
//   linear: i0 = floor(-1 / s) + 1, weight max(0, 1 - |s (i - r)|)
//   cubic:  i0 = floor(-2 / s) + 1, weight Keys(s (i - r)) (0 beyond |2|),
// indices clamped to the edge, weights normalized to sum 1 (after exclude_outside zeroes
// the taps outside the input). The filter widens by 1 / s when downsampling.
// Y[o] = sum over the tap combinations of prod(weights) * X[taps] (in double).
#include <array>
#include <cmath>
#include <cstring>

#include "backends/cpu/ref/ref_kernels.h"
#include "backends/cpu/ref/resize_kernel.h"
#include "runtime/ops/resize_nearest.h"

namespace tessera::ref {

namespace {

using P = ResizeParams;

using AxisTaps = ResizeAxisTaps;

double original_coordinate(const P& p, size_t d, int64_t o) {
  const double in = static_cast<double>(p.in[d]), out = static_cast<double>(p.out[d]);
  const double scale = p.scales_from_sizes ? out / in : static_cast<double>(p.scales[d]);
  switch (p.coord) {
    case P::Coord::kHalfPixel: return (o + 0.5) / scale - 0.5;
    case P::Coord::kHalfPixelSymmetric:
      // = in/2 * (1 - out / (scale * in)) + (o + 0.5) / scale - 0.5, simplified so that
      // exact inputs give exact coordinates (no rounding just below a .5 tie).
      return (in - 1) / 2 + (o + 0.5 - out / 2) / scale;
    case P::Coord::kPytorchHalfPixel: return out > 1 ? (o + 0.5) / scale - 0.5 : 0.0;
    // The resized length is in * scale (not rounded), as the ONNX reference computes it; with
    // `sizes` given, scale = out / in and this is the usual (in - 1) / (out - 1).
    case P::Coord::kAlignCorners: return out == 1 ? 0.0 : o * (in - 1) / (in * scale - 1);
    case P::Coord::kAsymmetric: return o / scale;
    case P::Coord::kTfHalfPixelForNn: return (o + 0.5) / scale;
    case P::Coord::kTfCropAndResize: {
      const double s = p.roi_start[d], e = p.roi_end[d];
      return out > 1 ? s * (in - 1) + o * (e - s) * (in - 1) / (out - 1) : 0.5 * (s + e) * (in - 1);
    }
  }
  return 0;
}

int64_t nearest_index(const P& p, size_t d, double x) {
  double r = 0;
  switch (p.nearest) {
    case P::Nearest::kRoundPreferFloor: r = x - std::floor(x) == 0.5 ? std::floor(x) : std::round(x); break;
    case P::Nearest::kRoundPreferCeil: r = x - std::floor(x) == 0.5 ? std::ceil(x) : std::round(x); break;
    case P::Nearest::kFloor: r = std::floor(x); break;
    case P::Nearest::kCeil: r = std::ceil(x); break;
    // onnxruntime's rule before opset 11: round up when downsampling, truncate otherwise.
    case P::Nearest::kSimple: r = p.scales[d] < 1 ? std::ceil(x) : std::trunc(x); break;
  }
  return std::min<int64_t>(std::max<int64_t>(static_cast<int64_t>(r), 0), p.in[d] - 1);
}

// Keys' cubic convolution weights for the taps at distance 1 + t, t, 1 - t, 2 - t.
std::array<double, 4> cubic_weights(double a, double t) {
  auto near = [a](double s) { return ((a + 2) * s - (a + 3)) * s * s + 1; };           // |s| <= 1
  auto far = [a](double s) { return ((a * s - 5 * a) * s + 8 * a) * s - 4 * a; };      // 1 < |s| < 2
  return {far(1 + t), near(t), near(1 - t), far(2 - t)};
}

// Keys' cubic kernel at distance s (0 for |s| >= 2).
double keys(double a, double s) {
  s = std::abs(s);
  if (s <= 1) return ((a + 2) * s - (a + 3)) * s * s + 1;
  if (s < 2) return ((a * s - 5 * a) * s + 8 * a) * s - 4 * a;
  return 0;
}

// The antialiased taps of one dim (see the header comment).
AxisTaps antialias_taps(const P& p, size_t d) {
  AxisTaps a;
  const int64_t in = p.in[d], out = p.out[d];
  const double s = std::min(static_cast<double>(p.scales[d]), 1.0);
  const bool linear = p.mode == P::Mode::kLinear;
  const int64_t i0 = static_cast<int64_t>(std::floor((linear ? -1.0 : -2.0) / s)) + 1;
  a.taps = static_cast<int>(2 - 2 * i0);
  a.idx.resize(static_cast<size_t>(out * a.taps));
  a.w.resize(static_cast<size_t>(out * a.taps));
  a.outside.resize(static_cast<size_t>(out));
  for (int64_t o = 0; o < out; ++o) {
    const double x = original_coordinate(p, d, o);
    a.outside[o] = p.coord == P::Coord::kTfCropAndResize && (x < 0 || x > in - 1);
    double x0 = std::floor(x), r = x - x0;
    if (r == 0) {
      r = 1;
      x0 -= 1;
    }
    int64_t* idx = &a.idx[static_cast<size_t>(o * a.taps)];
    float* w = &a.w[static_cast<size_t>(o * a.taps)];
    auto weight = [&](int j) {
      const double i = static_cast<double>(i0 + j);
      const int64_t at = static_cast<int64_t>(x0) + i0 + j;
      if (p.exclude_outside && (at < 0 || at >= in)) return 0.0;
      return linear ? std::max(0.0, 1 - std::abs(s * (i - r))) : keys(p.cubic_coeff_a, s * (i - r));
    };
    double sum = 0;
    for (int j = 0; j < a.taps; ++j) sum += weight(j);
    for (int j = 0; j < a.taps; ++j) {
      idx[j] = std::min(std::max<int64_t>(static_cast<int64_t>(x0) + i0 + j, 0), in - 1);
      w[j] = static_cast<float>(sum != 0 ? weight(j) / sum : weight(j));
    }
  }
  return a;
}

AxisTaps axis_taps(const P& p, size_t d) {
  if (p.antialias) return antialias_taps(p, d);
  AxisTaps a;
  const int64_t in = p.in[d], out = p.out[d];
  a.taps = p.mode == P::Mode::kNearest ? 1 : p.mode == P::Mode::kLinear ? 2 : 4;
  // Nearest with `sizes`: the source index in integer arithmetic, exact at ties
  // (runtime/ops/resize_nearest.h).
  const bool exact = resize_nearest_exact(p, in, out);
  const int coord = resize_coord_code(p.coord), nearest = resize_nearest_code(p.nearest);
  a.idx.resize(static_cast<size_t>(out * a.taps));
  a.w.resize(static_cast<size_t>(out * a.taps));
  a.outside.resize(static_cast<size_t>(out));
  for (int64_t o = 0; o < out; ++o) {
    const double x = original_coordinate(p, d, o);
    a.outside[o] = p.coord == P::Coord::kTfCropAndResize && (x < 0 || x > in - 1);
    int64_t* idx = &a.idx[static_cast<size_t>(o * a.taps)];
    float* w = &a.w[static_cast<size_t>(o * a.taps)];
    if (p.mode == P::Mode::kNearest) {
      if (exact) {
        int64_t num = 0, den = 1;
        resize_exact_coordinate(coord, o, in, out, &num, &den);
        idx[0] = resize_exact_nearest(nearest, num, den, in, out < in);
      } else {
        idx[0] = nearest_index(p, d, x);
      }
      w[0] = 1.f;
    } else if (p.mode == P::Mode::kLinear) {
      const double xc = std::min(std::max(x, 0.0), static_cast<double>(in - 1));
      const int64_t i0 = static_cast<int64_t>(xc);
      const double t = xc - i0;
      idx[0] = i0;
      idx[1] = std::min(i0 + 1, in - 1);
      w[0] = static_cast<float>(1 - t);
      w[1] = static_cast<float>(t);
    } else {
      const int64_t i0 = static_cast<int64_t>(std::floor(x));
      const std::array<double, 4> cw = cubic_weights(p.cubic_coeff_a, x - i0);
      double sum = 0;
      std::array<double, 4> ww{};
      for (int j = 0; j < 4; ++j) {
        const int64_t i = i0 - 1 + j;
        ww[j] = p.exclude_outside && (i < 0 || i >= in) ? 0.0 : cw[j];
        sum += ww[j];
        idx[j] = std::min(std::max<int64_t>(i, 0), in - 1);
      }
      for (int j = 0; j < 4; ++j) w[j] = static_cast<float>(p.exclude_outside && sum != 0 ? ww[j] / sum : ww[j]);
    }
  }
  return a;
}

}  // namespace

ResizeAxisTaps resize_axis_taps(const ResizeParams& p, size_t d) { return axis_taps(p, d); }

Result<std::unique_ptr<Kernel>> make_resize_kernel(const ResizeParams& p) {
  const int rank = static_cast<int>(p.in.size());
  if (rank < 1 || static_cast<size_t>(rank) > kMaxResizeRank) return internal_error("Resize: bad rank");
  for (int d = 0; d < rank && p.antialias; ++d)  // bounded by resize_params; checked again before sizing arrays
    if (!(static_cast<double>(p.scales[d]) * double{1 << 20} >= 1.0)) return internal_error("Resize: antialias scale too small");
  std::vector<AxisTaps> axes;
  for (int d = 0; d < rank; ++d) axes.push_back(axis_taps(p, static_cast<size_t>(d)));
  const std::vector<int64_t> in_strides = contiguous_strides(p.in);
  const Shape out_shape = p.out;
  const float extrapolation = p.extrapolation_value;
  if (p.mode == P::Mode::kNearest && p.coord != P::Coord::kTfCropAndResize) {
    // Nearest without extrapolation is a gather by the same one-tap tables: each output
    // row (the last dim) reads one input row through the last dim's index table, and an
    // output row whose input row is the previous one's (upsampling) copies that row.
    return make_fn_kernel([=](const KernelContext& k) {
      const float* x = k.input(0).data_as<float>();
      float* y = k.output(0).data_as<float>();
      const int64_t inner = out_shape[rank - 1];
      const int64_t* last_idx = axes[rank - 1].idx.data();
      int64_t rows = 1;
      for (int d = 0; d + 1 < rank; ++d) rows *= out_shape[d];
      std::array<int64_t, kMaxResizeRank> o{};
      int64_t prev_base = -1;
      for (int64_t r = 0; r < rows && inner > 0; ++r) {
        int64_t base = 0;
        for (int d = 0; d + 1 < rank; ++d) base += axes[d].idx[static_cast<size_t>(o[d])] * in_strides[d];
        float* yr = y + r * inner;
        if (base == prev_base) {
          std::memcpy(yr, yr - inner, static_cast<size_t>(inner) * sizeof(float));
        } else {
          const float* xr = x + base;
          for (int64_t i = 0; i < inner; ++i) yr[i] = xr[last_idx[i]];
        }
        prev_base = base;
        for (int d = rank - 2; d >= 0; --d) {
          if (++o[d] < out_shape[d]) break;
          o[d] = 0;
        }
      }
      return Status::ok();
    });
  }
  return make_fn_kernel([=](const KernelContext& k) {
    const float* x = k.input(0).data_as<float>();
    float* y = k.output(0).data_as<float>();
    std::array<int64_t, kMaxResizeRank> o{};
    int64_t o_lin = 0;
    do {
      bool outside = false;
      for (int d = 0; d < rank; ++d) outside = outside || axes[d].outside[o[d]];
      if (outside) {
        y[o_lin++] = extrapolation;
      } else {
        double acc = 0;
        std::array<int, kMaxResizeRank> j{};
        bool more = true;
        while (more) {
          double w = 1;
          int64_t off = 0;
          for (int d = 0; d < rank; ++d) {
            const size_t t = static_cast<size_t>(o[d] * axes[d].taps + j[d]);
            w *= axes[d].w[t];
            off += axes[d].idx[t] * in_strides[d];
          }
          if (w != 0) acc += w * x[off];
          // Next tap combination (row-major over dims).
          more = false;
          for (int d = rank - 1; d >= 0; --d) {
            if (++j[d] < axes[d].taps) { more = true; break; }
            j[d] = 0;
          }
        }
        y[o_lin++] = static_cast<float>(acc);
      }
      // Next output index.
      bool wrapped = true;
      for (int d = rank - 1; d >= 0; --d) {
        if (++o[d] < out_shape[d]) { wrapped = false; break; }
        o[d] = 0;
      }
      if (wrapped) break;
    } while (true);
    return Status::ok();
  });
}

Result<std::unique_ptr<Kernel>> make_Resize(const CompileContext& ctx) {
  auto in = [&](size_t i) { return ctx.has_input(i) ? &ctx.input(i) : nullptr; };
  Result<ResizeParams> p = ctx.node.opset < 11 ? resize_params(ctx.node, ctx.input(0).shape, nullptr, in(1), nullptr)
                                               : resize_params(ctx.node, ctx.input(0).shape, in(1), in(2), in(3));
  TSR_RETURN_IF_ERROR(p.status());
  return make_resize_kernel(p.value());
}

}  // namespace tessera::ref
