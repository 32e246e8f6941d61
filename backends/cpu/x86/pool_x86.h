// The 2-D pooling and global pooling bodies of pool_x86.cc, one per ISA (pool_avx512.cc,
// pool_avx2.cc, compiled from pool_x86_impl.h with their own flags; see simd_x86.h).
//
// Pool2dPlan describes MaxPool / AveragePool over X [planes, H, W] -> Y [planes, OH, OW]
// (NCHW, float32, planes = N * C) with a KH x KW window, strides SH x SW, begin pads PT, PL,
// dilation 1. Every window holds at least one input tap (the factory checks it).
// Algorithm (separable windows): for output row oh, the KH input rows
// ih = oh * SH - PT + kh inside X are combined element-wise (max or sum) into a padded row
// buffer t (t[PL + w] = op_kh X[ih, w], t outside X = -inf for max, 0 for sum); then
//   Y[oh, ow] = op_{kw < KW} t[ow * SW + kw]
// vectorized over ow (SW = 1: unaligned loads; SW = 2: the even lanes of two loads; other
// strides: scalar), times 1 / count for the average: count = KH * KW with
// count_include_pad, else (valid rows) * (valid columns) = row_inv[oh] * col_inv[ow].
#pragma once

#include <cstdint>

namespace tessera::x86 {

/// Row reductions: y[i] = sum, mean or max of x[i * size .. (i + 1) * size) (the global
/// pools, and ReduceSum / ReduceMean / ReduceMax over a suffix of the axes).
enum class RowReduce { kSum, kMean, kMax };

struct Pool2dPlan {
  bool is_max = true;
  int64_t planes = 0, h = 0, w = 0, oh = 0, ow = 0, kh = 0, kw = 0, sh = 1, sw = 1, pt = 0, pl = 0;
  int64_t row_len = 0;             // floats of the row buffer t (per thread)
  bool count_include_pad = false;  // average: divide by kh * kw
  const float* row_inv = nullptr;  // average without count_include_pad: oh values, 1 / valid rows
  const float* col_inv = nullptr;  //   and ow values, 1 / valid columns
};

namespace avx512 {
/// Computes output rows [begin, end) of the flattened [planes * OH] rows. x: [planes, H, W],
/// y: [planes, OH, OW], t: p.row_len floats of scratch.
void pool2d_rows(const Pool2dPlan& p, const float* x, float* y, float* t, int64_t begin, int64_t end);
/// y[i] = op(x[i * size .. (i + 1) * size)) for i in [begin, end); size >= 1. Sums run in
/// 2 * kW float lanes, combined at the end (pairwise-like, error <= (size / (2 kW) + 5) ulp
/// of the sum of |x|).
void reduce_rows(RowReduce op, const float* x, float* y, int64_t size, int64_t begin, int64_t end);
}  // namespace avx512
namespace avx2 {
void pool2d_rows(const Pool2dPlan& p, const float* x, float* y, float* t, int64_t begin, int64_t end);
void reduce_rows(RowReduce op, const float* x, float* y, int64_t size, int64_t begin, int64_t end);
}  // namespace avx2
namespace neon {  // aarch64: backends/cpu/arm/pool_neon.cc
void pool2d_rows(const Pool2dPlan& p, const float* x, float* y, float* t, int64_t begin, int64_t end);
void reduce_rows(RowReduce op, const float* x, float* y, int64_t size, int64_t begin, int64_t end);
}  // namespace neon

}  // namespace tessera::x86
