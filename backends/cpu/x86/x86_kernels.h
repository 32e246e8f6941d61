// Optimized x86 kernels of the CPU backend. The backend asks find_x86_kernel(op) first; a
// factory returns a null kernel (not an error) for a node it does not handle (another dtype
// or shape), and the backend then uses the reference kernel. Each kernel file sits beside
// its reference (backends/cpu/ref/<op>.cc) and is tested against it.
#pragma once

#include <string>
#include <vector>

#include "backends/backend.h"

namespace tessera::x86 {

/// MatMul (ONNX MatMul-1/9/13, numpy.matmul), float32, on the packed SGEMM.
Result<std::unique_ptr<Kernel>> make_MatMul(const CompileContext& ctx);
/// Gemm (ONNX Gemm-7/9/11/13), float32, on the packed SGEMM.
Result<std::unique_ptr<Kernel>> make_Gemm(const CompileContext& ctx);
/// Conv (ONNX Conv-1/11), float32, N-d: im2col + the packed SGEMM, or a direct loop for
/// depthwise-like 2-D convs (fewer than 4 output channels per group).
Result<std::unique_ptr<Kernel>> make_Conv(const CompileContext& ctx);

/// The blocked layout NCHW16c (conv_nchwc.h; x86-64 with AVX-512F or AVX2). nchwc_mode: how this
/// node runs in it, given ctx.nchwc_inputs (bit i: input i is blocked now): 1 = blocked output
/// (Conv: float32, 2-D, constant W and B, group 1 or depthwise at stride <= 2, at least 16
/// output channels, X either way; MaxPool without Indices, and a Resize that copies rows
/// and columns (resize_nearest_indices), X blocked; Concat along channels of blocked inputs,
/// all but the last a multiple of 16 channels), 2 = blocked X and a plain output
/// (GlobalAveragePool), 0 = not at all. make_nchwc_kernel: its kernel, for a
/// context the planner set up so (nchwc_output for mode 1; a fused residual of a Conv
/// blocked). Errors: internal_error when asked for a mode the node does not have.
int nchwc_mode(const CompileContext& ctx);
Result<std::unique_ptr<Kernel>> make_nchwc_kernel(const CompileContext& ctx);
Result<std::unique_ptr<Kernel>> make_Conv_nchwc(const CompileContext& ctx);
/// The layout conversion of one float32 tensor [N, C, spatial...]: NCHW -> NCHW16c
/// (to_blocked; the padding channels written 0) or back, on the path best_isa() gives now
/// (AVX-512F or AVX2; nchwc_mode is 0 on other CPUs, so nothing asks for it there).
std::unique_ptr<Kernel> make_nchwc_reorder(const Shape& shape, bool to_blocked, int threads);

/// ConvTranspose (ONNX ConvTranspose-1/11), float32, 2-D: GEMM (W^T X) + col2im scatter.
Result<std::unique_ptr<Kernel>> make_ConvTranspose(const CompileContext& ctx);
/// MaxPool (-1/8/10/11/12) and AveragePool (-1/7/10/11/19), 2-D NCHW float32, dilation 1,
/// no Indices output (pool_x86.cc); GlobalMaxPool / GlobalAveragePool (-1), float32.
Result<std::unique_ptr<Kernel>> make_MaxPool(const CompileContext& ctx);
Result<std::unique_ptr<Kernel>> make_AveragePool(const CompileContext& ctx);
Result<std::unique_ptr<Kernel>> make_GlobalMaxPool(const CompileContext& ctx);
Result<std::unique_ptr<Kernel>> make_GlobalAveragePool(const CompileContext& ctx);
/// Softmax / LogSoftmax (-1/11/13), float32, along the axis (softmax_x86.cc).
Result<std::unique_ptr<Kernel>> make_Softmax(const CompileContext& ctx);
Result<std::unique_ptr<Kernel>> make_LogSoftmax(const CompileContext& ctx);
/// LayerNormalization (-17), float32, Scale and B of the normalized shape (norm_x86.cc).
Result<std::unique_ptr<Kernel>> make_LayerNormalization(const CompileContext& ctx);
/// ReduceSum / ReduceMean / ReduceMax, float32, over a suffix of the axes (reduce_x86.cc).
Result<std::unique_ptr<Kernel>> make_ReduceSum(const CompileContext& ctx);
Result<std::unique_ptr<Kernel>> make_ReduceMean(const CompileContext& ctx);
Result<std::unique_ptr<Kernel>> make_ReduceMax(const CompileContext& ctx);
/// Resize (-10/11/13/18/19), 4-D NCHW float32 resizing H and W only (resize_x86.cc).
Result<std::unique_ptr<Kernel>> make_Resize(const CompileContext& ctx);
/// When ctx's Resize (4-D float32, N and C kept) is a copy in H and W, each output row oy
/// reading input row (*ih)[oy] and each column ox input column (*iw)[ox] (nearest, one tap
/// of weight 1, nothing outside: the reference's own indices, ref::resize_axis_taps),
/// fills them and returns true; else false.
bool resize_nearest_indices(const CompileContext& ctx, std::vector<int32_t>* ih, std::vector<int32_t>* iw);
/// Pad (-1/2/11/13/18/19/21), every numeric dtype (float16 and bfloat16 included) and mode,
/// row by row (pad_x86.cc; ISA-independent).
Result<std::unique_ptr<Kernel>> make_Pad(const CompileContext& ctx);
/// Transpose (-1/13/21), any dtype of 1, 2, 4 or 8 bytes (transpose_x86.cc).
Result<std::unique_ptr<Kernel>> make_Transpose(const CompileContext& ctx);

/// LSTM (ONNX LSTM-7/14), float32, layout 0, no sequence_lens: the gate products on the
/// packed SGEMM (lstm_x86.cc).
Result<std::unique_ptr<Kernel>> make_LSTM(const CompileContext& ctx);

/// True for the ops whose optimized kernel applies a fused tail (CompileContext::epilogue);
/// every other factory must not be given one.
bool takes_epilogue(const std::string& op_type);

/// The optimized factory for `op_type` (MatMul, Gemm, Conv, the elementwise ops of
/// elementwise_x86.h), or nullptr. x86-64 builds only (MatMul, Gemm and Conv are
/// ISA-independent and are also built on aarch64: see arm/arm_kernels.h).
KernelFactory find_x86_kernel(const std::string& op_type);

}  // namespace tessera::x86
