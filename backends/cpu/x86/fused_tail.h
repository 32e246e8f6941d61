// The fused tail (Epilogue, backends/backend.h) as the x86 Conv, MatMul and Gemm kernels take
// it: which KernelContext inputs hold the residual addend and the bias row, and the
// activation. Checked once at compile time; a tail a kernel cannot apply makes it decline.
#pragma once

#include "backends/backend.h"

namespace tessera::x86 {

struct FusedTail {
  int addend = -1;    // KernelContext input index of a tensor of the output's shape, or -1
  int col_bias = -1;  // index of N float values (the output's last dim), or -1
  FusedActivation act;

  const float* addend_data(const KernelContext& k) const {
    return addend >= 0 ? k.input(static_cast<size_t>(addend)).data_as<float>() : nullptr;
  }
  const float* col_bias_data(const KernelContext& k) const {
    return col_bias >= 0 ? k.input(static_cast<size_t>(col_bias)).data_as<float>() : nullptr;
  }
};

/// The operands Conv and ConvTranspose kernels take: float32 X (input 0) and W (input 1),
/// and the node's own optional float32 B (input 2 of the node; a fused addend or bias row
/// sits after the node's inputs, so it may also be at index 2 of ctx.inputs). Returns false
/// (decline) for anything else; *has_bias says whether B is given.
inline bool float_conv_operands(const CompileContext& ctx, bool* has_bias) {
  if (!ctx.has_input(0) || !ctx.has_input(1) || ctx.input(0).dtype != DType::kFloat32 ||
      ctx.input(1).dtype != DType::kFloat32)
    return false;
  *has_bias = ctx.node.inputs.size() > 2 && ctx.has_input(2);
  return !*has_bias || ctx.input(2).dtype == DType::kFloat32;
}

/// Reads ctx.epilogue (none: an empty tail) into `t`. Returns false when the kernel must
/// decline: a bias row given to a kernel that takes none (allow_col_bias false), or an
/// operand whose dtype or size does not match the float32 output.
inline bool read_fused_tail(const CompileContext& ctx, bool allow_col_bias, FusedTail* t) {
  *t = FusedTail{};
  if (!ctx.epilogue) return true;
  const Epilogue& ep = *ctx.epilogue;
  if (ctx.outputs.empty() || ctx.outputs[0].dtype != DType::kFloat32) return false;
  const Shape& out = ctx.outputs[0].shape;
  if (ep.addend_input >= 0) {
    const size_t i = static_cast<size_t>(ep.addend_input);
    if (!ctx.has_input(i) || ctx.input(i).dtype != DType::kFloat32 || ctx.input(i).shape != out) return false;
    t->addend = ep.addend_input;
  }
  if (ep.col_bias_input >= 0) {
    const size_t i = static_cast<size_t>(ep.col_bias_input);
    if (!allow_col_bias || out.empty() || !ctx.has_input(i) || ctx.input(i).dtype != DType::kFloat32) return false;
    int64_t numel = 1;
    for (int64_t d : ctx.input(i).shape) numel *= d;
    if (ctx.input(i).shape.empty() || ctx.input(i).shape.back() != out.back() || numel != out.back()) return false;
    t->col_bias = ep.col_bias_input;
  }
  t->act = ep.act;
  return true;
}

}  // namespace tessera::x86
