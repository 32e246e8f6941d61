// DeformConv reference kernel (runtime/ops/deform_conv.cc; ONNX DeformConv-19, the math of
// arXiv:1811.11168 as the ONNX reference implementation and torchvision's deform_conv2d
// compute it). For output position o of batch n and input channel ic, tap k (row-major over
// the kernel, k_lin its linear index) samples X at the fractional position
//   p[d] = o[d] * strides[d] - pads_begin[d] + k[d] * dilations[d] + offset[n, og, k_lin, d, o]
// with og = ic / (C / offset_group), by multilinear interpolation over the 2^n corners
// floor(p) + {0, 1}^n, each corner outside X reading 0 (zero padding; ONNX's reference does it
// with GridSample(align_corners=1, padding_mode=zeros)). Then
//   Y[n, m, o] = B[m] + sum_{c < C/group, k} W[m, c, k] * mask[n, og, k_lin, o] * sample(n, g*C/group + c, k, o)
// with g = m / (oC / group). Sums are in double, rounded to T once.
// Per (n, group, o) the C/group * prod(k) samples are gathered into scratch (doubles) once and
// shared by the group's output channels. A non-finite sampling position (a NaN or infinite
// offset) is an error (invalid_argument; the executor adds the node's name).
#include <cmath>

#include "backends/cpu/ref/nd_index.h"
#include "backends/cpu/ref/ref_kernels.h"
#include "tessera/half.h"

namespace tessera::ref {

namespace {

/// Element i of a float, double or float16 tensor as a double.
inline double load(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kFloat64: return t.data_as<double>()[i];
    case DType::kFloat16: return half_to_float(t.data_as<uint16_t>()[i]);
    default: return t.data_as<float>()[i];
  }
}

inline void store(Tensor& t, int64_t i, double v) {
  switch (t.dtype()) {
    case DType::kFloat64: t.data_as<double>()[i] = v; break;
    case DType::kFloat16: t.data_as<uint16_t>()[i] = float_to_half(static_cast<float>(v)); break;
    default: t.data_as<float>()[i] = static_cast<float>(v); break;
  }
}

/// Multilinear interpolation of the plane starting at element `base` of x (spatial dims
/// `in`, row-major) at position p; corners outside the plane read 0.
double sample(const Tensor& x, int64_t base, const std::vector<int64_t>& in, int nd, const double* p) {
  SpatialIndex lo{};
  double frac[kMaxSpatialDims];
  for (int d = 0; d < nd; ++d) {
    // Every corner lies outside: the whole sample is 0 (also keeps floor() in int64 range).
    if (p[d] <= -1.0 || p[d] >= static_cast<double>(in[d])) return 0.0;
    const double f = std::floor(p[d]);
    lo[d] = static_cast<int64_t>(f);
    frac[d] = p[d] - f;
  }
  double v = 0.0;
  for (int corner = 0; corner < (1 << nd); ++corner) {
    double wgt = 1.0;
    int64_t lin = 0;
    bool inside = true;
    for (int d = 0; d < nd; ++d) {
      const int bit = (corner >> (nd - 1 - d)) & 1;
      const int64_t q = lo[d] + bit;
      if (q < 0 || q >= in[d]) {
        inside = false;
        break;
      }
      wgt *= bit ? frac[d] : 1.0 - frac[d];
      lin = lin * in[d] + q;
    }
    if (inside && wgt != 0.0) v += wgt * load(x, base + lin);
  }
  return v;
}

}  // namespace

Result<std::unique_ptr<Kernel>> make_DeformConv(const CompileContext& ctx) {
  const Shape& xs = ctx.input(0).shape;
  const Shape& ws = ctx.input(1).shape;
  std::vector<int64_t> w_kernel(ws.begin() + 2, ws.end());
  TSR_ASSIGN_OR_RETURN(WindowGeometry g, window_geometry(ctx.node, xs, w_kernel, false));
  const int64_t group = ctx.node.attr_i("group", 1), offset_group = ctx.node.attr_i("offset_group", 1);
  const int64_t batch = xs[0], c_in = xs[1], m_out = ws[0];
  const int64_t cg = c_in / group, mg = m_out / group, c_per_og = c_in / offset_group;
  const int64_t taps = product(g.kernel), in_size = product(g.in), out_size = product(g.out);
  const bool has_bias = ctx.has_input(3), has_mask = ctx.has_input(4);
  const size_t scratch = static_cast<size_t>(cg * taps) * sizeof(double);
  return make_fn_kernel(
      [=](const KernelContext& k) -> Status {
        const Tensor& x = k.input(0);
        const Tensor& w = k.input(1);
        const Tensor& off = k.input(2);
        Tensor& y = k.output(0);
        double* col = static_cast<double*>(k.scratch);
        const int nd = g.rank;
        for (int64_t n = 0; n < batch; ++n) {
          for (int64_t grp = 0; grp < group; ++grp) {
            SpatialIndex o{};
            int64_t o_lin = 0;
            do {
              // Gather the samples of every (c, tap) of this group at output position o.
              for (int64_t c = 0; c < cg; ++c) {
                const int64_t ic = grp * cg + c, og = ic / c_per_og;
                SpatialIndex kk{};
                int64_t k_lin = 0;
                do {
                  double p[kMaxSpatialDims];
                  for (int d = 0; d < nd; ++d) {
                    const int64_t off_ch = (og * taps + k_lin) * nd + d;
                    const double delta = load(off, (n * offset_group * taps * nd + off_ch) * out_size + o_lin);
                    p[d] = static_cast<double>(o[d] * g.strides[d] - g.pads_begin[d] + kk[d] * g.dilations[d]) + delta;
                    if (!std::isfinite(p[d]))
                      return invalid_argument("DeformConv: offset holds a non-finite value at batch " + std::to_string(n) +
                                              ", channel " + std::to_string(off_ch) + ", output position " +
                                              std::to_string(o_lin));
                  }
                  double v = sample(x, (n * c_in + ic) * in_size, g.in, nd, p);
                  if (has_mask) v *= load(k.input(4), ((n * offset_group + og) * taps + k_lin) * out_size + o_lin);
                  col[c * taps + k_lin] = v;
                  ++k_lin;
                } while (next_index(kk, g.kernel, nd));
              }
              for (int64_t m = grp * mg; m < (grp + 1) * mg; ++m) {
                double acc = has_bias ? load(k.input(3), m) : 0.0;
                for (int64_t i = 0; i < cg * taps; ++i) acc += load(w, m * cg * taps + i) * col[i];
                store(y, (n * m_out + m) * out_size + o_lin, acc);
              }
              ++o_lin;
            } while (next_index(o, g.out, nd));
          }
        }
        return Status::ok();
      },
      scratch);
}

}  // namespace tessera::ref
