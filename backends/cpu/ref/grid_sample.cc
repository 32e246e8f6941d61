// GridSample reference kernel, 2-D (see runtime/ops/grid_sample.cc), following the ONNX
// reference implementation: coordinates are denormalized per axis,
//   align_corners: x = (g + 1) / 2 * (W - 1);   else: x = ((g + 1) * W - 1) / 2,
// moved inside [lo, hi] (align_corners: [0, W-1], else [-0.5, W-0.5]) by clamping (border) or
// reflecting (reflection); nearest rounds half to even; linear and cubic (Keys, a = -0.75)
// weight 2x2 or 4x4 neighbours, each read with the padding rule (zeros outside, clamped
// index for border, reflected index for reflection).
#include <cmath>

#include "backends/cpu/ref/ref_kernels.h"

namespace tessera::ref {

namespace {

enum class Mode { kNearest, kLinear, kCubic };
enum class Pad { kZeros, kBorder, kReflection };

double reflect(double x, double lo, double hi) {
  const double rng = hi - lo;
  if (rng <= 0) return lo;
  if (x < lo) {
    double dx = lo - x;
    int64_t n = static_cast<int64_t>(dx / rng);
    double r = dx - static_cast<double>(n) * rng;
    return n % 2 == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    double dx = x - hi;
    int64_t n = static_cast<int64_t>(dx / rng);
    double r = dx - static_cast<double>(n) * rng;
    return n % 2 == 0 ? hi - r : lo + r;
  }
  return x;
}

void cubic_coeffs(double x, double c[4]) {
  const double a = -0.75;
  x = std::abs(x);
  c[0] = ((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a;
  c[1] = ((a + 2) * x - (a + 3)) * x * x + 1;
  c[2] = ((a + 2) * (1 - x) - (a + 3)) * (1 - x) * (1 - x) + 1;
  c[3] = ((a * (2 - x) - 5 * a) * (2 - x) + 8 * a) * (2 - x) - 4 * a;
}

}  // namespace

Result<std::unique_ptr<Kernel>> make_GridSample(const CompileContext& ctx) {
  const Shape xs = ctx.input(0).shape, ys = ctx.outputs[0].shape;
  const std::string m = ctx.node.attr_s("mode", ctx.node.opset >= 20 ? "linear" : "bilinear");
  const Mode mode = m == "nearest" ? Mode::kNearest : (m == "bicubic" || m == "cubic") ? Mode::kCubic : Mode::kLinear;
  const std::string p = ctx.node.attr_s("padding_mode", "zeros");
  const Pad pad = p == "border" ? Pad::kBorder : p == "reflection" ? Pad::kReflection : Pad::kZeros;
  const bool align = ctx.node.attr_i("align_corners", 0) != 0;
  const DType dt = ctx.input(0).dtype;
  return make_fn_kernel([=](const KernelContext& k) -> Status {
    auto run = [&](auto tag) {
      using T = decltype(tag);
      const int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3], Ho = ys[2], Wo = ys[3];
      const T* x = k.input(0).data_as<T>();
      const T* grid = k.input(1).data_as<T>();
      T* y = k.output(0).data_as<T>();
      const double lo_x = align ? 0.0 : -0.5, hi_x = align ? W - 1.0 : W - 0.5;
      const double lo_y = align ? 0.0 : -0.5, hi_y = align ? H - 1.0 : H - 0.5;
      auto denorm = [&](double g, int64_t len) {
        return align ? (g + 1) / 2.0 * static_cast<double>(len - 1) : ((g + 1) * static_cast<double>(len) - 1) / 2.0;
      };
      auto fix = [&](double v, double lo, double hi, int64_t len) {
        if (v >= lo && v <= hi) return v;
        if (pad == Pad::kBorder) return std::min(std::max(v, 0.0), static_cast<double>(len - 1));
        if (pad == Pad::kReflection) return reflect(v, lo, hi);
        return v;
      };
      // Index along one axis with the padding rule; -1 means "outside: the pixel is 0".
      auto index = [&](int64_t i, int64_t len, double lo, double hi) -> int64_t {
        if (pad == Pad::kZeros) return i >= 0 && i < len ? i : -1;
        if (pad == Pad::kBorder) return std::min(std::max<int64_t>(i, 0), len - 1);
        int64_t r = static_cast<int64_t>(reflect(static_cast<double>(i), lo, hi));
        return std::min(std::max<int64_t>(r, 0), len - 1);
      };
      for (int64_t n = 0; n < N; ++n)
        for (int64_t oy = 0; oy < Ho; ++oy)
          for (int64_t ox = 0; ox < Wo; ++ox) {
            const T* g = grid + ((n * Ho + oy) * Wo + ox) * 2;
            double fx = denorm(static_cast<double>(g[0]), W), fy = denorm(static_cast<double>(g[1]), H);
            if (mode == Mode::kNearest) {
              fx = std::nearbyint(fx);  // half to even, as the reference's np.rint
              fy = std::nearbyint(fy);
            }
            fx = fix(fx, lo_x, hi_x, W);
            fy = fix(fy, lo_y, hi_y, H);
            for (int64_t c = 0; c < C; ++c) {
              const T* plane = x + (n * C + c) * H * W;
              auto pixel = [&](int64_t iy, int64_t ix) -> double {
                int64_t yy = index(iy, H, lo_y, hi_y), xx = index(ix, W, lo_x, hi_x);
                return yy < 0 || xx < 0 ? 0.0 : static_cast<double>(plane[yy * W + xx]);
              };
              double v = 0;
              if (mode == Mode::kNearest) {
                v = pixel(static_cast<int64_t>(fy), static_cast<int64_t>(fx));
              } else if (mode == Mode::kLinear) {
                const int64_t x0 = static_cast<int64_t>(std::floor(fx)), y0 = static_cast<int64_t>(std::floor(fy));
                const double wx = fx - static_cast<double>(x0), wy = fy - static_cast<double>(y0);
                v = (1 - wy) * ((1 - wx) * pixel(y0, x0) + wx * pixel(y0, x0 + 1)) +
                    wy * ((1 - wx) * pixel(y0 + 1, x0) + wx * pixel(y0 + 1, x0 + 1));
              } else {
                const int64_t x0 = static_cast<int64_t>(std::floor(fx)), y0 = static_cast<int64_t>(std::floor(fy));
                double cx[4], cy[4];
                cubic_coeffs(fx - static_cast<double>(x0), cx);
                cubic_coeffs(fy - static_cast<double>(y0), cy);
                for (int a = 0; a < 4; ++a) {
                  double row = 0;
                  for (int b = 0; b < 4; ++b) row += cx[b] * pixel(y0 - 1 + a, x0 - 1 + b);
                  v += cy[a] * row;
                }
              }
              y[((n * C + c) * Ho + oy) * Wo + ox] = static_cast<T>(v);
            }
          }
    };
    if (dt == DType::kFloat64) run(double{});
    else run(float{});
    return Status::ok();
  });
}

}  // namespace tessera::ref
