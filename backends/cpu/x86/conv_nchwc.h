// 2-D convolution in the blocked layout NCHW16c (ONNX Runtime's "NCHWc", Intel's
// "nChw16c"): a tensor of logical shape [N, C, H, W] is stored as
//   Xb[n][c / 16][h][w][c % 16],  ceil(C / 16) blocks of 16 channels,
// the channels past C in the last block padding (any finite value; weights read them as 0).
// One 16-channel block of one pixel is one AVX-512 vector (two AVX2 vectors), so a Conv
// reads its input in place, with no im2col matrix and no transposes, and runs of convolutions keep the layout
// from one to the next (the planner converts at the edges of such runs: nchwc_layout.h).
//
// Math: ONNX Conv-1/11, 2-D, group 1 or depthwise (group == C_in == C_out), with the fused
// tail of backends/backend.h (a residual Z of the output's shape, in the same layout, then
// an activation):
//   Y[n, m, oy, ox] = act(B[m] + sum_{c, ky, kx} W[m, c, ky, kx] *
//                           X[n, c, oy*sh - ph + ky*dh, ox*sw - pw + kx*dw] + Z[n, m, oy, ox]),
// X zero outside the ih x iw plane.
//
// Method (AVX-512 and AVX2, one template: conv_nchwc_impl.h; the direct convolution of
// Georganas et al., "Anatomy of High-Performance Deep Learning Convolutions on SIMD
// Architectures", SC 2018): each micro-tile keeps PW output pixels of one row x NOB blocks
// of 16 output channels in PW * NOB <= 28 zmm accumulators (AVX2: 2 * PW * NOB <= 12 ymm); per input channel and tap it loads NOB weight vectors and broadcasts one
// input value per pixel, so the input is the GEMM's A operand read in place (pixels PW apart
// at a fixed stride) and the pre-packed weights its B. Sums run over the channel blocks,
// then the taps, then the 16 channels of a block (another order than the reference's, so
// results match it to rounding). Depthwise convs keep 16 channels in the lanes: per tap one
// weight vector and one input vector per pixel (the reference's order: bias, taps
// row-major, then Z); the other convs add Z last, or with the bias when the taps run in
// blocks. A padded conv copies the input rows a task reads into a zero-bordered
// tile first; an unpadded one reads X in place, and a 1x1 stride-1 conv runs over the
// whole plane as one row.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "backends/backend.h"
#include "backends/cpu/x86/conv_avx512.h"
#include "backends/cpu/x86/isa_x86.h"

namespace tessera::cpu {

constexpr int64_t kNchwcBlock = 16;
constexpr int64_t kNchwcDwMaxTaps = 64;  // depthwise: kh * kw, stride along W 1 or 2
/// Products summed in one chain per output before the partial sum joins the running total
/// (conv_nchwc_impl.h: two-level summation of long reductions, as the SGEMM's KC blocks).
constexpr int64_t kChainTerms = 256;
/// Micro-tiles: at most kNchwcMaxPw512[nob] pixels for nob = 1..4 channel blocks on
/// AVX-512 (pixels x blocks <= 28 zmm accumulators, 3 left for weights and the broadcast),
/// kNchwcMaxPwAvx2[nob] on AVX2 (a block is two ymm: 2 x pixels x blocks <= 12
/// accumulators, 4 of the 16 ymm left).
constexpr int kNchwcMaxPw512[5] = {0, 14, 14, 9, 7};
constexpr int kNchwcMaxPwAvx2[5] = {0, 6, 3, 2, 1};

/// What a compiled NCHW16c conv shares across runs: geometry, the per-task tiling, the tap
/// offsets and the packed weights.
struct NchwcConvPlan {
  x86::Isa isa = x86::Isa::kAvx512;  // the micro-tiles' path: kAvx512 or kAvx2
  // Of one image. A 1x1 stride-1 unpadded conv runs over its plane as rows of ow pixels
  // (oh = ceil(H W / ow); the last row has last_ow), whatever H and W are.
  Conv2dGeometry g;
  int64_t last_ow = 0;          // pixels in the last output row (g.ow but for a 1x1 conv)
  int64_t pixels = 0;           // output pixels per plane: (oh - 1) * ow + last_ow
  int64_t c_in = 0, c_out = 0;  // logical channels
  int64_t icb = 0, ocb = 0;     // ceil(c / 16)
  bool x_blocked = true;        // X in NCHW16c; else plain NCHW (read in place or tiled)
  bool depthwise = false;       // group == c_in == c_out (X must be blocked)
  bool tiled = false;           // padded: the rows a task reads are copied into a zero-bordered tile
  // The source the taps read (the tile, or X itself): floats between channel blocks (or
  // channels, plain), between rows, between pixels of a row at stride 1 (16 or 1).
  int64_t src_plane = 0, src_row = 0, src_pitch = 0;
  int64_t tile_rows = 0, tile_cols = 0;  // a tile's extent (tiled)
  int64_t rows_per_task = 0;             // output rows per task
  int64_t ocb_per_task = 0;              // output channel blocks per task
  int nob = 2, pw = 14;                  // micro-tile: channel blocks x pixels
  // A micro-tile may wrap from one output row to the next (each pixel's source offset
  // passed in): AVX2, where rows are rarely a multiple of its 6-pixel tiles (7 x 7: 6 + 1).
  bool wrap_rows = false;
  // Taps: group g starts goff[g] floats from a pixel's base and has `inner` steps of
  // `istride` floats (blocked: 16 channels of one block, stride 1; plain: a kernel row of
  // one channel, the dilation apart).
  std::vector<int64_t> goff;
  int inner = 16;
  int64_t istride = 1;
  // Tap groups per pass over a task's rows: all of them, or as many as keep the weights
  // of nob channel blocks within 256 KiB (conv_nchwc.cc) (ResNet-50's 3x3 layers on 7 x 7:
  // 1.2 MB of weights for 4 blocks, read again for each of 7 rows without this).
  int64_t kc_groups = 1;
  // Loop order of a task: rows, micro-tiles, then channel blocks (the task's weights fit
  // L2: the tile's input is read from L1 by every block); else blocks, taps, rows.
  bool rows_outer = false;
  // Weights: per 16-channel output block, goff.size() * inner * 16 floats, [group][inner]
  // [16 lanes], 0 past c_in and c_out; depthwise: per block taps * 16.
  std::unique_ptr<float, void (*)(void*)> w{nullptr, &std::free};  // 64-byte aligned
  std::vector<float> bias;  // ocb * 16, 0 past c_out (or when the node has no B)
  FusedActivation act;   // the fused activation (and affine map): in registers, but
  bool post_act = false;  // Sigmoid, Tanh, Gelu: applied to each output row after its tiles
  int64_t tile_floats() const;          // per task
};

/// Builds the plan, for path `isa` (kAvx512 or kAvx2), of one image's geometry g (any
/// kernel, strides, dilations and leading pads; the output size in g decides the trailing
/// pads), c_in -> c_out channels; `w` is W (c_out x c_in/group x kh x kw, row-major), `b` B
/// (c_out) or null; act the fused activation; threads the pool's size (tasks are cut so
/// that each thread gets an equal share of one image's rows x channel blocks where whole
/// rows and blocks allow: a task count the threads divide, or channel blocks split among
/// them).
/// Returns false for what this path does not take: a group that is neither 1 nor depthwise
/// (group == c_in == c_out), a depthwise conv with a plain X, a stride along W above 2 or
/// more than kNchwcDwMaxTaps taps, or weights that cannot be allocated.
bool make_nchwc_conv_plan(x86::Isa isa, const Conv2dGeometry& g, int64_t c_in, int64_t c_out, int64_t group,
                          bool x_blocked, const float* w, const float* b, const FusedActivation& act, int threads, NchwcConvPlan* p);

/// Tasks per image: output-row ranges x output-channel-block ranges.
int64_t nchwc_conv_tasks(const NchwcConvPlan& p);

/// Runs task `t` (< nchwc_conv_tasks(p)) of one image: x, z and y point at the image (x
/// in its layout, z and y NCHW16c; z may be null, or y itself: each element of z is read
/// before that element of y is written), tile holds p.tile_floats() floats (64-byte
/// aligned). Writes the task's rows and channel blocks of Y, the channels past c_out as 0.
/// nchwc_conv_task dispatches on p.isa; the _avx512 (_avx2) instance needs a CPU with
/// AVX-512F (AVX2 and FMA).
void nchwc_conv_task(const NchwcConvPlan& p, const float* x, const float* z, float* y, int64_t t, float* tile);
void nchwc_conv_task_avx512(const NchwcConvPlan& p, const float* x, const float* z, float* y, int64_t t, float* tile);
void nchwc_conv_task_avx2(const NchwcConvPlan& p, const float* x, const float* z, float* y, int64_t t, float* tile);

/// MaxPool (ONNX MaxPool-12, no Indices) of one image's channel blocks [cb0, cb1) in
/// NCHW16c: y (blocks x oh x ow x 16) = the max over the taps inside x (blocks x ih x iw x
/// 16; g's kernel, strides, dilations and leading pads), a NaN tap skipped as by the
/// reference, the lowest float where no tap is inside. And GlobalAveragePool (-1) of one
/// image from NCHW16c x (blocks x hw x 16) to plain y (c floats): the float mean of each
/// channel (the reference sums in double: they agree to rounding). The _avx512 (_avx2)
/// instances need a CPU with AVX-512F (AVX2 and FMA).
void nchwc_max_pool_avx512(const Conv2dGeometry& g, const float* x, int64_t cb0, int64_t cb1, float* y);
void nchwc_global_average_pool_avx512(const float* x, int64_t c, int64_t hw, int64_t cb0, int64_t cb1, float* y);
void nchwc_max_pool_avx2(const Conv2dGeometry& g, const float* x, int64_t cb0, int64_t cb1, float* y);
void nchwc_global_average_pool_avx2(const float* x, int64_t c, int64_t hw, int64_t cb0, int64_t cb1, float* y);

/// NCHW -> NCHW16c for one image: x (c x hw) -> y (ceil(c/16) x hw x 16), padding
/// channels 0. And back: y (c x hw) from x (ceil(c/16) x hw x 16). Channel blocks
/// [cb0, cb1) only. The _avx512 (_avx2) instances need a CPU with AVX-512F (AVX2).
void nchwc_from_nchw_avx512(const float* x, int64_t c, int64_t hw, int64_t cb0, int64_t cb1, float* y);
void nchw_from_nchwc_avx512(const float* x, int64_t c, int64_t hw, int64_t cb0, int64_t cb1, float* y);
void nchwc_from_nchw_avx2(const float* x, int64_t c, int64_t hw, int64_t cb0, int64_t cb1, float* y);
void nchw_from_nchwc_avx2(const float* x, int64_t c, int64_t hw, int64_t cb0, int64_t cb1, float* y);

}  // namespace tessera::cpu
