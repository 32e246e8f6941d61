// Conv 3x3 / stride 1 / dilation 1 / one group by Winograd's minimal filtering F(4x4, 3x3)
// (Lavin & Gray, "Fast Algorithms for Convolutional Neural Networks", CVPR 2016), float32,
// NCHW. See conv_winograd.cc for the algorithm, its blocking and its error.
#pragma once

#include <memory>

#include "backends/backend.h"

namespace tessera::x86 {

/// When make_Conv uses the Winograd kernel (`heuristic`): the CPU has AVX-512F (the only
/// path measured against im2col), W and B are constants, there are at least 16 input and
/// 16 output channels and at least 16 output tiles of 4x4 per image (smaller planes gain
/// less than reading the 4x larger transformed weights costs), and the environment
/// variable TESSERA_WINOGRAD is not "0". Without `heuristic`, any Conv of that form (3x3,
/// stride 1, dilation 1, group 1, 2-D, float, constant W) gets it, on any CPU: for tests.
/// Returns a null kernel (declines) when the node is not of that form; errors only for
/// memory (the transformed weights: 36 * C * M floats).
Result<std::unique_ptr<Kernel>> make_Conv_winograd(const CompileContext& ctx, bool heuristic);

}  // namespace tessera::x86
