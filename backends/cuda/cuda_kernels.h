// Launchers of Tessera's own CUDA kernels (backends/cuda/*.cu), callable from plain C++.
// Every launcher enqueues its work on `stream` and returns the launch error (cudaSuccess
// when the launch was accepted; an asynchronous failure surfaces at the next
// synchronization). Tensors are dense row-major (NCHW for images) device pointers; sizes
// are in elements unless a name says bytes. The math of each kernel is the ONNX operator's
// (the CPU reference kernels in backends/cpu/ref/ are the oracle): float ops compute in
// double and round once to float, as the reference does, so results agree to ~1 ulp.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "backends/unary_math_op.h"

namespace tessera::cuda {

constexpr int kMaxDims = 8;

/// out[i] = in[offset + sum_d coord_d(i) * in_strides[d]], coords of i in `out_dims`
/// (row-major). Strides may be 0 (broadcast) or negative (Slice with negative steps).
/// Serves Transpose, Slice, Expand and broadcast copies.
struct StridedView {
  int rank = 0;
  int64_t out_dims[kMaxDims] = {};
  int64_t in_strides[kMaxDims] = {};
  int64_t in_offset = 0;
};
/// `elem_bytes` is 1, 2, 4, 8 or 16 (16: in and out 16-byte aligned); n = prod(out_dims)
/// elements.
cudaError_t launch_strided_copy(const void* in, void* out, int64_t n, int elem_bytes, const StridedView& v,
                                cudaStream_t stream);

/// out[b][c][r] = in[b][r][c] for in [batch, rows, cols] (32x32 tiles through shared
/// memory, so that reads and writes are both coalesced). `elem_bytes` is 4 or 8.
cudaError_t launch_transpose_tiled(const void* in, void* out, int64_t batch, int64_t rows, int64_t cols, int elem_bytes,
                                   cudaStream_t stream);

/// Binary float32 ops with numpy broadcasting (ONNX "Broadcasting in ONNX").
enum class BinaryOp : int { kAdd, kSub, kMul, kDiv, kPow, kMax, kMin, kPRelu };
/// a and b strides are over the output dims (0 where an input is broadcast); `a_dense`
/// / `b_dense` say the input has the output's shape (index = i).
struct BinaryBroadcast {
  int rank = 0;
  int64_t out_dims[kMaxDims] = {};
  int64_t a_strides[kMaxDims] = {};
  int64_t b_strides[kMaxDims] = {};
  bool a_dense = false, b_dense = false;
};
cudaError_t launch_binary_f32(BinaryOp op, const float* a, const float* b, float* y, int64_t n, const BinaryBroadcast& p,
                              cudaStream_t stream);

/// Unary float32 ops: y = f(x) computed in double (see the CPU reference formulas).
/// The ops: backends/unary_math_op.h, shared with the Vulkan backend.
using UnaryOp = UnaryMathOp;
/// alpha/beta: LeakyRelu, Elu (alpha), Selu (alpha, gamma = beta), HardSigmoid (alpha,
/// beta), Clip (min = alpha, max = beta).
cudaError_t launch_unary_f32(UnaryOp op, const float* x, float* y, int64_t n, double alpha, double beta, cudaStream_t stream);

/// The fused tail of a Conv, MatMul or Gemm (see Epilogue in backends/backend.h), in place
/// on y [n elements]:
///   v = y[i] + chan_bias[(i / chan_inner) % chan_count] + col_bias[i % col_count] + addend[i]
///   y[i] = act(v) * scale + shift        (act: `op` with alpha/beta, as launch_unary_f32)
/// Each of chan_bias, col_bias and addend may be null (not added); has_act false: no act.
/// The sums are float additions in that order; the activation is computed in double.
struct EpilogueParams {
  const float* chan_bias = nullptr;
  int64_t chan_inner = 1, chan_count = 1;
  const float* col_bias = nullptr;
  int64_t col_count = 1;
  const float* addend = nullptr;
  bool has_act = false;
  UnaryOp op = UnaryOp::kIdentity;
  double alpha = 0, beta = 0;
  float scale = 1.f, shift = 0.f;
};
cudaError_t launch_epilogue_f32(float* y, int64_t n, const EpilogueParams& p, cudaStream_t stream);

/// Softmax / LogSoftmax over the middle axis of x viewed as [outer, len, inner]:
/// y = exp(x - max) / sum(exp(x - max)) (max in float, sum in double). One block per row.
cudaError_t launch_softmax_f32(const float* x, float* y, int64_t outer, int64_t len, int64_t inner, bool log,
                               cudaStream_t stream);

/// LayerNormalization over rows of `inner` elements (ONNX LayerNormalization-17): two-pass
/// mean and variance in double; y = (x - mean) / sqrt(var + eps) * scale[j % scale_n] +
/// bias[j % bias_n] (bias may be null). mean_out / inv_std_out may be null. One block per row.
cudaError_t launch_layer_norm_f32(const float* x, const float* scale, int64_t scale_n, const float* bias, int64_t bias_n,
                                  float* y, float* mean_out, float* inv_std_out, int64_t rows, int64_t inner, double eps,
                                  cudaStream_t stream);

/// Sum or mean of x viewed as [outer, len, inner] over len (double accumulation):
/// y[o, i] (y is [outer, inner]). One block per output element.
cudaError_t launch_reduce_f32(const float* x, float* y, int64_t outer, int64_t len, int64_t inner, bool mean,
                              cudaStream_t stream);

/// BatchNormalization (inference) on x [N, C, spatial]: y = (x - mean[c]) /
/// sqrt(var[c] + eps) * scale[c] + bias[c], in double.
cudaError_t launch_batch_norm_f32(const float* x, const float* scale, const float* bias, const float* mean,
                                  const float* var, float* y, int64_t n, int64_t c, int64_t spatial, double eps,
                                  cudaStream_t stream);

/// 2-D pooling on x [N*C planes, H, W] -> y [N*C, OH, OW]; taps outside the input are
/// skipped. Max: the largest tap (lowest float when none). Average: sum / (count_include_pad
/// ? kh*kw : taps inside), 0 when no tap is inside.
struct Pool2d {
  int64_t planes = 0, h = 0, w = 0, oh = 0, ow = 0;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
  bool max = true, count_include_pad = false;
};
cudaError_t launch_pool2d_f32(const float* x, float* y, const Pool2d& p, cudaStream_t stream);

/// Gather along an axis: data viewed as [outer, axis_len, inner] (elem_bytes each),
/// indices (int32 or int64, n_idx of them, negative counts from the end) -> out [outer,
/// n_idx, inner]. An index out of [-axis_len, axis_len) writes zeros and sets *error_flag
/// to 1 (the backend reports it at the next synchronize).
cudaError_t launch_gather(const void* data, const void* indices, bool indices_int64, void* out, int64_t outer,
                          int64_t axis_len, int64_t n_idx, int64_t inner, int elem_bytes, int* error_flag,
                          cudaStream_t stream);

/// Resize of x [planes, H, W] -> y [planes, OH, OW] (ONNX Resize-11..19, 2-D, nearest or
/// linear). Coordinate transform per axis: x_original = f(x_resized) with
/// mode 0 half_pixel, 1 asymmetric, 2 align_corners, 3 pytorch_half_pixel, 4 tf_half_pixel_for_nn;
/// nearest rounding: 0 round_prefer_floor, 1 round_prefer_ceil, 2 floor, 3 ceil.
/// scale_h / scale_w: the scales (output / input) the transform uses.
struct Resize2d {
  int64_t planes = 0, h = 0, w = 0, oh = 0, ow = 0;
  double scale_h = 1, scale_w = 1;
  int coord_mode = 0, nearest_mode = 0;
  bool linear = false;
  bool exact_nearest = false;  // GpuResize2d::exact_nearest (backends/gpu_resize.h)
};
cudaError_t launch_resize2d_f32(const float* x, float* y, const Resize2d& p, cudaStream_t stream);

}  // namespace tessera::cuda
