// RoiAlign reference kernel (runtime/ops/roi_align.cc), following the ONNX operator spec
// (RoiAlign-16) and its reference implementation, which mirrors onnxruntime's CPU kernel.
// For ROI r with batch b = batch_indices[r] (offset o = 0.5 for half_pixel, else 0):
//   start = roi * spatial_scale - o, size = end - start (output_half_pixel: size >= 1),
//   bin = size / pooled, grid = sampling_ratio > 0 ? sampling_ratio : ceil(size / pooled),
//   sample (iy, ix) of bin (ph, pw): y = start_h + ph * bin_h + (iy + 0.5) * bin_h / grid_h,
//   likewise x. A sample with y < -1, y > H, x < -1 or x > W reads 0; otherwise it is
//   clamped to >= 0 and interpolated bilinearly from its 4 neighbours (at the last row or
//   column both neighbours are that row/column) with weights w1..w4.
//   avg: Y = sum over samples of sum_k wk * vk, divided by max(grid_h * grid_w, 1).
//   max: Y = max over samples of max_k (wk * vk): the maximum of the weighted corners, not of
//        the interpolated values. This is opset 10's max as onnxruntime computes it and as
//        the ONNX reference implementation (and so the ONNX node test) keeps for every opset.
// A bin with no samples (a degenerate half_pixel ROI) is 0. A batch index outside [0, N) or a
// non-finite ROI coordinate is an error (invalid_argument; the executor adds the node's name).
#include <cmath>

#include "backends/cpu/ref/ref_kernels.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_RoiAlign(const CompileContext& ctx) {
  const Node& n = ctx.node;
  const Shape xs = ctx.input(0).shape;
  const int64_t R = ctx.input(1).shape[0];
  const int64_t PH = n.attr_i("output_height", 1), PW = n.attr_i("output_width", 1);
  const int64_t sampling_ratio = n.attr_i("sampling_ratio", 0);
  const double scale = n.attr_f("spatial_scale", 1.0f);
  const bool is_max = n.attr_s("mode", "avg") == "max";
  const bool half_pixel =
      n.attr_s("coordinate_transformation_mode", n.opset >= 16 ? "half_pixel" : "output_half_pixel") == "half_pixel";
  const DType xdt = ctx.input(0).dtype, bdt = ctx.input(2).dtype;
  return make_fn_kernel([=](const KernelContext& k) -> Status {
    auto run = [&](auto tag) -> Status {
      using T = decltype(tag);
      const int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3];
      const T* x = k.input(0).data_as<T>();
      const T* rois = k.input(1).data_as<T>();
      T* y = k.output(0).data_as<T>();
      for (int64_t r = 0; r < R; ++r) {
        const int64_t b = bdt == DType::kInt64 ? k.input(2).data_as<int64_t>()[r] : k.input(2).data_as<int32_t>()[r];
        if (b < 0 || b >= N)
          return invalid_argument("RoiAlign: batch_indices[" + std::to_string(r) + "] = " + std::to_string(b) +
                                  " is outside [0, " + std::to_string(N) + ")");
        const T* roi = rois + r * 4;
        for (int q = 0; q < 4; ++q)
          if (!std::isfinite(static_cast<double>(roi[q])))
            return invalid_argument("RoiAlign: rois[" + std::to_string(r) + "] has a non-finite coordinate");
        const double off = half_pixel ? 0.5 : 0.0;
        const double sw = roi[0] * scale - off, sh = roi[1] * scale - off;
        const double ew = roi[2] * scale - off, eh = roi[3] * scale - off;
        double rw = ew - sw, rh = eh - sh;
        if (!half_pixel) {
          rw = std::max(rw, 1.0);
          rh = std::max(rh, 1.0);
        }
        const double bh = rh / static_cast<double>(PH), bw = rw / static_cast<double>(PW);
        const int64_t gh = sampling_ratio > 0 ? sampling_ratio : static_cast<int64_t>(std::ceil(rh / static_cast<double>(PH)));
        const int64_t gw = sampling_ratio > 0 ? sampling_ratio : static_cast<int64_t>(std::ceil(rw / static_cast<double>(PW)));
        const double count = static_cast<double>(std::max<int64_t>(gh * gw, 1));
        for (int64_t c = 0; c < C; ++c) {
          const T* plane = x + (b * C + c) * H * W;
          for (int64_t ph = 0; ph < PH; ++ph)
            for (int64_t pw = 0; pw < PW; ++pw) {
              double acc = 0.0;
              bool first = true;
              for (int64_t iy = 0; iy < gh; ++iy) {
                double yy = sh + static_cast<double>(ph) * bh + (static_cast<double>(iy) + 0.5) * bh / static_cast<double>(gh);
                for (int64_t ix = 0; ix < gw; ++ix) {
                  double xx = sw + static_cast<double>(pw) * bw + (static_cast<double>(ix) + 0.5) * bw / static_cast<double>(gw);
                  double w[4] = {0, 0, 0, 0}, v[4] = {0, 0, 0, 0};
                  if (!(yy < -1.0 || yy > static_cast<double>(H) || xx < -1.0 || xx > static_cast<double>(W))) {
                    double py = std::max(yy, 0.0), px = std::max(xx, 0.0);
                    int64_t y0 = static_cast<int64_t>(py), x0 = static_cast<int64_t>(px), y1, x1;
                    if (y0 >= H - 1) { y0 = y1 = H - 1; py = static_cast<double>(y0); } else { y1 = y0 + 1; }
                    if (x0 >= W - 1) { x0 = x1 = W - 1; px = static_cast<double>(x0); } else { x1 = x0 + 1; }
                    const double ly = py - static_cast<double>(y0), lx = px - static_cast<double>(x0);
                    const double hy = 1.0 - ly, hx = 1.0 - lx;
                    w[0] = hy * hx; w[1] = hy * lx; w[2] = ly * hx; w[3] = ly * lx;
                    v[0] = plane[y0 * W + x0]; v[1] = plane[y0 * W + x1];
                    v[2] = plane[y1 * W + x0]; v[3] = plane[y1 * W + x1];
                  }
                  if (is_max) {
                    const double m = std::max(std::max(w[0] * v[0], w[1] * v[1]), std::max(w[2] * v[2], w[3] * v[3]));
                    acc = first ? m : std::max(acc, m);
                    first = false;
                  } else {
                    acc += w[0] * v[0] + w[1] * v[1] + w[2] * v[2] + w[3] * v[3];
                  }
                }
              }
              y[((r * C + c) * PH + ph) * PW + pw] = static_cast<T>(is_max ? acc : acc / count);
            }
        }
      }
      return Status::ok();
    };
    return xdt == DType::kFloat32 ? run(float{}) : run(double{});
  });
}

}  // namespace tessera::ref
