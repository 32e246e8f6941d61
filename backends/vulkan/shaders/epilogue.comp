// The elementwise tail the planner fused onto a Conv, MatMul or Gemm (backend.h, Epilogue),
// in place on that node's output y (float32, n elements, rows of `cols`):
//   y[i] = act(y[i] + col_bias[i % cols] + addend[i]) * scale + shift
// where each term is present when its flag is set and act is apply_unary(op) (op < 0: none).
// Math: the fused nodes' ONNX specs (Add-14, Relu-14, LeakyRelu-16, Clip-13, Sigmoid-13,
// HardSigmoid-6, HardSwish-14, Tanh-13, Gelu-20 "none", Mul-14), in float32.
#version 450
#include "common.glsl"
layout(local_size_x = 256) in;
layout(push_constant) uniform P {
  Floats y;
  Floats addend;
  Floats col_bias;
  uint n;
  uint cols;
  int op;
  float alpha;
  float beta;
  float scale;
  float shift;
  int has_addend;
  int has_col_bias;
} p;

void item(uint i);

// A grid-stride loop: the dispatch may have fewer invocations than items.
void main() {
  for (uint i = global_index(); i < p.n; i += gl_NumWorkGroups.x * gl_NumWorkGroups.y * 256u) item(i);
}

void item(uint i) {
  float v = p.y.v[i];
  if (p.has_col_bias != 0) v += p.col_bias.v[i % p.cols];
  if (p.has_addend != 0) v += p.addend.v[i];
  if (p.op >= 0) v = apply_unary(p.op, v, p.alpha, p.beta);
  if (p.scale != 1.0 || p.shift != 0.0) v = v * p.scale + p.shift;
  p.y.v[i] = v;
}
