// Depthwise 2-D convolution of one plane (group == channels, one input channel per output)
// on AVX-512, reading the input plane in place with masked loads (depthwise_avx512.cc).
// The general x86 path (padded copy, flat runs; conv_x86.cc) stays for other CPUs and
// shapes.
//
// Math (ONNX Conv-11, one plane, NCHW; the summation order of the reference's
// conv2d_plane: bias first, then the taps row-major, then the residual and the clamp):
//   Y[oy, ox] = clamp(B + sum_{kh, kw} W[kh, kw] * X[oy*sh + kh*dh - ph, ox*sw + kw*dw - pw]
//                     + Z[oy, ox], lo, hi)
// with X zero outside [0, ih) x [0, iw).
#pragma once

#include <cstdint>
#include <vector>

namespace tessera::cpu {

/// One plane's geometry: input ih x iw, output oh x ow, kernel kh x kw, strides, dilations
/// and the leading pads (elements).
struct DepthwiseGeometry {
  int64_t ih = 0, iw = 0, oh = 0, ow = 0, kh = 0, kw = 0, sh = 1, sw = 1, dh = 1, dw = 1, ph = 0, pw = 0;
};

constexpr int64_t kDepthwiseAvx512MaxTaps = 64;     // kh * kw

/// True when depthwise_plane_avx512 takes this geometry: stride along W of 1 or 2, any
/// stride along H, kh * kw <= 64.
inline bool depthwise_avx512_supported(const DepthwiseGeometry& g) {
  return (g.sw == 1 || g.sw == 2) && g.sh >= 1 && g.kh >= 1 && g.kw >= 1 && g.kh * g.kw <= kDepthwiseAvx512MaxTaps &&
         g.ow >= 1 && g.oh >= 1 && g.dh >= 1 && g.dw >= 1;
}

/// What every plane of one geometry shares, computed once when the kernel is compiled: per
/// 16-column output block b and kernel column kw, the input column of lane 0 (base) and
/// the lanes of the tap's load that fall inside the input row (mask: 16 lanes at stride 1,
/// 32 at stride 2 of which the even ones are kept), and per block the lanes of the store.
struct DepthwisePlan {
  DepthwiseGeometry g;
  int64_t blocks = 0;                 // ceil(ow / 16)
  std::vector<int64_t> base;          // blocks * kw
  std::vector<uint32_t> mask;         // blocks * kw
  std::vector<uint16_t> store_mask;   // blocks
};

/// The plan of a supported geometry (depthwise_avx512_supported).
DepthwisePlan make_depthwise_plan(const DepthwiseGeometry& g);

/// Y (oh x ow, row-major) = the formula above for X (ih x iw) and W (kh x kw, row-major);
/// zp (oh x ow) may be null (no residual); lo/hi = -inf/+inf for no clamp (Relu: 0/+inf,
/// Clip: its bounds). Only call on a CPU with AVX-512F.
void depthwise_plane_avx512(const DepthwisePlan& p, const float* xp, const float* wp, float bias, const float* zp,
                            float* yp, float lo, float hi);

}  // namespace tessera::cpu
