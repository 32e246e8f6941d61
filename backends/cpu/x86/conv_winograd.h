// Conv 3x3 / stride 1 / dilation 1 / one group by Winograd's minimal filtering F(4x4, 3x3)
// (Lavin & Gray, "Fast Algorithms for Convolutional Neural Networks", CVPR 2016), float32,
// NCHW. See conv_winograd.cc for the algorithm, its blocking and its error.
#pragma once

#include <cstdint>
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
/// vectorized pass) and, if X holds Inf or NaN or a magnitude past winograd_input_limit
/// (where the transforms could overflow), runs the im2col kernel (make_Conv_gemm, compiled
/// alongside) instead.
Result<std::unique_ptr<Kernel>> make_Conv_winograd(const CompileContext& ctx, bool heuristic);

/// True when make_Conv_winograd(ctx, /*heuristic=*/true) would take the node (before its
/// weights are checked for Inf and NaN); allocates nothing.
bool winograd_heuristic_takes(const CompileContext& ctx);

/// The Conv kernel without Winograd (im2col or 1x1 on the SGEMM, narrow-output, direct and
/// depthwise paths; conv_x86.cc): make_Conv's choice for everything Winograd does not take.
Result<std::unique_ptr<Kernel>> make_Conv_gemm(const CompileContext& ctx);

/// When make_Conv_nchwc runs a Conv by the NCHW16c Winograd kernel (conv_winograd_nchwc.cc):
/// AVX-512F or AVX2+FMA, 2-D 3x3, stride 1, dilation 1, one group, float, constant W, input
/// and output channels multiples of 16, at least 16 output tiles of 4x4 per image (a 13 x 13
/// output), and neither TESSERA_WINOGRAD nor TESSERA_WINOGRAD_NCHWC is "0". Whether X is
/// blocked is not checked (a Conv's X of 16 channels or more is blocked by the planner).
bool winograd_nchwc_takes(const CompileContext& ctx);

/// The NCHW16c Winograd F(4x4, 3x3) kernel for a Conv that winograd_nchwc_takes, whose X is
/// blocked: X, Y and the fused residual are NCHW16c ([N, C/16, H, W, 16]); the bias and the
/// fused tail (residual, activation) as the direct kernel's. `direct` is the direct NCHW16c
/// kernel of the same node: run instead when X holds Inf or NaN, and returned as it is when
/// W holds Inf or NaN. Errors: internal (a node it does not take), out of memory (the
/// transformed weights, 36 * C * M floats).
Result<std::unique_ptr<Kernel>> make_Conv_winograd_nchwc(const CompileContext& ctx, std::unique_ptr<Kernel> direct);

/// True if every |x[i]| <= limit for x[0 .. n), so none is Inf or NaN (one vectorized pass;
/// the Winograd kernels' check of X before each run).
bool winograd_all_within(const float* x, int64_t n, float limit);

/// The largest |X| for which F(4x4, 3x3) with these transformed weights u (n floats, c_in
/// input channels) cannot overflow in any intermediate (V, the 36 products' partial sums,
/// the output transform), bounded by the transforms' absolute row sums; 0 when u holds
/// Inf or NaN. Larger inputs (finite ones near 1e33 and up) run the direct kernel, whose sum
/// overflows only where the true result does: Winograd had turned X = 1e37 into NaN
/// everywhere where the direct sum is about 1e37.
float winograd_input_limit(const float* u, int64_t n, int64_t c_in);

/// The F(4x4, 3x3) weight transform U = G w G^T (computed in double, rounded to float) of
/// the 3x3 filters w (m_out x c_in x 3 x 3, ONNX Conv's W): u[xi][m][c], xi = 6 a + b the
/// position in the 6x6 transformed filter, 36 * m_out * c_in floats.
void winograd_f43_weights(const float* w, int64_t m_out, int64_t c_in, float* u);

}  // namespace tessera::x86
