// Conv 3x3 / stride 1 / dilation 1 / one group by Winograd's minimal filtering F(4x4, 3x3)
// (Lavin & Gray, "Fast Algorithms for Convolutional Neural Networks", CVPR 2016), float32,
// NCHW. See conv_winograd.cc for the algorithm, its blocking and its error.
#pragma once

#include <memory>

#include "backends/backend.h"

namespace tessera::x86 {

/// When make_Conv uses the Winograd kernel (`heuristic`): the CPU has AVX-512F or AVX2+FMA,
/// W and B are constants, there are at least 16 input and 16 output channels and at least
/// 32 (AVX-512) or 16 (AVX2) output tiles of 4x4 per image (smaller planes gain less than
/// reading the 4x larger transformed weights costs), and the environment
/// variable TESSERA_WINOGRAD is not "0". Without `heuristic`, any Conv of that form (3x3,
/// stride 1, dilation 1, group 1, 2-D, float, constant W) gets it, on any CPU: for tests.
/// Returns a null kernel (declines) when the node is not of that form; errors only for
/// memory (the transformed weights: 36 * C * M floats).
///
/// Inf and NaN: the transforms combine the 6x6 inputs of a tile with weights of both signs,
/// so one Inf becomes NaN (Inf - Inf) and one NaN reaches all 16 outputs of its tiles, where
/// the direct sum gives Inf, or NaN on the 9 outputs that read it (as onnxruntime). So the
/// kernel declines weights that are not all finite, and each run first checks X (one
/// vectorized pass) and, if X holds Inf or NaN, runs the im2col kernel (make_Conv_gemm,
/// compiled alongside) instead.
Result<std::unique_ptr<Kernel>> make_Conv_winograd(const CompileContext& ctx, bool heuristic);

/// True when make_Conv_winograd(ctx, /*heuristic=*/true) would take the node (before its
/// weights are checked for Inf and NaN); allocates nothing.
bool winograd_heuristic_takes(const CompileContext& ctx);

/// The Conv kernel without Winograd (im2col or 1x1 on the SGEMM, narrow-output, direct and
/// depthwise paths; conv_x86.cc): make_Conv's choice for everything Winograd does not take.
Result<std::unique_ptr<Kernel>> make_Conv_gemm(const CompileContext& ctx);

}  // namespace tessera::x86
