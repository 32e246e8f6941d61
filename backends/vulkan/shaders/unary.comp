// Elementwise unary ops and activations on float32: y[i] = f(x[i]), i < n. The op is the
// push constant `op` (the numbering of UnaryOp in backends/vulkan/vk_ops.h); alpha and beta
// are its attributes. Math: the ONNX operator specs (Relu-14, LeakyRelu-16, Sigmoid-13,
// Tanh-13, HardSigmoid-6, HardSwish-14, Clip-13, Erf-13, Gelu-20, Sqrt-13, Exp-13, Log-13,
// Abs-13, Neg-13, Reciprocal-13, Floor-13, Ceil-13, Softplus-1, Softsign-1, Elu-6, Selu-6,
// Sin-7, Cos-7, Mish-18), in float32.
#version 450
#include "common.glsl"
layout(local_size_x = 256) in;
layout(push_constant) uniform P {
  Floats x;
  Floats y;
  uint n;
  int op;
  float alpha;
  float beta;
} p;

void item(uint i);

// A grid-stride loop: the dispatch may have fewer invocations than items.
void main() {
  for (uint i = global_index(); i < p.n; i += gl_NumWorkGroups.x * gl_NumWorkGroups.y * 256u) item(i);
}

void item(uint i) {
  p.y.v[i] = apply_unary(p.op, p.x.v[i], p.alpha, p.beta);
}
