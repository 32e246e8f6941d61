// Reading a unary node, or a fused activation, as a UnaryMathOp with its attributes: the
// one parser of the GPU backends (CUDA and Vulkan), so both take the same ONNX ops with the
// same defaults.
#pragma once

#include <cfloat>
#include <cmath>
#include <string>

#include "backends/backend.h"
#include "backends/unary_math_op.h"

namespace tessera {

/// A unary op and its attributes: LeakyRelu/Elu alpha; Selu alpha and gamma (= beta);
/// HardSigmoid alpha, beta; Clip [alpha, beta] = [min, max]. Unused otherwise.
struct UnaryMath {
  UnaryMathOp op = UnaryMathOp::kIdentity;
  float alpha = 0.f, beta = 0.f;
};

/// The op of a unary float node (ONNX Relu-6, LeakyRelu-6, Elu-6, Selu-6, Sigmoid-6,
/// HardSigmoid-6, HardSwish-14, Tanh-6, Softplus-1, Softsign-1, Gelu-20, Erf-9, Exp-6,
/// Log-6, Sqrt-6, Reciprocal-6, Abs-6, Neg-6, Floor-6, Ceil-6, Sin-7, Cos-7, Mish-18,
/// Clip-1..13) with the spec's attribute defaults. False for another op, and for a Clip
/// (opset 11+) whose min or max is not a plan-time scalar (the CPU reads those at run time).
inline bool unary_math_of_node(const CompileContext& ctx, UnaryMath* out) {
  const Node& node = ctx.node;
  const std::string& t = node.op_type;
  UnaryMath u;
  using U = UnaryMathOp;
  if (t == "Relu") u.op = U::kRelu;
  else if (t == "LeakyRelu") u.op = U::kLeakyRelu, u.alpha = node.attr_f("alpha", 0.01f);
  else if (t == "Elu") u.op = U::kElu, u.alpha = node.attr_f("alpha", 1.0f);
  else if (t == "Selu")
    u.op = U::kSelu, u.alpha = node.attr_f("alpha", 1.67326319217681884765625f),
    u.beta = node.attr_f("gamma", 1.05070102214813232421875f);
  else if (t == "Sigmoid") u.op = U::kSigmoid;
  else if (t == "HardSigmoid") u.op = U::kHardSigmoid, u.alpha = node.attr_f("alpha", 0.2f), u.beta = node.attr_f("beta", 0.5f);
  else if (t == "HardSwish") u.op = U::kHardSwish;
  else if (t == "Tanh") u.op = U::kTanh;
  else if (t == "Softplus") u.op = U::kSoftplus;
  else if (t == "Softsign") u.op = U::kSoftsign;
  else if (t == "Gelu") u.op = node.attr_s("approximate", "none") == "tanh" ? U::kGeluTanh : U::kGeluErf;
  else if (t == "Erf") u.op = U::kErf;
  else if (t == "Exp") u.op = U::kExp;
  else if (t == "Log") u.op = U::kLog;
  else if (t == "Sqrt") u.op = U::kSqrt;
  else if (t == "Reciprocal") u.op = U::kReciprocal;
  else if (t == "Abs") u.op = U::kAbs;
  else if (t == "Neg") u.op = U::kNeg;
  else if (t == "Floor") u.op = U::kFloor;
  else if (t == "Ceil") u.op = U::kCeil;
  else if (t == "Sin") u.op = U::kSin;
  else if (t == "Cos") u.op = U::kCos;
  else if (t == "Mish") u.op = U::kMish;
  else if (t == "Clip") {
    u.op = U::kClip;
    if (node.opset < 11) {
      u.alpha = node.attr_f("min", -INFINITY);
      u.beta = node.attr_f("max", INFINITY);
    } else {
      u.alpha = -FLT_MAX;  // as the reference: numeric_limits<float>::lowest() / max()
      u.beta = FLT_MAX;
      for (int i = 1; i <= 2; ++i) {
        if (!ctx.has_input(i)) continue;
        const ValueInfo& v = ctx.input(i);
        if (!v.constant || v.constant->numel() != 1 || v.constant->dtype() != DType::kFloat32) return false;
        (i == 1 ? u.alpha : u.beta) = v.constant->data_as<float>()[0];
      }
    }
  } else {
    return false;
  }
  *out = u;
  return true;
}

/// The activation of a planner-fused tail (FusedActivation; its affine map is not part of
/// it). kNone gives kIdentity. False for a kind with no UnaryMathOp.
inline bool unary_math_of_activation(const FusedActivation& a, UnaryMath* out) {
  using K = FusedActivation::Kind;
  using U = UnaryMathOp;
  UnaryMath u;
  u.alpha = a.alpha;
  u.beta = a.beta;
  switch (a.kind) {
    case K::kNone: u.op = U::kIdentity; break;
    case K::kRelu: u.op = U::kRelu; break;
    case K::kLeakyRelu: u.op = U::kLeakyRelu; break;
    case K::kClip: u.op = U::kClip; break;
    case K::kSigmoid: u.op = U::kSigmoid; break;
    case K::kHardSigmoid: u.op = U::kHardSigmoid; break;
    case K::kHardSwish: u.op = U::kHardSwish; break;
    case K::kTanh: u.op = U::kTanh; break;
    case K::kGelu: u.op = U::kGeluErf; break;
    default: return false;
  }
  *out = u;
  return true;
}

}  // namespace tessera
