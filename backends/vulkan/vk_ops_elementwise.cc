// Elementwise ops on the Vulkan backend (float32): unary ops and activations (unary.comp)
// and binary ops with broadcast (binary.comp). Attributes and shapes are read at plan time;
// the math is the ONNX spec's, as the CPU reference kernels (backends/cpu/ref/) compute it.
#include <cfloat>
#include <cmath>

#include "backends/unary_math.h"
#include "backends/vulkan/vk_backend.h"

namespace tessera::vk {

namespace {

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

/// unary.comp's `op` is the UnaryMathOp numbering (backends/unary_math_op.h).
using UnaryOp = UnaryMathOp;

struct UnaryPush {
  uint64_t x, y;
  uint32_t n;
  int32_t op;
  float alpha, beta;
};

Result<std::unique_ptr<Kernel>> make_unary(VulkanBackend* b, const CompileContext& ctx) {
  if (!ctx.has_input(0) || !all_float32(ctx) || ctx.outputs.size() != 1) return decline();
  UnaryMath u;
  if (!unary_math_of_node(ctx, &u)) return decline();
  const UnaryOp op = u.op;
  const float alpha = u.alpha, beta = u.beta;
  const int64_t n = numel(ctx.input(0).shape);
  if (n >= (int64_t{1} << 31)) return decline();
  TSR_RETURN_IF_ERROR(b->device()->pipeline(Shader::kUnary).status());
  return make_fn_kernel([b, op, n, alpha, beta](const KernelContext& k) -> Status {
    UnaryPush p{addr(k.input(0)), addr(k.output(0)), static_cast<uint32_t>(n), static_cast<int32_t>(op), alpha, beta};
    return b->dispatch_1d(Shader::kUnary, &p, sizeof(p), static_cast<uint64_t>(n), {range_of(k.input(0))}, {range_of(k.output(0))});
  });
}

struct BinaryPush {
  uint64_t a, b, y;
  uint32_t n;
  int32_t op, rank;
  uint32_t dims[6], sa[6], sb[6];
};

Result<std::unique_ptr<Kernel>> make_binary(VulkanBackend* b, const CompileContext& ctx) {
  static const std::pair<const char*, int> kOps[] = {{"Add", 0}, {"Sub", 1}, {"Mul", 2}, {"Div", 3},
                                                     {"Pow", 4}, {"Max", 5}, {"Min", 6}, {"PRelu", 7}};
  int op = -1;
  for (const auto& [name, o] : kOps)
    if (ctx.node.op_type == name) op = o;
  if (op < 0 || ctx.inputs.size() != 2 || !ctx.has_input(0) || !ctx.has_input(1) || !all_float32(ctx)) return decline();
  const Shape& as = ctx.input(0).shape;
  const Shape& bs = ctx.input(1).shape;
  const Shape& os = ctx.outputs[0].shape;
  if (os.size() > 6 || as.size() > os.size() || bs.size() > os.size()) return decline();
  const int64_t n = numel(os);
  if (n >= (int64_t{1} << 31)) return decline();
  BinaryPush p{};
  p.op = op;
  p.rank = static_cast<int32_t>(os.size());
  p.n = static_cast<uint32_t>(n);
  auto strides_for = [&](const Shape& s, uint32_t* out) {
    const size_t lead = os.size() - s.size();
    int64_t stride = 1;
    for (size_t d = os.size(); d-- > 0;) {
      if (d < lead) {
        out[d] = 0;
        continue;
      }
      const int64_t len = s[d - lead];
      out[d] = len == 1 ? 0 : static_cast<uint32_t>(stride);
      stride *= len;
    }
  };
  for (size_t d = 0; d < os.size(); ++d) p.dims[d] = static_cast<uint32_t>(os[d]);
  strides_for(as, p.sa);
  strides_for(bs, p.sb);
  TSR_RETURN_IF_ERROR(b->device()->pipeline(Shader::kBinary).status());
  return make_fn_kernel([b, p](const KernelContext& k) -> Status {
    BinaryPush q = p;
    q.a = addr(k.input(0));
    q.b = addr(k.input(1));
    q.y = addr(k.output(0));
    return b->dispatch_1d(Shader::kBinary, &q, sizeof(q), q.n, {range_of(k.input(0)), range_of(k.input(1))},
                          {range_of(k.output(0))});
  });
}

}  // namespace

void add_elementwise_ops(std::vector<VkOp>& ops) {
  for (const char* t : {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "PRelu"}) ops.push_back({t, &make_binary});
  for (const char* t : {"Relu", "LeakyRelu", "Elu", "Selu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Softplus",
                        "Softsign", "Gelu", "Erf", "Exp", "Log", "Sqrt", "Reciprocal", "Abs", "Neg", "Floor", "Ceil", "Sin",
                        "Cos", "Mish", "Clip"})
    ops.push_back({t, &make_unary});
}

}  // namespace tessera::vk
