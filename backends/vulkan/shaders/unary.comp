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
  float v = p.x.v[i];
  float r = v;
  switch (p.op) {
    case 0: r = max(v, 0.0); if (v != v) r = v; break;
    case 1: r = v < 0.0 ? p.alpha * v : v; break;
    case 2: r = sigmoid_f(v); break;
    case 3: r = tanh_f(v); break;
    case 4: r = max(0.0, min(1.0, p.alpha * v + p.beta)); break;
    case 5: r = v * max(0.0, min(1.0, v / 6.0 + 0.5)); break;
    case 6: r = min(max(v, p.alpha), p.beta); if (v != v) r = v; break;
    case 7: r = erf_f(v); break;
    case 8: r = 0.5 * v * (1.0 + erf_f(v * 0.70710678118654752)); break;
    case 9: r = 0.5 * v * (1.0 + tanh_f(0.79788456080286536 * (v + 0.044715 * v * v * v))); break;
    case 10: r = sqrt(v); break;
    case 11: r = exp(v); break;
    case 12: r = log(v); break;
    case 13: r = abs(v); break;
    case 14: r = -v; break;
    case 15: r = 1.0 / v; break;
    case 16: r = floor(v); break;
    case 17: r = ceil(v); break;
    case 18: r = softplus_f(v); break;
    case 19: r = v / (1.0 + abs(v)); break;
    case 20: r = v < 0.0 ? p.alpha * (exp(v) - 1.0) : v; break;
    case 21: r = v <= 0.0 ? p.beta * (p.alpha * exp(v) - p.alpha) : p.beta * v; break;
    case 22: r = sin(v); break;
    case 23: r = cos(v); break;
    case 24: r = v * tanh_f(softplus_f(v)); break;
    default: r = v; break;
  }
  p.y.v[i] = r;
}
