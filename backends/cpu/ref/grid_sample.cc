// GridSample reference kernel, N-d (see runtime/ops/grid_sample.cc), following the ONNX
// reference implementation (onnx/reference/ops/op_grid_sample.py). Per spatial dim d of
// size L, the normalized coordinate g is denormalized,
//   align_corners: x = (g + 1) / 2 * (L - 1);   else: x = ((g + 1) * L - 1) / 2,
// nearest rounds it half to even, and a coordinate outside [lo, hi] (align_corners: [0, L-1],
// else [-0.5, L-0.5]) is clamped to [0, L-1] (border) or reflected into [lo, hi]
// (reflection). Then each dim gets taps (input index, weight):
//   nearest: 1 tap at x;
//   linear:  floor(x), floor(x) + 1 with weights 1 - t, t (t = x - floor(x));
//   cubic:   floor(x) - 1 .. floor(x) + 2 with Keys' weights (a = -0.75),
// every tap index read with the padding rule (zeros: 0 outside; border: clamped index;
// reflection: reflected, truncated and clamped index), and
//   Y[n, c, o] = sum over tap combinations of prod_d w_d * X[n, c, i_1, ..., i_r]  (in double).
// Non-finite grid values are clamped to +-1e12 (NaN to -1e12) before any integer conversion.
#include <array>
#include <cmath>

#include "backends/cpu/ref/nd_index.h"
#include "backends/cpu/ref/ref_kernels.h"

namespace tessera::ref {

namespace {

enum class Mode { kNearest, kLinear, kCubic };
enum class Pad { kZeros, kBorder, kReflection };

constexpr int kMaxTaps = 4;

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

/// The sampling rule of one node, fixed at compile time.
struct Sampler {
  Mode mode;
  Pad pad;
  bool align;

  double lo(int64_t) const { return align ? 0.0 : -0.5; }
  double hi(int64_t len) const { return align ? static_cast<double>(len) - 1.0 : static_cast<double>(len) - 0.5; }

  /// Index `i` along a dim of `len` with the padding rule; -1: outside, the value is 0.
  int64_t index(int64_t i, int64_t len) const {
    if (pad == Pad::kZeros) return i >= 0 && i < len ? i : -1;
    if (pad == Pad::kBorder) return std::min(std::max<int64_t>(i, 0), len - 1);
    const int64_t r = static_cast<int64_t>(reflect(static_cast<double>(i), lo(len), hi(len)));
    return std::min(std::max<int64_t>(r, 0), len - 1);
  }

  /// The taps of normalized coordinate `g` along a dim of `len` (1, 2 or 4 by mode);
  /// returns their count.
  int taps(double g, int64_t len, int64_t* idx, double* w) const {
    if (std::isnan(g)) g = -1e12;
    g = std::min(std::max(g, -1e12), 1e12);
    double x = align ? (g + 1) / 2.0 * static_cast<double>(len - 1) : ((g + 1) * static_cast<double>(len) - 1) / 2.0;
    if (mode == Mode::kNearest) x = std::nearbyint(x);  // half to even, as the reference's np.rint
    const double l = lo(len), h = hi(len);
    if (x < l || x > h) {
      if (pad == Pad::kBorder) x = std::min(std::max(x, 0.0), static_cast<double>(len - 1));
      else if (pad == Pad::kReflection) x = reflect(x, l, h);
    }
    if (mode == Mode::kNearest) {
      idx[0] = index(static_cast<int64_t>(x), len);
      w[0] = 1;
      return 1;
    }
    const int64_t x0 = static_cast<int64_t>(std::floor(x));
    const double t = x - static_cast<double>(x0);
    if (mode == Mode::kLinear) {
      idx[0] = index(x0, len);
      idx[1] = index(x0 + 1, len);
      w[0] = 1 - t;
      w[1] = t;
      return 2;
    }
    cubic_coeffs(t, w);
    for (int j = 0; j < 4; ++j) idx[j] = index(x0 - 1 + j, len);
    return 4;
  }
};

}  // namespace

Result<std::unique_ptr<Kernel>> make_GridSample(const CompileContext& ctx) {
  const Shape xs = ctx.input(0).shape, ys = ctx.outputs[0].shape;
  const int nd = static_cast<int>(xs.size()) - 2;
  if (nd < 1 || nd > kMaxSpatialDims) return ctx.error("bad X rank");
  const std::string m = ctx.node.attr_s("mode", ctx.node.opset >= 20 ? "linear" : "bilinear");
  const std::string p = ctx.node.attr_s("padding_mode", "zeros");
  const Sampler s{m == "nearest" ? Mode::kNearest : (m == "bicubic" || m == "cubic") ? Mode::kCubic : Mode::kLinear,
                  p == "border" ? Pad::kBorder : p == "reflection" ? Pad::kReflection : Pad::kZeros,
                  ctx.node.attr_i("align_corners", 0) != 0};
  const DType dt = ctx.input(0).dtype;
  const std::vector<int64_t> in(xs.begin() + 2, xs.end()), out(ys.begin() + 2, ys.end());
  // Taps per dim (the same for every dim): the box the tap combinations run over.
  const std::vector<int64_t> tap_box(static_cast<size_t>(nd), s.mode == Mode::kNearest ? 1 : s.mode == Mode::kLinear ? 2 : 4);
  return make_fn_kernel([=](const KernelContext& k) -> Status {
    auto run = [&](auto tag) {
      using T = decltype(tag);
      const int64_t N = xs[0], C = xs[1], in_size = product(in), out_size = product(out);
      const T* x = k.input(0).data_as<T>();
      const T* grid = k.input(1).data_as<T>();
      T* y = k.output(0).data_as<T>();
      std::array<int64_t, kMaxSpatialDims * kMaxTaps> idx{};
      std::array<double, kMaxSpatialDims * kMaxTaps> w{};
      for (int64_t n = 0; n < N; ++n)
        for (int64_t o = 0; o < out_size; ++o) {
          const T* g = grid + (n * out_size + o) * nd;
          for (int d = 0; d < nd; ++d)  // grid holds the innermost dim's coordinate first
            s.taps(static_cast<double>(g[nd - 1 - d]), in[d], &idx[d * kMaxTaps], &w[d * kMaxTaps]);
          for (int64_t c = 0; c < C; ++c) {
            const T* plane = x + (n * C + c) * in_size;
            double v = 0;
            SpatialIndex j{};
            do {
              double wt = 1;
              int64_t lin = 0;
              for (int d = 0; d < nd; ++d) {
                const int64_t i = idx[d * kMaxTaps + j[d]];
                wt *= w[d * kMaxTaps + j[d]];
                if (i < 0) {
                  lin = -1;
                  break;
                }
                lin = lin * in[d] + i;
              }
              if (lin >= 0) v += wt * static_cast<double>(plane[lin]);
            } while (next_index(j, tap_box, nd));
            y[(n * C + c) * out_size + o] = static_cast<T>(v);
          }
        }
    };
    if (dt == DType::kFloat64) run(double{});
    else run(float{});
    return Status::ok();
  });
}

}  // namespace tessera::ref
