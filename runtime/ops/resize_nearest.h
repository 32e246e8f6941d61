// Nearest Resize with `sizes` (scale = out / in exactly) in integer arithmetic: the source
// index of an output index, exact at ties. Shared by the CPU reference kernel
// (backends/cpu/ref/resize.cc, whose indices every CPU path uses) and the CUDA kernel
// (backends/cuda/rows.cu); the Vulkan shader resize.comp has the same arithmetic in GLSL.
//
// Why: the source coordinate of ONNX Resize's transformations is a fraction, and floating
// point puts its exact integer and half-integer values a rounding to either side, where
// floor, ceil and the round_prefer modes then take the neighbouring pixel. 500 random 1-D
// nearest Resizes (2..60 -> 2..120, five transformations, four nearest modes) were off the
// exact answer in 9 (the ONNX reference, a float32 scale in double arithmetic), 7
// (onnxruntime), 6 (Tessera's CPU with out / in in double) and 4 (Tessera's Vulkan shader,
// float) cases, each set different; with this, none.
//
// Codes (as GpuResize2d's, backends/gpu_resize.h):
//   coord:   0 half_pixel, 1 asymmetric, 2 align_corners, 3 pytorch_half_pixel,
//            4 tf_half_pixel_for_nn, 5 half_pixel_symmetric;
//   nearest: 0 round_prefer_floor, 1 round_prefer_ceil, 2 floor, 3 ceil, 4 simple
//            (Upsample before opset 11: ceil when downsampling, else truncate).
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define TSR_RESIZE_HD __host__ __device__
#else
#define TSR_RESIZE_HD
#endif

namespace tessera {

/// The largest `in` and `out` of the exact path: the numerators below, up to (2 out + 1) in,
/// then stay under 2^63 (the GPU kernels also check their own 32-bit bound).
constexpr int64_t kResizeExactMaxLength = int64_t{1} << 30;

/// The source coordinate num / den (den > 0) of output index o along an axis resized from
/// `in` to `out` by sizes, for coord codes 0..5 (see the file comment). With s = out / in:
/// half_pixel (o + 1/2) / s - 1/2 = ((2o + 1) in - out) / (2 out); asymmetric o in / out;
/// align_corners o (in - 1) / (out - 1) (0 when out = 1); pytorch_half_pixel as half_pixel
/// (0 when out = 1); tf_half_pixel_for_nn (2o + 1) in / (2 out); half_pixel_symmetric
/// equals half_pixel when s = out / in (its adjustment is 1). Needs 1 <= in, out <=
/// kResizeExactMaxLength and 0 <= o < out.
TSR_RESIZE_HD inline void resize_exact_coordinate(int coord, int64_t o, int64_t in, int64_t out, int64_t* num,
                                                  int64_t* den) {
  switch (coord) {
    case 1: *num = o * in, *den = out; return;
    case 2:
      if (out == 1) *num = 0, *den = 1;
      else *num = o * (in - 1), *den = out - 1;
      return;
    case 3:
      if (out == 1) {
        *num = 0, *den = 1;
        return;
      }
      *num = (2 * o + 1) * in - out, *den = 2 * out;
      return;
    case 4: *num = (2 * o + 1) * in, *den = 2 * out; return;
    default: *num = (2 * o + 1) * in - out, *den = 2 * out; return;  // 0 and 5
  }
}

/// The nearest source index (clamped to [0, in - 1]) of the coordinate num / den (den > 0)
/// for nearest code 0..4; `downsample`: out < in (the simple mode's rule).
TSR_RESIZE_HD inline int64_t resize_exact_nearest(int nearest, int64_t num, int64_t den, int64_t in, bool downsample) {
  int64_t fl = num / den, rem = num % den;  // C++ truncates: make it floor
  if (rem < 0) fl -= 1, rem += den;
  int64_t r = fl;
  switch (nearest) {
    case 0: r = 2 * rem <= den ? fl : fl + 1; break;  // round_prefer_floor: ties down
    case 1: r = 2 * rem < den ? fl : fl + 1; break;   // round_prefer_ceil: ties up
    case 2: r = fl; break;
    case 3: r = rem != 0 ? fl + 1 : fl; break;
    default: r = downsample ? (rem != 0 ? fl + 1 : fl) : (num < 0 && rem != 0 ? fl + 1 : fl); break;  // ceil / trunc
  }
  return r < 0 ? 0 : (r > in - 1 ? in - 1 : r);
}

}  // namespace tessera
