// Shared by every compute shader of the Vulkan backend. Tensors are reached through
// buffer device addresses (GL_EXT_buffer_reference) passed in push constants, so a kernel
// needs no descriptor set: the address of a tensor is its Tensor::data() pointer.
// Work is one-dimensional over `n` items: 256 invocations per work group, groups laid out
// in x then y (Vulkan guarantees only 65535 groups per dimension).
#extension GL_EXT_buffer_reference : require
#extension GL_GOOGLE_include_directive : require

layout(buffer_reference, std430, buffer_reference_align = 4) buffer Floats { float v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Uints { uint v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Ints { int v[]; };

// The item of this invocation in a one-dimensional shader (local_size_x = 256). The group
// size is written out: gl_WorkGroupSize is not yet declared where this file is included.
uint global_index() {
  return (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256u + gl_LocalInvocationID.x;
}

// erf(x) in float, |error| < 1.2e-7 (Numerical Recipes' erfc Chebyshev fit,
// W. H. Press et al., 2nd ed., section 6.2), as 1 - erfc for x >= 0.
float erf_f(float x) {
  float z = abs(x);
  float t = 1.0 / (1.0 + 0.5 * z);
  float r = t * exp(-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 +
            t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 +
            t * (-0.82215223 + t * 0.17087277)))))))));
  float e = 1.0 - r;
  // Small |x|: the series erf(x) = 2/sqrt(pi) (x - x^3/3 + x^5/10 - x^7/42 + x^9/216)
  // keeps the relative error small where 1 - erfc cancels.
  if (z < 0.5) {
    float x2 = x * x;
    return 1.1283791670955126 * x * (1.0 + x2 * (-1.0 / 3.0 + x2 * (0.1 + x2 * (-1.0 / 42.0 + x2 * (1.0 / 216.0 - x2 / 1320.0)))));
  }
  return x < 0.0 ? -e : e;
}

// tanh in float without overflow: 1 - 2 / (exp(2x) + 1), odd; a series near 0.
float tanh_f(float x) {
  float z = abs(x);
  float r;
  if (z < 0.125) {
    float x2 = x * x;
    return x * (1.0 + x2 * (-1.0 / 3.0 + x2 * (2.0 / 15.0 + x2 * (-17.0 / 315.0))));
  }
  if (z > 20.0) r = 1.0;
  else r = 1.0 - 2.0 / (exp(2.0 * z) + 1.0);
  return x < 0.0 ? -r : r;
}

float sigmoid_f(float x) {
  // 1 / (1 + exp(-x)), written so that exp never overflows.
  if (x >= 0.0) return 1.0 / (1.0 + exp(-x));
  float e = exp(x);
  return e / (1.0 + e);
}

// ln(1 + exp(x)) = max(x, 0) + ln(1 + exp(-|x|)); log(1 + u) for small u via the series.
float softplus_f(float x) {
  float u = exp(-abs(x));
  float l = u < 1e-4 ? u * (1.0 - 0.5 * u) : log(1.0 + u);
  return max(x, 0.0) + l;
}

// The unary ops of unary.comp (the numbering of UnaryOp in vk_ops_elementwise.cc), also the
// activation of a fused epilogue (epilogue.comp).
float apply_unary(int op, float v, float alpha, float beta) {
  float r = v;
  switch (op) {
    case 0: r = max(v, 0.0); if (v != v) r = v; break;
    case 1: r = v < 0.0 ? alpha * v : v; break;
    case 2: r = sigmoid_f(v); break;
    case 3: r = tanh_f(v); break;
    case 4: r = max(0.0, min(1.0, alpha * v + beta)); break;
    case 5: r = v * max(0.0, min(1.0, v / 6.0 + 0.5)); break;
    case 6: r = min(max(v, alpha), beta); if (v != v) r = v; break;
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
    case 20: r = v < 0.0 ? alpha * (exp(v) - 1.0) : v; break;
    case 21: r = v <= 0.0 ? beta * (alpha * exp(v) - alpha) : beta * v; break;
    case 22: r = sin(v); break;
    case 23: r = cos(v); break;
    case 24: r = v * tanh_f(softplus_f(v)); break;
    default: r = v; break;
  }
  return r;
}
