// The unary math ops that the GPU backends run as one elementwise kernel, shared by CUDA
// (backends/cuda/elementwise.cu) and Vulkan (backends/vulkan/shaders/common.glsl). Only
// the enum: includable from .cu files. The numbering is the `op` code of common.glsl's
// unary_math switch, so it must not change without that shader.
#pragma once

#include <cstdint>

namespace tessera {

enum class UnaryMathOp : int32_t {
  kRelu, kLeakyRelu, kSigmoid, kTanh, kHardSigmoid, kHardSwish, kClip, kErf, kGeluErf, kGeluTanh, kSqrt, kExp,
  kLog, kAbs, kNeg, kReciprocal, kFloor, kCeil, kSoftplus, kSoftsign, kElu, kSelu, kSin, kCos, kMish,
  kIdentity  // CUDA only (an epilogue with no activation); no shader case
};

}  // namespace tessera
