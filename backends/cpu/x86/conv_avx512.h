// AVX-512 pieces of the 2-D convolution (conv_avx512.cc), both reading input rows in place
// with masked loads, so that zero padding costs nothing:
// - the depthwise plane (group == channels, one input channel per output);
// - the depthwise conv of 16 channels at a time with the channels in the vector lanes
//   (small planes);
// - one row of the im2col matrix (the GEMM path's B operand), and the transposed im2col
//   matrix gathered straight into the packed A of the transposed product.
// The general x86 code (conv_x86.cc) stays for other CPUs and shapes.
//
// Depthwise:
// Math (ONNX Conv-11, one plane, NCHW; the summation order of the reference's
// conv2d_plane: bias first, then the taps row-major, then the residual and the clamp):
//   Y[oy, ox] = clamp(B + sum_{kh, kw} W[kh, kw] * X[oy*sh + kh*dh - ph, ox*sw + kw*dw - pw]
//                     + Z[oy, ox], lo, hi)
// with X zero outside [0, ih) x [0, iw).
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/ops/spatial_attrs.h"

namespace tessera::cpu {

/// One plane's geometry: input ih x iw, output oh x ow, kernel kh x kw, strides, dilations
/// and the leading pads (elements).
struct Conv2dGeometry {
  int64_t ih = 0, iw = 0, oh = 0, ow = 0, kh = 0, kw = 0, sh = 1, sw = 1, dh = 1, dw = 1, ph = 0, pw = 0;
};

/// The geometry of a 2-D window (window_geometry in runtime/ops/spatial_attrs.h, rank 2).
inline Conv2dGeometry conv2d_geometry(const WindowGeometry& w) {
  Conv2dGeometry g;
  g.ih = w.in[0], g.iw = w.in[1], g.oh = w.out[0], g.ow = w.out[1], g.kh = w.kernel[0], g.kw = w.kernel[1];
  g.sh = w.strides[0], g.sw = w.strides[1], g.dh = w.dilations[0], g.dw = w.dilations[1];
  g.ph = w.pads_begin[0], g.pw = w.pads_begin[1];
  return g;
}

constexpr int64_t kDepthwiseAvx512MaxTaps = 64;     // kh * kw
constexpr int64_t kDepthwiseAvx512MaxKh = 16;
constexpr int64_t kDepthwiseAvx512ZeroMargin = 64;  // floats before and after DepthwisePlan::zeros' row

/// True when depthwise_plane_avx512 takes this geometry: stride along W of 1 or 2, any
/// stride along H, kh <= 16, kh * kw <= 64, leading pad along W at most 64.
inline bool depthwise_avx512_supported(const Conv2dGeometry& g) {
  return (g.sw == 1 || g.sw == 2) && g.sh >= 1 && g.kh >= 1 && g.kw >= 1 && g.kh <= kDepthwiseAvx512MaxKh &&
         g.kh * g.kw <= kDepthwiseAvx512MaxTaps && g.ow >= 1 && g.oh >= 1 && g.dh >= 1 && g.dw >= 1 && g.pw >= 0 &&
         g.pw <= kDepthwiseAvx512ZeroMargin && (g.kw - 1) * g.dw - g.pw + 32 <= kDepthwiseAvx512ZeroMargin + g.iw;
}

/// What every plane of one geometry shares, computed once when the kernel is compiled: per
/// 16-column output block b and kernel column kw, the input column of lane 0 (base) and
/// the lanes of the tap's load that fall inside the input row (mask: 16 lanes at stride 1,
/// 32 at stride 2 of which the even ones are kept), and per block the lanes of the store.
/// The output is computed in tiles of `tile_rows` rows x `tile_blocks` 16-column blocks (one
/// accumulator each), the shape chosen per geometry to waste the least work on partial
/// tiles while keeping 6 to 8 independent FMA chains; the tables are padded to whole tiles
/// (padding blocks have empty masks).
struct DepthwisePlan {
  Conv2dGeometry g;
  int64_t blocks = 0;                 // ceil(ow / 16)
  int tile_rows = 4, tile_blocks = 2;
  std::vector<int64_t> base;          // padded blocks * kw
  std::vector<uint32_t> mask;         // padded blocks * kw
  std::vector<uint16_t> store_mask;   // padded blocks
  std::vector<float> zeros;           // iw + 2 * kDepthwiseAvx512ZeroMargin zeros
};

/// The plan of a supported geometry (depthwise_avx512_supported).
DepthwisePlan make_depthwise_plan(const Conv2dGeometry& g);

/// Y (oh x ow, row-major) = the formula above for X (ih x iw) and W (kh x kw, row-major);
/// zp (oh x ow) may be null (no residual); lo/hi = -inf/+inf for no clamp (Relu: 0/+inf,
/// Clip: its bounds). Only call on a CPU with AVX-512F.
void depthwise_plane_avx512(const DepthwisePlan& p, const float* xp, const float* wp, float bias, const float* zp,
                            float* yp, float lo, float hi);

/// One row of the im2col matrix of a 2-D conv (stride along W 1 or 2), for output
/// positions [j0, j0 + nb) (flattened oy * ow + ox) and the tap (ky, kx):
///   dst[j] = X[oy*sh - ph + ky*dh, ox*sw - pw + kx*dw] for j0 + j = oy * ow + ox,
///   0 where that is outside the ih x iw plane xc.
/// Writes dst[0, nb) and may write garbage up to 15 floats past nb (dst must have room).
/// Only call on a CPU with AVX-512F, with g.sw of 1 or 2.
void im2col_row_avx512(const Conv2dGeometry& g, const float* xc, int64_t ky, int64_t kx, int64_t j0, int64_t nb,
                       float* dst);

/// Depthwise with the channels in the vector lanes (multiplier 1: output channel c reads
/// input channel c), 16 channels at a time, for planes whose rows fill few 16-float vectors
/// (MobileNetV2's 14 x 14 and 7 x 7 planes use 14 and 7 of 16 lanes plane by plane):
///   1. the 16 input planes are transposed (16 x 16 register transposes) into a zero-padded
///      tile T[r][q][16] covering every tap's reach, T[r][q][c] = X_c[r - ph, q - pw];
///   2. each output vector Y[oy][ox][16] = B + sum_{kh, kw} W[kh, kw][16] *
///      T[oy*sh + kh*dh][ox*sw + kw*dw][16], 8 outputs at a time (one load and FMA per tap);
///   3. transposed back to the 16 output planes, with the residual Z and the clamp [lo, hi].
/// The summation order per output is the reference's (bias, then the taps row-major, then
/// Z), so results match it exactly. Scratch: depthwise_lanes_scratch_floats(g) floats.
struct DepthwiseLanesShape {
  int64_t tile_rows = 0, tile_cols = 0;  // T's extent: every input row and column a tap reads
};
DepthwiseLanesShape depthwise_lanes_shape(const Conv2dGeometry& g);
size_t depthwise_lanes_scratch_floats(const Conv2dGeometry& g);

/// The weights of channels c0 .. c0 + channels - 1 (channels <= 16) in the lanes' layout:
/// wl[t * 16 + c] = w[c * taps + t] (w at channel c0's taps, taps consecutive per channel),
/// 0 for c >= channels; wl holds taps * 16 floats. Done once at plan time for constant
/// weights.
void depthwise_lanes_weights(const float* w, int64_t taps, int channels, float* wl);

/// Channels c0 .. c0 + channels - 1 (channels <= 16): x, z and y point at channel c0's
/// plane (planes ih*iw resp. oh*ow floats apart), wl at their weights as
/// depthwise_lanes_weights lays them out, bias at c0's bias (or null: 0); z may be null.
/// lo/hi as depthwise_plane_avx512. Needs kh * kw <= kDepthwiseAvx512MaxTaps. Only call on
/// a CPU with AVX-512F.
void depthwise_lanes_avx512(const Conv2dGeometry& g, const float* x, const float* wl, const float* bias, const float* z,
                            float* y, int channels, float lo, float hi, float* scratch);

/// The same on AVX2 (conv_dw_avx2.cc), 8 channels at a time: channels <= 8, the weights in
/// depthwise_lanes8_weights' layout (wl[t * 8 + c]), scratch of
/// depthwise_lanes8_scratch_floats(g) floats (64-byte aligned). Only call on a CPU with
/// AVX2 and FMA.
size_t depthwise_lanes8_scratch_floats(const Conv2dGeometry& g);
void depthwise_lanes8_weights(const float* w, int64_t taps, int channels, float* wl);
void depthwise_lanes_avx2(const Conv2dGeometry& g, const float* x, const float* wl, const float* bias, const float* z,
                          float* y, int channels, float lo, float hi, float* scratch);

constexpr int64_t kIm2colPackedMaxTaps = 64;  // kh * kw of im2col_packed_a_avx512

/// The transposed im2col matrix of a 2-D conv, written straight in sgemm's pre-packed A
/// layout (sgemm_pack_a, MR-tall panels per KC block of columns) for the product
/// Y^T (rows x C kh kw) = col^T W^T:
///   A[j, (c, ky, kx)] = X_i[c, oy*sh - ph + ky*dh, ox*sw - pw + kx*dw],
///   j = i * oh * ow + oy * ow + ox (row j: image i < images, output position (oy, ox)),
///   0 where that is outside the ih x iw plane; rows past `images * oh * ow` zero.
/// x is image 0's channel 0 plane (C planes of ih x iw floats per image, images
/// image_stride floats apart, image_stride * images < 2^31); dst holds
/// round_up(images * oh * ow, mr) * C * kh * kw floats. Each panel row is one 16-lane
/// masked gather per (c, ky, kx) (the taps' offsets and padding masks worked out once per
/// panel), so nothing is copied twice. mr <= 16, kc the path's KC, kh * kw <=
/// kIm2colPackedMaxTaps. Only call on a CPU with AVX-512F.
void im2col_packed_a_avx512(const Conv2dGeometry& g, const float* x, int64_t channels, int64_t images,
                            int64_t image_stride, int mr, int64_t kc, float* dst);

}  // namespace tessera::cpu
