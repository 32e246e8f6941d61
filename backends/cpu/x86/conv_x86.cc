// Conv on the packed SGEMM (ONNX Conv-1/11), float32, N spatial dims:
//   Y[n, m, o] = B[m] + sum_{c < C/group, k} X[n, g*C/group + c, o*stride - pad_begin + k*dilation] * W[m, c, k]
// with g = m / (M/group); taps in the padding contribute 0. Geometry (output sizes, resolved
// pads of auto_pad) comes from window_geometry, as in the reference kernel (ref/conv.cc).
//
// GEMM path (im2col; Chellapilla, Puri, Simard, "High Performance Convolutional Neural
// Networks for Document Processing", IWFHR 2006): per image n and group g,
//   Y[g] (M/g x OutSpatial) = W[g] (M/g x K) * col (K x OutSpatial),  K = C/g * prod(kernel),
//   col[(c, k), o] = X[n, g*C/g + c, o*stride - pad_begin + k*dilation]  (0 in the padding).
// The output columns are cut into tiles of NB columns so that a tile of col (K x NB floats)
// stays in L2 and the scratch stays small; each tile is one sgemm writing straight into Y
// (ldc = OutSpatial), then the bias is added to the tile's rows while they are in cache
// (the sgemm epilogue's bias is per column, and Conv's is per row). A 1x1 kernel with stride
// 1 and no padding needs no im2col: X[n, group] itself is the K x OutSpatial col matrix.
// W is sgemm's A operand. When W is a plan-time constant (the usual case: weights), it is
// packed once at compile time into sgemm's panel layout, one block per group, so a run
// never repacks it (repacking cost up to a third of the time of the late ResNet-50 layers,
// whose output planes are 7x7 and whose W is 512 x 4608).
//
// Fused epilogue (CompileContext::epilogue, set by the planner): Y = act(conv + B + Z) with
// Z a residual of Y's shape; the bias, Z and the activation are applied by sgemm on each
// micro-tile while it is in registers or L1 (row_bias, addend, act), and by the direct path
// on each output plane.
//
// Narrow outputs (fewer positions than the micro-kernel's NR, at least NR channels per
// group, e.g. Silero VAD's 1-D convolutions over a few frames): the product is computed
// transposed, Y^T = col^T W^T, so the channels fill the NR-wide panels instead of a few
// positions; W^T is packed once as sgemm's B, and Y^T is transposed into Y with the bias
// (a column bias of Y^T), the addend and the activation. The images of a batch are stacked
// into one product (rows = images x positions, up to 256), so a batch of 31 four-frame
// chunks is one 124-row product instead of 31 four-row ones.
//
// Threads: with at least 2 tiles per thread (tiles over n, g and columns), each thread runs
// whole tiles (its own im2col and a one-thread sgemm, in its own slice of the scratch);
// otherwise the tiles run one after another, each im2col split over col's rows and each
// sgemm over all threads.
//
// Direct path: a 2-D conv with fewer than kDirectMaxRowsPerGroup output channels per group
// (depthwise: M/g = 1) would waste most of the sgemm micro-kernel's MR rows, so it runs
// the reference's row-wise direct loop (contiguous axpy over output columns), one (n, m)
// output plane per task, planes split over the threads.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "backends/cpu/ref/conv2d_plane.h"
#include "backends/cpu/ref/nd_index.h"
#include "backends/cpu/thread_pool.h"
#include "backends/cpu/x86/conv_winograd.h"
#include "backends/cpu/x86/conv_avx512.h"
#include "backends/cpu/x86/isa_x86.h"
#include "backends/cpu/x86/fused_tail.h"
#include "backends/cpu/x86/v16.h"
#include "backends/cpu/x86/sgemm.h"
#include "backends/cpu/x86/transpose_x86.h"
#include "backends/cpu/x86/x86_kernels.h"
#include "runtime/ops/spatial_attrs.h"

namespace tessera::x86 {

namespace {

using ref::next_index;
using ref::product;
using ref::SpatialIndex;

constexpr int64_t kDirectMaxRowsPerGroup = 4;
constexpr int64_t kColTileFloats = 64 * 1024;  // target K x NB of one col tile (256 KiB)
constexpr int64_t kMinTile = 128, kMaxTile = 4096;
constexpr int64_t kNarrowMaxRows = 256, kNarrowColFloats = 64 * 1024;  // narrow path: see make_Conv_gemm

inline size_t align64(size_t bytes) { return (bytes + 63) / 64 * 64; }
inline int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

using ref::valid_range;

// Depthwise path: output columns per register block, and the floats of slack after the
// padded input plane that a last, partial block may read (stride <= kDwMaxSlackStride;
// larger strides use the reference loop).
constexpr int kDwBlock = 32;
// The largest per-thread scratch (tile and outputs) of the AVX2 lanes depthwise; larger
// planes (PP-OCR det's 368 x 544: 13 MiB) run plane by plane.
constexpr size_t kDwLanes8MaxScratch = 4u << 20;
constexpr int64_t kDwMaxSlackStride = 4;
constexpr int64_t kDwSlack = kDwBlock * kDwMaxSlackStride;

// One block of 32 outputs of a depthwise row for a KH x KW kernel known at compile time
// (3x3 and 5x5, the common ones): the taps unrolled, the weights in registers.
template <int KH, int KW, class V>
__attribute__((always_inline)) inline void dw_block_fixed(const float* row0, int64_t row_step, const V* w, int64_t dw,
                                                          bool split, int64_t half, V& a0, V& a1) {
  for (int kh = 0; kh < KH; ++kh) {
    const float* row = row0 + kh * row_step;
    for (int kw = 0; kw < KW; ++kw) {
      const int64_t off = kw * dw;
      const float* src = split ? row + (off & 1) * half + off / 2 : row + off;
      const V x0 = load<V>(src), x1 = load<V>(src + 16);
      a0 += w[kh * KW + kw] * x0;
      a1 += w[kh * KW + kw] * x1;
    }
  }
}

// One block of 32 flat outputs of a stride-2 depthwise plane stored as four parity
// quarters (see the stride-2 flat path): tap (kh, kw) of flat output f reads quarter
// ((kh*dh) & 1, (kw*dw) & 1) at f + ((kh*dh) >> 1) * hc + ((kw*dw) >> 1).
template <int K, class V>
__attribute__((always_inline)) inline void dw_block_quarters(const float* q0, int64_t qs, int64_t hc, const V* w,
                                                             int64_t dh, int64_t dw, V& a0, V& a1) {
  for (int kh = 0; kh < K; ++kh) {
    const int64_t ro = kh * dh;
    for (int kw = 0; kw < K; ++kw) {
      const int64_t co = kw * dw;
      const float* src = q0 + ((ro & 1) * 2 + (co & 1)) * qs + (ro >> 1) * hc + (co >> 1);
      const V x0 = load<V>(src), x1 = load<V>(src + 16);
      a0 += w[kh * K + kw] * x0;
      a1 += w[kh * K + kw] * x1;
    }
  }
}

// Copies n floats, or zeroes them (src null), inline: 16 at a time by constant-size copies,
// which GCC expands with the widest moves of the function it is inlined into (a V16
// variable would bounce through the stack without AVX-512; this also runs in the
// baseline-compiled im2col), the rest one by one. The planes of late depthwise layers are
// 7 to 14 floats wide, where a call to memcpy or memset per row cost more than the taps
// (with the loop-pattern pass off in the caller, GCC does not turn the tail loops back
// into such calls).
__attribute__((always_inline)) inline void copy_row(float* dst, const float* src, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    if (src) __builtin_memcpy(dst + i, src + i, 16 * sizeof(float));
    else __builtin_memset(dst + i, 0, 16 * sizeof(float));
  }
  for (; i < n; ++i) dst[i] = src ? src[i] : 0.f;
}

// The output plane (oh x ow) of a depthwise flat run: row oy is flat[oy * stride ..], then
// + zp (the fused residual, same layout as yp; may be null) and the activation.
template <class V>
__attribute__((always_inline)) inline void flat_rows_out(const float* flat, int64_t stride, const float* zp, float* yp,
                                                         int64_t oh, int64_t ow, const FusedActivation& act) {
  for (int64_t oy = 0; oy < oh; ++oy) {
    float* yr = yp + oy * ow;
    const float* fr = flat + oy * stride;
    if (zp) {
      for (int64_t ox = 0; ox < ow; ++ox) yr[ox] = fr[ox] + zp[oy * ow + ox];
    } else {
      copy_row(yr, fr, ow);
    }
  }
  // Over the whole plane at once: per row, rows of 7 or 14 went through the scalar tail.
  if (act.kind != FusedActivation::Kind::kNone || act.has_affine()) activate_row<V>(act, yp, oh * ow);
}


// dst[i] = src[2 * i] for i < 16 * blocks (reads src[0 .. 32 * blocks)): im2col's stride-2
// rows, 16 outputs per pair of vectors (the even lanes of 32 inputs). Built per ISA like the
// depthwise kernel (the baseline build lowers the shuffle through the stack).
template <class V>
__attribute__((always_inline)) inline void gather_even_body(float* dst, const float* src, int64_t blocks) {
  for (int64_t b = 0; b < blocks; ++b, src += 32, dst += 16) store16(dst, pick_lanes<0>(load<V>(src), load<V>(src + 16)));
}
TSR_V16_VARIANTS(, void, gather_even, (float* dst, const float* src, int64_t blocks), (dst, src, blocks))

// The fused activation (and affine map) over n contiguous floats, vectorized per ISA like
// the depthwise kernel (FusedActivation::apply is the portable loop).
template <class V>
__attribute__((always_inline)) inline void activate_plane_body(const FusedActivation& act, float* y, int64_t n) {
  activate_row<V>(act, y, n);
}
TSR_V16_VARIANTS(, void, activate_plane, (const FusedActivation& act, float* y, int64_t n), (act, y, n))

// See ConvKernel::depthwise_plane. Compiled three times (AVX-512F, AVX2+FMA, baseline) and
// picked per call (TSR_V16_VARIANTS). On aarch64 (this file is built
// there too) once, for the baseline, where AdvSIMD is always present.
// Stride 1 and 2 along W run on contiguous loads: for stride 2 each padded row is stored
// split by column parity (even columns, then odd ones), so the taps of 32 outputs that
// read columns 2*ox + off are 32 consecutive floats of one half.
template <class V>
__attribute__((always_inline)) inline void depthwise_plane_impl_body(
    const float* xp, const float* wp, float bias, const float* zp, float* yp, float* padded, int64_t ih, int64_t iw,
    int64_t oh, int64_t ow, int64_t kh_n, int64_t kw_n, int64_t sh, int64_t sw, int64_t dh, int64_t dw, int64_t ph,
    int64_t pw, int64_t pad_rows, int64_t pad_cols, const FusedActivation& act, float* flat) {
  const int fixed_k = kh_n == kw_n && (kh_n == 3 || kh_n == 5) ? static_cast<int>(kh_n) : 0;
  if (flat && fixed_k && sh == 2 && sw == 2) {
    // Stride 2, 3x3 or 5x5: the padded plane split by row and column parity into four
    // quarters of hr x hc (quarter (pr, pc) holds padded[2i + pr][2j + pc] at i * hc + j,
    // quarters qs = hr * hc + 32 floats apart: the gap takes the 16-float overrun of the
    // row splitting), so output (oy, ox) is flat position f = oy * hc + ox of each tap's
    // quarter and blocks of 32 run over all rows at once, as in the stride-1 flat path.
    const int64_t hc = (pad_cols + 1) / 2, hr = (pad_rows + 1) / 2, qs = hr * hc + 32;
    float* rowbuf = flat + round_up(oh * hc, kDwBlock);  // one padded row, round_up(pad_cols, 32) floats
    const int64_t c0 = std::min(pad_cols, std::max<int64_t>(0, pw)), c1 = std::max(c0, std::min(pad_cols, pw + iw));
    for (int64_t r = 0; r < pad_rows; ++r) {
      const int64_t xr = r - ph;
      copy_row(rowbuf, nullptr, round_up(pad_cols, kDwBlock));
      if (xr >= 0 && xr < ih) copy_row(rowbuf + c0, xp + xr * iw + (c0 - pw), c1 - c0);
      float* de = padded + (r & 1) * 2 * qs + (r >> 1) * hc;  // quarter (r & 1, 0), row r / 2
      float* dodd = de + qs;                                   // quarter (r & 1, 1)
      for (int64_t c = 0; c < pad_cols; c += kDwBlock) {
        const V a = load<V>(rowbuf + c), b = load<V>(rowbuf + c + 16);
        store16(de + c / 2, pick_lanes<0>(a, b));
        store16(dodd + c / 2, pick_lanes<1>(a, b));
      }
    }
    V wq[25];
    for (int64_t t = 0; t < kh_n * kw_n; ++t) {
      wq[t] = V{};
      wq[t] += wp[t];
    }
    const int64_t total = oh * hc;
    for (int64_t f = 0; f < total; f += kDwBlock) {
      V a0 = {}, a1 = {};
      a0 += bias;
      a1 += bias;
      if (fixed_k == 3) dw_block_quarters<3>(padded + f, qs, hc, wq, dh, dw, a0, a1);
      else dw_block_quarters<5>(padded + f, qs, hc, wq, dh, dw, a0, a1);
      store16(flat + f, a0);
      store16(flat + f + 16, a1);
    }
    flat_rows_out<V>(flat, hc, zp, yp, oh, ow, act);
    return;
  }
  const bool split = sw == 2;
  const int64_t half = (pad_cols + 1) / 2;  // even columns of a split row
  // padded[r, c] = X[r - ph, c - pw], 0 outside X (column c at c, or at (c & 1) * half + c / 2).
  for (int64_t r = 0; r < pad_rows; ++r) {
    float* dst = padded + r * pad_cols;
    const int64_t xr = r - ph;
    if (xr < 0 || xr >= ih) {
      copy_row(dst, nullptr, pad_cols);
      continue;
    }
    const float* src = xp + xr * iw;
    if (split) {
      for (int64_t c = 0; c < pad_cols; ++c) {
        const int64_t xc = c - pw;
        dst[(c & 1) * half + c / 2] = xc >= 0 && xc < iw ? src[xc] : 0.f;
      }
      continue;
    }
    const int64_t c0 = std::min(pad_cols, std::max<int64_t>(0, pw));          // first column inside X
    const int64_t c1 = std::max(c0, std::min(pad_cols, pw + iw));              // one past the last
    for (int64_t c = 0; c < c0; ++c) dst[c] = 0.f;  // borders are a few floats
    copy_row(dst + c0, src + (c0 - pw), c1 - c0);
    for (int64_t c = c1; c < pad_cols; ++c) dst[c] = 0.f;
  }
  // Each output row in blocks of kDwBlock = 32 columns accumulated in two V16 registers over
  // all taps, then stored once. A block past the row's end computes garbage columns from the
  // slack after the padded plane (kDwSlack floats, see scratch sizing) and drops them.
  static_assert(kDwBlock == 32, "two V16 accumulators");
  const bool contiguous = sw == 1 || split;
  // 3x3 and 5x5 kernels: taps unrolled with the weights broadcast once per plane.
  const int fixed = kh_n == kw_n && (kh_n == 3 || kh_n == 5) ? static_cast<int>(kh_n) : 0;
  V wv[25];
  for (int64_t t = 0; t < (fixed ? kh_n * kw_n : 0); ++t) {
    wv[t] = V{};
    wv[t] += wp[t];
  }
  if (flat && fixed && sh == 1 && sw == 1) {
    // Stride 1, 3x3 or 5x5: the outputs as one flat run over the padded plane. Output
    // (oy, ox) is flat position f = oy * pad_cols + ox, and its taps are at padded[f +
    // kh * dh * pad_cols + kw * dw] for every f, so blocks of 32 run over all of them
    // regardless of rows: pad_cols - ow wasted columns per row instead of a partial block
    // per row (7 of 32 useful on a 7-wide plane). Then each row is copied out of `flat`.
    const int64_t total = oh * pad_cols;
    for (int64_t f = 0; f < total; f += kDwBlock) {
      V a0 = {}, a1 = {};
      a0 += bias;
      a1 += bias;
      if (fixed == 3) dw_block_fixed<3, 3>(padded + f, dh * pad_cols, wv, dw, false, half, a0, a1);
      else dw_block_fixed<5, 5>(padded + f, dh * pad_cols, wv, dw, false, half, a0, a1);
      store16(flat + f, a0);
      store16(flat + f + 16, a1);
    }
    flat_rows_out<V>(flat, pad_cols, zp, yp, oh, ow, act);
    return;
  }
  for (int64_t oy = 0; oy < oh; ++oy) {
    float* yr = yp + oy * ow;
    for (int64_t ox0 = 0; ox0 < ow; ox0 += kDwBlock) {
      alignas(64) float acc[kDwBlock];
      if (contiguous) {
        V a0 = {}, a1 = {};
        a0 += bias;
        a1 += bias;
        const float* row0 = padded + oy * sh * pad_cols + ox0;
        if (fixed == 3) {
          dw_block_fixed<3, 3>(row0, dh * pad_cols, wv, dw, split, half, a0, a1);
        } else if (fixed == 5) {
          dw_block_fixed<5, 5>(row0, dh * pad_cols, wv, dw, split, half, a0, a1);
        } else {
          for (int64_t kh = 0; kh < kh_n; ++kh) {
            const float* row = row0 + kh * dh * pad_cols;
            for (int64_t kw = 0; kw < kw_n; ++kw) {
              const float w1 = wp[kh * kw_n + kw];
              const int64_t off = kw * dw;  // column 2*ox + off (split) or ox + off
              const float* src = split ? row + (off & 1) * half + off / 2 : row + off;
              const V x0 = load<V>(src), x1 = load<V>(src + 16);  // unaligned loads
              a0 += w1 * x0;
              a1 += w1 * x1;
            }
          }
        }
        if (ox0 + kDwBlock <= ow) {  // a whole block: two vector stores
          store16(yr + ox0, a0);
          store16(yr + ox0 + 16, a1);
          continue;
        }
        store16(acc, a0);
        store16(acc + 16, a1);
      } else {
        for (int j = 0; j < kDwBlock; ++j) acc[j] = bias;
        for (int64_t kh = 0; kh < kh_n; ++kh) {
          const float* src_row = padded + (oy * sh + kh * dh) * pad_cols + ox0 * sw;
          for (int64_t kw = 0; kw < kw_n; ++kw) {
            const float wv = wp[kh * kw_n + kw];
            const float* src = src_row + kw * dw;
            for (int j = 0; j < kDwBlock; ++j) acc[j] += wv * src[j * sw];
          }
        }
      }
      const int64_t n = std::min<int64_t>(kDwBlock, ow - ox0);
      for (int64_t j = 0; j < n; ++j) yr[ox0 + j] = acc[j];
    }
    if (zp)
      for (int64_t ox = 0; ox < ow; ++ox) yr[ox] += zp[oy * ow + ox];
  }
  if (act.kind != FusedActivation::Kind::kNone || act.has_affine()) activate_row<V>(act, yp, oh * ow);
}
// The loop-pattern pass off: GCC would turn the short tail loops into memcpy / memset calls.
TSR_V16_VARIANTS(__attribute__((optimize("no-tree-loop-distribute-patterns"))), void, depthwise_plane_impl,
                 (const float* xp, const float* wp, float bias, const float* zp, float* yp, float* padded, int64_t ih,
                  int64_t iw, int64_t oh, int64_t ow, int64_t kh_n, int64_t kw_n, int64_t sh, int64_t sw, int64_t dh,
                  int64_t dw, int64_t ph, int64_t pw, int64_t pad_rows, int64_t pad_cols, const FusedActivation& act,
                  float* flat),
                 (xp, wp, bias, zp, yp, padded, ih, iw, oh, ow, kh_n, kw_n, sh, sw, dh, dw, ph, pw, pad_rows, pad_cols,
                  act, flat))

class ConvKernel final : public Kernel {
 public:
  WindowGeometry g;
  int nd = 0;
  int64_t batch = 0, c_in = 0, m_out = 0, group = 1, cg = 0, mg = 0;
  int64_t in_size = 0, out_size = 0, k_size = 0, k_rows = 0;  // k_rows = K = cg * k_size
  bool has_bias = false;
  int addend_input = -1;                  // fused residual: KernelContext input index, or -1
  FusedActivation act;                    // fused activation
  cpu::PackedGroups packed_w;  // per group: W[g] packed as sgemm's A, when W is constant
  bool direct = false;      // the 2-D direct path
  bool depthwise = false;   // direct path with one input channel per output (cg == 1)
  int64_t pad_rows = 0, pad_cols = 0;  // depthwise: the zero-bordered input plane
  // im2col: per tap k of the last dim, the output columns [tap_lo, tap_hi) whose input
  // column is inside X (valid_range), computed once at compile time.
  std::vector<int64_t> tap_lo, tap_hi;
  int64_t flat_offset = 0;             // depthwise stride 1: floats from the plane to the flat output run, or 0
  // Depthwise on AVX-512 (depthwise_x86.h): the plane read in place with masked loads; the
  // clamp of a fused Relu/Clip in registers (dw_lo/dw_hi), other activations and an affine
  // map applied after the plane (dw_post_act).
  bool dw_avx512 = false, dw_post_act = false;
  cpu::DepthwisePlan dw_plan;
  // Depthwise with 16 (AVX-512) or 8 (AVX2) channels in the vector lanes (conv_avx512.h),
  // for small planes with one output channel per input channel; per-thread scratch
  // dw_lanes_bytes. Its weights in the lanes' layout (depthwise_lanes_weights,
  // depthwise_lanes8_weights), per block of channels:
  // made at plan time for constant weights, else per run in the slot (after the tile).
  bool dw_lanes = false;
  int dw_lanes_width = 16;                            // channels per task: 16 (AVX-512) or 8 (AVX2)
  size_t dw_lanes_bytes = 0, dw_lanes_w_offset = 0;  // slot bytes; floats from slot to its weights
  std::vector<float> dw_lanes_w;                     // blocks x taps x width, or empty
  // im2col rows on AVX-512 (conv_avx512.h; 2-D, stride along W 1 or 2, packed B only).
  bool im2col_avx512 = false;
  cpu::Conv2dGeometry geom2d;
  float dw_lo = 0, dw_hi = 0;
  bool pointwise = false;   // X is the col matrix
  bool per_thread = false;  // whole tiles per thread
  // Narrow outputs (fewer output positions than the micro-kernel's NR, or positions that
  // tile better as rows: see make_Conv_gemm): the product is computed transposed, Y^T
  // (positions x channels) = col^T W^T, so the channels fill the NR-wide panels, then
  // transposed into Y (run_transpose) with the addend and activation. On AVX-512 (2-D) col^T
  // is gathered straight into sgemm's packed A.
  bool narrow = false;
  int64_t narrow_batch = 1;  // images per product
  bool narrow_packed_col = false;  // col^T built as sgemm's packed A (im2col_packed_a_avx512)
  TransposePlan yt_transpose;       // one image's Y^T (out_size x mg) -> Y (mg x out_size)
  std::unique_ptr<float, void (*)(void*)> packed_wt{nullptr, &std::free};  // per group: W[g]^T as sgemm's packed B
  size_t packed_wt_group_floats = 0;
  size_t yt_bytes = 0;
  int64_t tile = 0, tiles_per_plane = 0, tasks = 0;
  int threads = 1;
  cpu::SgemmIsa isa = cpu::SgemmIsa::kAuto;
  cpu::SgemmBlocking blocking;  // the ISA path's NR and KC: im2col writes packed B
  size_t col_bytes = 0, gemm_bytes = 0, slot_bytes = 0, scratch = 0;

  size_t scratch_bytes() const override { return scratch; }

  Status run(const KernelContext& ctx) const override {
    const float* x = ctx.input(0).data_as<float>();
    const float* w = ctx.input(1).data_as<float>();
    const float* b = has_bias ? ctx.input(2).data_as<float>() : nullptr;
    const float* z = addend_input >= 0 ? ctx.input(static_cast<size_t>(addend_input)).data_as<float>() : nullptr;
    float* y = ctx.output(0).data_as<float>();
    ThreadPool* pool = threads > 1 ? ctx.thread_pool : nullptr;
#if defined(__x86_64__) || defined(_M_X64)
    if (dw_lanes) {
      // Tasks (n, block of L = dw_lanes_width channels), strided over scratch slots.
      const int64_t lw = dw_lanes_width, blocks = (m_out + lw - 1) / lw, tasks = batch * blocks;
      parallel_for(pool, threads, [&](int64_t lo, int64_t hi) {
        for (int64_t slot = lo; slot < hi; ++slot) {
          float* s = reinterpret_cast<float*>(static_cast<char*>(ctx.scratch) + static_cast<size_t>(slot) * dw_lanes_bytes);
          for (int64_t task = slot; task < tasks; task += threads) {
            const int64_t n = task / blocks, c0 = task % blocks * lw;
            const int channels = static_cast<int>(std::min<int64_t>(lw, m_out - c0));
            const int64_t plane0 = n * m_out + c0;
            const float* wl = dw_lanes_w.data() + c0 * k_size;
            if (dw_lanes_w.empty()) {
              if (lw == 16) cpu::depthwise_lanes_weights(w + c0 * k_size, k_size, channels, s + dw_lanes_w_offset);
              else cpu::depthwise_lanes8_weights(w + c0 * k_size, k_size, channels, s + dw_lanes_w_offset);
              wl = s + dw_lanes_w_offset;
            }
            float* yb = y + plane0 * out_size;
            const float* zb = z ? z + plane0 * out_size : nullptr;
            if (lw == 16)
              cpu::depthwise_lanes_avx512(geom2d, x + plane0 * in_size, wl, b ? b + c0 : nullptr, zb, yb, channels, dw_lo,
                                          dw_hi, s);
            else
              cpu::depthwise_lanes_avx2(geom2d, x + plane0 * in_size, wl, b ? b + c0 : nullptr, zb, yb, channels, dw_lo,
                                        dw_hi, s);
            if (dw_post_act)
              for (int c = 0; c < channels; ++c) activate_plane(act, y + (plane0 + c) * out_size, out_size);
          }
        }
      });
      return Status::ok();
    }
#endif
    if (direct) {
      // Planes p = (n, m), strided over scratch slots (one padded input plane each).
      const int64_t planes = batch * m_out;
      parallel_for(pool, threads, [&](int64_t lo, int64_t hi) {
        for (int64_t slot = lo; slot < hi; ++slot) {
          float* padded = reinterpret_cast<float*>(static_cast<char*>(ctx.scratch) + static_cast<size_t>(slot) * slot_bytes);
          for (int64_t p = slot; p < planes; p += threads) {
            const int64_t n = p / m_out, m = p % m_out;
            float* yp = y + p * out_size;
            const float* zp = z ? z + p * out_size : nullptr;
            if (dw_avx512) {
#if defined(__x86_64__) || defined(_M_X64)
              const float* xp = x + (n * c_in + m / mg) * in_size;  // cg == 1: input channel m / mg
              cpu::depthwise_plane_avx512(dw_plan, xp, w + m * k_size, b ? b[m] : 0.f, zp, yp, dw_lo, dw_hi);
              if (dw_post_act) activate_plane(act, yp, out_size);
#endif
              continue;
            }
            if (depthwise) {
              const float* xp = x + (n * c_in + m / mg) * in_size;  // cg == 1: input channel m / mg
              depthwise_plane(xp, w + m * k_size, b ? b[m] : 0.f, zp, yp, padded,
                              flat_offset ? padded + flat_offset : nullptr);
              continue;
            }
            direct_plane(x, w, b, y, n, m);
            if (zp)
              for (int64_t j = 0; j < out_size; ++j) yp[j] += zp[j];
            act.apply(yp, out_size);
          }
        }
      });
      return Status::ok();
    }
    char* base = static_cast<char*>(ctx.scratch);
    if (narrow) {
      // Images n0 .. n0 + nbatch - 1 at once: their col matrices side by side (K x rows,
      // rows = images x positions), so the product has nbatch * out_size rows.
      float* col = reinterpret_cast<float*>(base);
      float* yt = reinterpret_cast<float*>(base + col_bytes);
      void* gemm_scratch = base + col_bytes + yt_bytes;
      for (int64_t n0 = 0; n0 < batch; n0 += narrow_batch)
        for (int64_t gi = 0; gi < group; ++gi) {
          const int64_t nb_img = std::min(narrow_batch, batch - n0), rows = nb_img * out_size;
          cpu::SgemmArgs a;
          // op(A) = col^T (rows x K), col stored K x rows. A 1x1 conv's X (K x positions) is
          // col itself: sgemm packs its transpose. Pre-packed, A is not also given unpacked
          // (the SGEMM's small-M path, for up to 4 rows, reads only an unpacked A).
          const float* xg = x + (n0 * c_in + gi * cg) * in_size;
          if (pointwise && nb_img == 1) {
            a.a = xg;
          } else if (narrow_packed_col) {
#if defined(__x86_64__) || defined(_M_X64)
            cpu::im2col_packed_a_avx512(geom2d, xg, cg, nb_img, c_in * in_size, blocking.mr, blocking.kc, col);
            a.packed_a = col;
#endif
          } else {
            for (int64_t i = 0; i < nb_img; ++i)  // image n0 + i: columns [i * out_size, (i + 1) * out_size)
              im2col(xg + i * c_in * in_size, 0, out_size, 0, k_rows, col + i * out_size, {}, rows);
            a.a = col;
          }
          a.m = rows;
          a.n = mg;
          a.k = k_rows;
          a.lda = rows;
          a.trans_a = true;
          a.b = w + gi * mg * k_rows;  // W[g]: mg x K, taken transposed
          a.ldb = k_rows;
          a.trans_b = true;
          if (packed_wt) a.packed_b = packed_wt.get() + static_cast<size_t>(gi) * packed_wt_group_floats;
          a.c = yt;
          a.ldc = mg;
          a.bias = b ? b + gi * mg : nullptr;  // per channel: a column of Y^T
          a.isa = isa;
          if (!z) a.act = act;  // elementwise: applied to Y^T in the micro-kernel
          cpu::sgemm(a, gemm_scratch, pool, threads);
          for (int64_t i = 0; i < nb_img; ++i) {
            const float* yti = yt + i * out_size * mg;
            float* yi = y + ((n0 + i) * m_out + gi * mg) * out_size;  // mg x out_size
            run_transpose(yt_transpose, yti, yi, pool, threads, gemm_scratch);
            if (!z) continue;
            // act(Y + Z): the residual is added after the transpose.
            const float* zi = z + (yi - y);
            for (int64_t j = 0; j < mg * out_size; ++j) yi[j] += zi[j];
            act.apply(yi, mg * out_size);
          }
        }
      return Status::ok();
    }
    if (per_thread) {
      parallel_for(pool, threads, [&](int64_t lo, int64_t hi) {
        for (int64_t slot = lo; slot < hi; ++slot) {
          char* s = base + static_cast<size_t>(slot) * slot_bytes;
          float* col = reinterpret_cast<float*>(s);
          for (int64_t t = slot; t < tasks; t += threads) run_tile(x, w, b, z, y, t, col, s + col_bytes, nullptr, 1);
        }
      });
    } else {
      float* col = reinterpret_cast<float*>(base);
      for (int64_t t = 0; t < tasks; ++t) run_tile(x, w, b, z, y, t, col, base + col_bytes, pool, threads);
    }
    return Status::ok();
  }

 private:
  // One tile: columns [j0, j0 + nb) of image n, group gi.
  void run_tile(const float* x, const float* w, const float* b, const float* z, float* y, int64_t t, float* col,
                void* gemm_scratch, ThreadPool* pool, int nthreads) const {
    const int64_t plane = t / tiles_per_plane, j0 = (t % tiles_per_plane) * tile;
    const int64_t n = plane / group, gi = plane % group;
    const int64_t nb = std::min(tile, out_size - j0);
    const float* xg = x + (n * c_in + gi * cg) * in_size;
    cpu::SgemmArgs a;
    a.m = mg;
    a.n = nb;
    a.k = k_rows;
    a.a = w + gi * mg * k_rows;
    a.lda = k_rows;
    a.packed_a = packed_w.group(gi);
    if (pointwise) {
      a.b = xg + j0;
      a.ldb = in_size;
    } else {
      parallel_for(pool, k_rows, [&](int64_t lo, int64_t hi) { im2col(xg, j0, nb, lo, hi, col, blocking); });
      a.packed_b = col;  // im2col wrote sgemm's packed-B layout
    }
    float* yt = y + (n * m_out + gi * mg) * out_size + j0;
    a.c = yt;
    a.ldc = out_size;
    a.isa = isa;
    if (b) a.row_bias = b + gi * mg;  // Y[m, o] += B[m]
    if (z) {
      a.addend = z + (yt - y);
      a.ld_addend = out_size;
    }
    a.act = act;
    cpu::sgemm(a, gemm_scratch, pool, nthreads);
  }

  // The next row of col: the next kernel tap k (row-major over the kernel's dims), and the
  // next channel *c after the last tap.
  void next_tap(SpatialIndex& k, int64_t* c) const {
    for (int d = nd - 1; d >= 0; --d) {
      if (++k[d] < g.kernel[d]) return;
      k[d] = 0;
    }
    ++*c;
  }

  // Rows [r0, r1) of the col tile for output columns [j0, j0 + nb):
  //   col[r, j] = X[c, o(j0 + j) * stride - pad_begin + k * dilation], r = (c, k) row-major.
  // The last spatial dim is walked as contiguous runs; the outer dims pick the input row.
  // Runs are copied inline (copy_row), not by memcpy/memset calls: runs are a few floats
  // for narrow outputs (Silero VAD's convs have 1 to 4 positions).
  //
  // With `packed` (pack.nr > 0), each row is built in a stack buffer and written straight
  // into sgemm's packed-B panel layout (see sgemm_pack_b: per KC block of rows, NR-wide
  // panels, zero-padded), so sgemm reads it as packed_b and B is copied once, not twice.
  // Unpacked, row r starts at col + r * ld_col (ld_col 0: nb).
  __attribute__((optimize("no-tree-loop-distribute-patterns"))) void im2col(const float* xg, int64_t j0, int64_t nb, int64_t r0, int64_t r1, float* col,
              const cpu::SgemmBlocking& pack = {}, int64_t ld_col = 0) const {
    if (ld_col == 0) ld_col = nb;
    alignas(64) float rowbuf[kMaxTile + 16];  // + 16: im2col_row_avx512's overrun
    const int last = nd - 1;
    const int64_t ow = g.out[last], iw = g.in[last], sw = g.strides[last], dw = g.dilations[last], pw = g.pads_begin[last];
    const int64_t row0 = j0 / ow;  // first outer output position (flattened over dims < last)
    SpatialIndex o0{};
    {
      int64_t r = row0;
      for (int d = last - 1; d >= 0; --d) {
        o0[d] = r % g.out[d];
        r /= g.out[d];
      }
    }
    // Row r = (c, k): the channel and the kernel tap, divided out once and then advanced
    // with carries (a division per row cost more than copying a narrow output's row).
    int64_t c = r0 / k_size;
    SpatialIndex k{};
    {
      int64_t kr = r0 % k_size;
      for (int d = last; d >= 0; --d) {
        k[d] = kr % g.kernel[d];
        kr /= g.kernel[d];
      }
    }
    int64_t pc = pack.nr > 0 ? r0 / pack.kc * pack.kc : 0;  // the row's KC block (packed)
    for (int64_t r = r0; r < r1; ++r, next_tap(k, &c)) {
      const float* xc = xg + c * in_size;
      float* dst = pack.nr > 0 ? rowbuf : col + r * ld_col;
#if defined(__x86_64__) || defined(_M_X64)
      if (im2col_avx512 && pack.nr > 0) {
        cpu::im2col_row_avx512(geom2d, xc, k[0], k[1], j0, nb, rowbuf);
        pack_row(rowbuf, r, nb, col, pack, pc);
        continue;
      }
#endif
      const int64_t lo = tap_lo[static_cast<size_t>(k[last])], hi = tap_hi[static_cast<size_t>(k[last])];
      const int64_t xoff = k[last] * dw - pw;
      SpatialIndex o = o0;
      int64_t j = 0, orow = row0;
      while (j < nb) {
        const int64_t a = orow == row0 ? j0 - row0 * ow : 0;    // first ox in this run
        const int64_t e = std::min(ow, a + (nb - j));           // one past the last
        // Input row of the outer dims, or nullptr in the padding.
        const float* xr = xc;
        int64_t lin = 0;
        for (int d = 0; d < last; ++d) {
          const int64_t p = o[d] * g.strides[d] - g.pads_begin[d] + k[d] * g.dilations[d];
          if (p < 0 || p >= g.in[d]) {
            xr = nullptr;
            break;
          }
          lin = lin * g.in[d] + p;
        }
        float* dr = dst + j;  // dr[ox - a]: column ox of this output row
        if (!xr) {
          copy_row(dr, nullptr, e - a);
        } else {
          xr += lin * iw + xoff;  // xr[ox * sw] = X[..., ox * sw - pw + k * dw]
          const int64_t l = std::max(a, lo), h = std::min(e, hi);
          if (l >= h) {
            copy_row(dr, nullptr, e - a);
          } else {
            for (int64_t ox = a; ox < l; ++ox) dr[ox - a] = 0.f;
            if (sw == 1) {
              copy_row(dr + (l - a), xr + l, h - l);
            } else {
              int64_t ox = l;
              if (sw == 2 && h - l > 16) {
                // Whole blocks of 16 while the last input read, 2 * ox + 31, stays at or
                // before the run's last input, 2 * (h - 1).
                const int64_t blocks = (h - 1 - l) / 16;
                gather_even(dr + (l - a), xr + 2 * l, blocks);
                ox += 16 * blocks;
              }
              for (; ox < h; ++ox) dr[ox - a] = xr[ox * sw];
            }
            for (int64_t ox = h; ox < e; ++ox) dr[ox - a] = 0.f;
          }
        }
        j += e - a;
        ++orow;
        if (last > 0) next_index(o, g.out, last);
      }
      if (pack.nr > 0) pack_row(rowbuf, r, nb, col, pack, pc);
    }
  }

  // Row r of the col tile (nb floats in rowbuf) into sgemm's packed-B layout: per KC block
  // of rows (pc: the first row of r's block, advanced here), NR-wide zero-padded panels.
  void pack_row(const float* rowbuf, int64_t r, int64_t nb, float* col, const cpu::SgemmBlocking& pack, int64_t& pc) const {
    if (r - pc == pack.kc) pc += pack.kc;
    const int64_t nr = pack.nr, kc = std::min<int64_t>(pack.kc, k_rows - pc);
    float* base = col + pc * round_up(nb, nr) + (r - pc) * nr;
    for (int64_t j0p = 0; j0p < nb; j0p += nr) {
      float* panel_row = base + (j0p / nr) * kc * nr;
      const int64_t cols = std::min(nr, nb - j0p);
      copy_row(panel_row, rowbuf + j0p, cols);
      for (int64_t q = cols; q < nr; ++q) panel_row[q] = 0.f;
    }
  }

  // Output plane of a 2-D conv with one input channel per output (depthwise: cg == 1):
  //   Y[oy, ox] = act(B + sum_{kh, kw} W[kh, kw] * Xpad[oy*sh + kh*dh, ox*sw + kw*dw] + Z[oy, ox])
  // The input plane is first copied into `padded` with its zero borders (pad_rows x
  // pad_cols floats), so the tap loops have no bounds checks; for stride 1 each tap is a
  // contiguous axpy over an output row, which the compiler vectorizes (the function is
  // built for AVX-512, AVX2 and baseline x86-64 and picked per call: TSR_V16_VARIANTS).
  // Summation order per output: bias first, then taps row-major, as the reference's
  // conv2d_plane; the addend and the activation last.
  void depthwise_plane(const float* xp, const float* wp, float bias, const float* zp, float* yp, float* padded,
                       float* flat) const {
    depthwise_plane_impl(xp, wp, bias, zp, yp, padded, g.in[0], g.in[1], g.out[0], g.out[1], g.kernel[0], g.kernel[1],
                         g.strides[0], g.strides[1], g.dilations[0], g.dilations[1], g.pads_begin[0], g.pads_begin[1],
                         pad_rows, pad_cols, act, flat);
  }

  // Output plane (n, m) of a 2-D conv, exactly as the reference computes it.
  void direct_plane(const float* x, const float* w, const float* b, float* y, int64_t n, int64_t m) const {
    ref::conv2d_plane(x, w, b, y, n, m, c_in, m_out, group, g);
  }
};

#if defined(__x86_64__) || defined(_M_X64)
// The depthwise kernels' clamp [dw_lo, dw_hi] for a fused Relu or Clip (applied in
// registers); any other activation or an affine map is applied after the plane
// (dw_post_act).
void set_dw_clamp(ConvKernel& k) {
  using Kind = FusedActivation::Kind;
  const FusedActivation& a = k.act;
  const float inf = std::numeric_limits<float>::infinity();
  k.dw_lo = -inf;
  k.dw_hi = inf;
  if (!a.has_affine() && a.kind == Kind::kRelu) k.dw_lo = 0.f;
  else if (!a.has_affine() && a.kind == Kind::kClip) k.dw_lo = a.alpha, k.dw_hi = a.beta;
  else k.dw_post_act = a.kind != Kind::kNone || a.has_affine();
}

// The lanes depthwise path with `width` channels per task (16: depthwise_lanes_avx512, 8:
// depthwise_lanes_avx2): per-thread slots of the tile (`lanes_floats`) and a block's
// weights, and constant weights laid out once here, per block of `width` channels.
void set_dw_lanes(ConvKernel& k, int width, size_t lanes_floats, const Tensor* wc, int threads) {
  k.dw_lanes = true;
  k.dw_lanes_width = width;
  k.dw_lanes_w_offset = lanes_floats;
  k.dw_lanes_bytes = align64((lanes_floats + static_cast<size_t>(width * k.k_size)) * sizeof(float));
  k.scratch = k.dw_lanes_bytes * static_cast<size_t>(threads);
  if (!wc) return;
  const int64_t blocks = (k.m_out + width - 1) / width;
  k.dw_lanes_w.resize(static_cast<size_t>(blocks * width * k.k_size));
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const float* src = wc->data_as<float>() + blk * width * k.k_size;
    float* dst = k.dw_lanes_w.data() + blk * width * k.k_size;
    const int channels = static_cast<int>(std::min<int64_t>(width, k.m_out - blk * width));
    if (width == 16) cpu::depthwise_lanes_weights(src, k.k_size, channels, dst);
    else cpu::depthwise_lanes8_weights(src, k.k_size, channels, dst);
  }
}
#endif

}  // namespace

Result<std::unique_ptr<Kernel>> make_Conv(const CompileContext& ctx) {
  // 3x3 stride-1 convs with enough channels and tiles: Winograd F(4x4, 3x3) (which keeps a
  // make_Conv_gemm kernel for inputs with Inf or NaN).
  auto winograd = make_Conv_winograd(ctx, /*heuristic=*/true);
  if (!winograd.is_ok() || winograd.value()) return winograd;
  return make_Conv_gemm(ctx);
}

Result<std::unique_ptr<Kernel>> make_Conv_gemm(const CompileContext& ctx) {
  const auto decline = [] { return Result<std::unique_ptr<Kernel>>(std::unique_ptr<Kernel>()); };
  bool has_bias = false;
  if (!float_conv_operands(ctx, &has_bias)) return decline();
  const Shape& xs = ctx.input(0).shape;
  const Shape& ws = ctx.input(1).shape;
  if (xs.size() < 3 || ws.size() != xs.size() || xs.size() > static_cast<size_t>(kMaxSpatialDims) + 2) return decline();
  std::vector<int64_t> w_kernel(ws.begin() + 2, ws.end());
  auto geom = window_geometry(ctx.node, xs, w_kernel, false);
  if (!geom.is_ok()) return decline();  // the reference reports the error
  auto kern = std::make_unique<ConvKernel>();
  kern->g = std::move(geom.value());
  const WindowGeometry& g = kern->g;
  kern->nd = g.rank;
  kern->group = ctx.node.attr_i("group", 1);
  kern->batch = xs[0];
  kern->c_in = xs[1];
  kern->m_out = ws[0];
  if (kern->group < 1 || kern->batch < 1 || kern->c_in < 1 || kern->m_out < 1 || kern->c_in % kern->group != 0 ||
      kern->m_out % kern->group != 0 || ws[1] != kern->c_in / kern->group)
    return decline();
  if (has_bias && (ctx.input(2).shape.size() != 1 || ctx.input(2).shape[0] != kern->m_out)) return decline();
  kern->cg = kern->c_in / kern->group;
  kern->mg = kern->m_out / kern->group;
  kern->in_size = product(g.in);
  kern->out_size = product(g.out);
  kern->k_size = product(g.kernel);
  kern->k_rows = kern->cg * kern->k_size;
  if (kern->in_size < 1 || kern->out_size < 1 || kern->k_size < 1) return decline();
  kern->has_bias = has_bias;
  FusedTail tail;
  if (!read_fused_tail(ctx, /*allow_col_bias=*/false, &tail)) return decline();
  kern->addend_input = tail.addend;
  kern->act = tail.act;
  kern->threads = std::max(1, ctx.threads);
  kern->isa = cpu::sgemm_best_isa();
  const int threads = kern->threads;

#if defined(__x86_64__) || defined(_M_X64)
  const bool avx512 = x86::best_isa() == x86::Isa::kAvx512;
  if (g.rank == 2) kern->geom2d = cpu::conv2d_geometry(g);
#endif
  if (g.rank == 2 && kern->mg < kDirectMaxRowsPerGroup) {
    kern->direct = true;
    kern->depthwise = kern->cg == 1 && g.strides[1] <= kDwMaxSlackStride;
    if (kern->depthwise) {
      kern->pad_rows = (g.out[0] - 1) * g.strides[0] + (g.kernel[0] - 1) * g.dilations[0] + 1;
      kern->pad_cols = (g.out[1] - 1) * g.strides[1] + (g.kernel[1] - 1) * g.dilations[1] + 1;
      kern->slot_bytes = align64(static_cast<size_t>(kern->pad_rows * kern->pad_cols + kDwSlack) * sizeof(float));
      // 3x3 or 5x5 at stride 1 or 2 with the taps' overrun within the slack: the flat
      // paths. Stride 1: the output run after the plane. Stride 2: the four quarters
      // (4 * (hr * hc + 32) floats, more than the plane) plus the slack, then the output
      // run, then one padded row.
      const bool fixed = g.kernel[0] == g.kernel[1] && (g.kernel[0] == 3 || g.kernel[0] == 5);
      const bool fits = (g.kernel[1] - 1) * g.dilations[1] + kDwBlock <= kDwSlack;
      if (fixed && fits && g.strides[0] == 1 && g.strides[1] == 1) {
        kern->flat_offset = static_cast<int64_t>(kern->slot_bytes / sizeof(float));
        kern->slot_bytes += align64(static_cast<size_t>(round_up(g.out[0] * kern->pad_cols, kDwBlock)) * sizeof(float));
      } else if (fixed && fits && g.strides[0] == 2 && g.strides[1] == 2) {
        const int64_t hc = (kern->pad_cols + 1) / 2, hr = (kern->pad_rows + 1) / 2;
        kern->flat_offset = 4 * (hr * hc + 32) + kDwSlack;
        kern->slot_bytes = align64(static_cast<size_t>(kern->flat_offset + round_up(g.out[0] * hc, kDwBlock) +
                                                       round_up(kern->pad_cols, kDwBlock) + kDwBlock) * sizeof(float));
      }
      kern->scratch = kern->slot_bytes * static_cast<size_t>(threads);
#if defined(__x86_64__) || defined(_M_X64)
      const cpu::Conv2dGeometry& dg = kern->geom2d;
      if (avx512 && cpu::depthwise_avx512_supported(dg)) {
        kern->dw_avx512 = true;
        kern->dw_plan = cpu::make_depthwise_plan(dg);
        set_dw_clamp(*kern);
        kern->scratch = 0;
        // Channels in the lanes when an output row fits one 16-float vector, where the plane
        // kernel leaves lanes idle: MobileNetV2's 7 x 7 x 960 layer 0.076 -> 0.048 ms, its
        // 14 x 14 -> 7 x 7 stride-2 layer 0.068 -> 0.037, 14 x 14 x 576 0.097 -> 0.089. On
        // wider rows the transposes in and out cost more than the idle lanes (28 x 28:
        // even; a 56 x 56 stride-2 layer: 0.117 -> 0.155).
        const size_t lanes_floats = cpu::depthwise_lanes_scratch_floats(dg);
        if (kern->mg == 1 && kern->k_size <= cpu::kDepthwiseAvx512MaxTaps && dg.ow <= 16) {
          set_dw_lanes(*kern, 16, lanes_floats, ctx.input(1).constant.get(), threads);
        }
      } else if (x86::best_isa() == x86::Isa::kAvx2 && kern->mg == 1 && kern->k_size <= cpu::kDepthwiseAvx512MaxTaps &&
                 cpu::depthwise_lanes8_scratch_floats(dg) * sizeof(float) <= kDwLanes8MaxScratch) {
        // AVX2: 8 channels in the lanes on every plane size whose tile fits the bound. On a
        // Zen 3 at one thread, MobileNetV2's 7 x 7 and 14 x 14 depthwise layers ran plane
        // by plane at 2-5x onnxruntime's time and now run at 0.85-1.4x; unlike on AVX-512,
        // the lanes also won on wide planes (28 x 28: 0.97 -> 0.36 ms, 112 x 112 stride 2:
        // 1.0 -> 0.56-0.70), where the plane kernel's V16x2 blocks are not much faster.
        set_dw_clamp(*kern);
        set_dw_lanes(*kern, 8, cpu::depthwise_lanes8_scratch_floats(dg), ctx.input(1).constant.get(), threads);
      }
#endif
    }
    return std::unique_ptr<Kernel>(std::move(kern));
  }

  const cpu::SgemmBlocking blk = cpu::sgemm_blocking(kern->isa);
  {
    const int last = g.rank - 1;
    kern->tap_lo.resize(static_cast<size_t>(g.kernel[last]));
    kern->tap_hi.resize(static_cast<size_t>(g.kernel[last]));
    for (int64_t t = 0; t < g.kernel[last]; ++t)
      valid_range(g.in[last], g.out[last], g.strides[last], g.pads_begin[last], t * g.dilations[last],
                  &kern->tap_lo[static_cast<size_t>(t)], &kern->tap_hi[static_cast<size_t>(t)]);
  }
  bool pointwise = true;
  for (int d = 0; d < g.rank; ++d)
    pointwise = pointwise && g.kernel[d] == 1 && g.strides[d] == 1 && g.pads_begin[d] == 0 && g.pads_end[d] == 0;
  kern->pointwise = pointwise;
  // Transposed when the output has fewer positions than NR (Silero VAD: 1 to 4), or when
  // its positions fill the micro-kernel's tiles better as rows than as columns, by at least
  // 5% after the transposed path's extra passes over its input and output (counted as 64
  // more steps of K, 32 for a 1x1 conv): ResNet-50's 7 x 7 = 49 positions by 512 channels
  // tile as 49 x 512 against 514 x 64 (3 x 3, K = 4608: 2.68 -> 1.51 ms), its 14 x 14 = 196
  // by 256 as 196 x 256 against 256 x 224 (1.87 -> 1.53 ms); 196 by 1024 with K = 256
  // stays.
  const bool fewer_positions = kern->out_size < blk.nr;
  const int64_t extra = pointwise ? 32 : 64;  // a 1x1 conv's X is read in place: only Y^T is transposed
  const int64_t cost_t = cpu::sgemm_tile_area(kern->out_size, kern->mg, kern->isa) * (kern->k_rows + extra);
  const int64_t cost_n = cpu::sgemm_tile_area(kern->mg, kern->out_size, kern->isa) * kern->k_rows;
  if (kern->mg >= blk.nr && (fewer_positions || cost_t * 20 < cost_n * 19)) {
    kern->narrow = true;
    // Images per product: up to kNarrowMaxRows rows (a few positions per image fill only a
    // few of the micro-kernel's MR rows; a batch of them fills its panels and reuses each
    // packed panel of W^T), with col (K x rows) within kNarrowColFloats.
    kern->narrow_batch = std::clamp<int64_t>(
        std::min(kNarrowMaxRows / kern->out_size, kNarrowColFloats / (kern->k_rows * kern->out_size)), 1, kern->batch);
    const int64_t rows = kern->narrow_batch * kern->out_size;
    kern->col_bytes = align64(static_cast<size_t>(kern->k_rows * rows) * sizeof(float));
    kern->blocking = blk;
    kern->yt_transpose = plan_transpose({kern->out_size, kern->mg}, {1, 0}, sizeof(float));
#if defined(__x86_64__) || defined(_M_X64)
    kern->narrow_packed_col = g.rank == 2 && kern->isa == cpu::SgemmIsa::kAvx512 && blk.mr <= 16 &&
                              kern->k_size <= cpu::kIm2colPackedMaxTaps &&
                              kern->narrow_batch * kern->c_in * kern->in_size < (int64_t{1} << 31);
    if (kern->narrow_packed_col)
      kern->col_bytes = align64(cpu::sgemm_packed_a_floats(rows, kern->k_rows, kern->isa) * sizeof(float));
#endif
    if (pointwise && kern->narrow_batch == 1) kern->col_bytes = 0;  // X is col (run: in_place)
    kern->yt_bytes = align64(static_cast<size_t>(rows * kern->mg) * sizeof(float));
    // After col and Y^T: the product's scratch (constant weights come pre-packed, below),
    // then, the product done, the Transpose's stage buffers in the same bytes.
    const bool wt_prepacked = ctx.input(1).constant != nullptr;
    kern->scratch = kern->col_bytes + kern->yt_bytes +
                    align64(std::max(cpu::sgemm_scratch_bytes(rows, kern->mg, kern->k_rows, threads, kern->isa, wt_prepacked),
                                     transpose_scratch_bytes(kern->yt_transpose, threads)));
    if (const auto& wc = ctx.input(1).constant) {
      kern->packed_wt_group_floats = cpu::sgemm_packed_b_floats(kern->mg, kern->k_rows, kern->isa);
      const size_t bytes = align64(kern->packed_wt_group_floats * static_cast<size_t>(kern->group) * sizeof(float));
      void* mem = std::aligned_alloc(64, std::max<size_t>(bytes, 64));
      if (!mem) return out_of_memory(ctx.node.describe() + ": cannot allocate the packed weights");
      kern->packed_wt.reset(static_cast<float*>(mem));
      for (int64_t gi = 0; gi < kern->group; ++gi)
        cpu::sgemm_pack_b(wc->data_as<float>() + gi * kern->mg * kern->k_rows, kern->k_rows, true, kern->k_rows, kern->mg,
                          kern->isa, kern->packed_wt.get() + static_cast<size_t>(gi) * kern->packed_wt_group_floats);
    }
    return std::unique_ptr<Kernel>(std::move(kern));
  }

#if defined(__x86_64__) || defined(_M_X64)
  kern->im2col_avx512 = !pointwise && avx512 && g.rank == 2 && (g.strides[1] == 1 || g.strides[1] == 2);
#endif
  // Tile width: a col tile of about kColTileFloats, a multiple of 32 columns (the widest NR).
  int64_t tile = std::clamp<int64_t>(kColTileFloats / kern->k_rows, kMinTile, kMaxTile) / 32 * 32;
  const int64_t planes = kern->batch * kern->group;
  // Enough tiles for every thread to run whole tiles, while tiles stay >= kMinTile wide.
  if (threads > 1 && planes < 2 * threads) {
    const int64_t want_tiles = (2 * threads + planes - 1) / planes;
    const int64_t narrow = (kern->out_size + want_tiles - 1) / want_tiles;
    tile = std::min(tile, std::max(kMinTile, (narrow + 31) / 32 * 32));
  }
  tile = std::min(tile, kern->out_size);
  kern->tile = tile;
  kern->tiles_per_plane = (kern->out_size + tile - 1) / tile;
  kern->tasks = planes * kern->tiles_per_plane;
  if (const auto& wc = ctx.input(1).constant)
    TSR_RETURN_IF_ERROR(kern->packed_w.pack(wc->data_as<float>(), kern->group, kern->mg * kern->k_rows, kern->k_rows, false,
                                            kern->mg, kern->k_rows, kern->isa, ctx.node.describe()));
  kern->per_thread = threads == 1 || kern->tasks >= 2 * threads;
  kern->blocking = cpu::sgemm_blocking(kern->isa);
  kern->col_bytes =
      pointwise ? 0 : align64(static_cast<size_t>(kern->k_rows * round_up(tile, kern->blocking.nr)) * sizeof(float));
  if (kern->per_thread) {
    kern->gemm_bytes = align64(cpu::sgemm_scratch_bytes(kern->mg, tile, kern->k_rows, 1, kern->isa));
    kern->slot_bytes = kern->col_bytes + kern->gemm_bytes;
    kern->scratch = kern->slot_bytes * static_cast<size_t>(threads);
  } else {
    kern->gemm_bytes = align64(cpu::sgemm_scratch_bytes(kern->mg, tile, kern->k_rows, threads, kern->isa));
    kern->scratch = kern->col_bytes + kern->gemm_bytes;
  }
  return std::unique_ptr<Kernel>(std::move(kern));
}

}  // namespace tessera::x86
