// CUDA kernels for data movement and elementwise math: strided copies (Transpose, Slice,
// Expand), the tiled transpose, binary ops with broadcasting, unary ops and activations, and
// Gather. Formulas are the ONNX operators' (see backends/cpu/ref/*_elementwise.cc); float
// math runs in double and rounds once, as the CPU reference does.
#include <cmath>

#include "backends/cuda/cuda_kernels.h"

namespace tessera::cuda {

namespace {

constexpr int kThreads = 256;

inline unsigned grid_for(int64_t n) {
  int64_t blocks = (n + kThreads - 1) / kThreads;
  if (blocks > 65535LL * 32) blocks = 65535LL * 32;  // grid-stride loops cover the rest
  return static_cast<unsigned>(blocks < 1 ? 1 : blocks);
}

template <typename T>
__global__ void strided_copy_kernel(const T* __restrict__ in, T* __restrict__ out, int64_t n, StridedView v) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t idx = i, off = v.in_offset;
    for (int d = v.rank - 1; d >= 0; --d) {
      const int64_t c = idx % v.out_dims[d];
      idx /= v.out_dims[d];
      off += c * v.in_strides[d];
    }
    out[i] = in[off];
  }
}

// One 32x32 tile per block (32x8 threads); the +1 column avoids shared-memory bank conflicts.
template <typename T>
__global__ void transpose_tiled_kernel(const T* __restrict__ in, T* __restrict__ out, int64_t rows, int64_t cols) {
  __shared__ T tile[32][33];
  const int64_t b = blockIdx.z;
  const int64_t r0 = static_cast<int64_t>(blockIdx.y) * 32, c0 = static_cast<int64_t>(blockIdx.x) * 32;
  const T* src = in + b * rows * cols;
  T* dst = out + b * rows * cols;
  for (int k = threadIdx.y; k < 32; k += 8) {
    const int64_t r = r0 + k, c = c0 + threadIdx.x;
    if (r < rows && c < cols) tile[k][threadIdx.x] = src[r * cols + c];
  }
  __syncthreads();
  for (int k = threadIdx.y; k < 32; k += 8) {
    const int64_t c = c0 + k, r = r0 + threadIdx.x;  // out[c][r]
    if (r < rows && c < cols) dst[c * rows + r] = tile[threadIdx.x][k];
  }
}

__device__ __forceinline__ double binary_math(BinaryOp op, double a, double b) {
  switch (op) {
    case BinaryOp::kAdd: return a + b;
    case BinaryOp::kSub: return a - b;
    case BinaryOp::kMul: return a * b;
    case BinaryOp::kDiv: return a / b;
    case BinaryOp::kPow: return pow(a, b);
    case BinaryOp::kMax: return (a != a || b != b) ? NAN : (a > b ? a : b);  // Max-13: NaN propagates
    case BinaryOp::kMin: return (a != a || b != b) ? NAN : (a < b ? a : b);
    case BinaryOp::kPRelu: return a < 0 ? a * b : a;
  }
  return 0;
}

template <BinaryOp kOp>
__global__ void binary_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ y, int64_t n,
                              BinaryBroadcast p) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t ia = i, ib = i;
    if (!p.a_dense || !p.b_dense) {
      int64_t idx = i, oa = 0, ob = 0;
      for (int d = p.rank - 1; d >= 0; --d) {
        const int64_t c = idx % p.out_dims[d];
        idx /= p.out_dims[d];
        oa += c * p.a_strides[d];
        ob += c * p.b_strides[d];
      }
      if (!p.a_dense) ia = oa;
      if (!p.b_dense) ib = ob;
    }
    // +, -, *, / of two floats in double round to the same float as float arithmetic.
    if constexpr (kOp == BinaryOp::kAdd) y[i] = a[ia] + b[ib];
    else if constexpr (kOp == BinaryOp::kSub) y[i] = a[ia] - b[ib];
    else if constexpr (kOp == BinaryOp::kMul) y[i] = a[ia] * b[ib];
    else if constexpr (kOp == BinaryOp::kDiv) y[i] = a[ia] / b[ib];
    else y[i] = static_cast<float>(binary_math(kOp, a[ia], b[ib]));
  }
}

/// Both inputs dense (the output's shape), n4 = n / 4 groups of 4 floats, 16-byte aligned:
/// one 16-byte load per input and one store per thread and step.
template <BinaryOp kOp>
__global__ void binary_vec4_kernel(const float4* __restrict__ a, const float4* __restrict__ b, float4* __restrict__ y,
                                   int64_t n4) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n4;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float4 u = a[i], v = b[i];
    float4 r;
    if constexpr (kOp == BinaryOp::kAdd) r = make_float4(u.x + v.x, u.y + v.y, u.z + v.z, u.w + v.w);
    else if constexpr (kOp == BinaryOp::kSub) r = make_float4(u.x - v.x, u.y - v.y, u.z - v.z, u.w - v.w);
    else if constexpr (kOp == BinaryOp::kMul) r = make_float4(u.x * v.x, u.y * v.y, u.z * v.z, u.w * v.w);
    else if constexpr (kOp == BinaryOp::kDiv) r = make_float4(u.x / v.x, u.y / v.y, u.z / v.z, u.w / v.w);
    else
      r = make_float4(static_cast<float>(binary_math(kOp, u.x, v.x)), static_cast<float>(binary_math(kOp, u.y, v.y)),
                      static_cast<float>(binary_math(kOp, u.z, v.z)), static_cast<float>(binary_math(kOp, u.w, v.w)));
    y[i] = r;
  }
}

__device__ __forceinline__ double softplus(double x) { return fmax(x, 0.0) + log1p(exp(-fabs(x))); }

__device__ __forceinline__ double unary_math(UnaryOp op, double x, double alpha, double beta) {
  switch (op) {
    case UnaryOp::kRelu: return x < 0 ? 0.0 : x;
    case UnaryOp::kLeakyRelu: return x >= 0 ? x : alpha * x;
    case UnaryOp::kElu: return x >= 0 ? x : alpha * expm1(x);
    case UnaryOp::kSelu: return beta * (x > 0 ? x : alpha * expm1(x));
    case UnaryOp::kSigmoid: return 1.0 / (1.0 + exp(-x));
    case UnaryOp::kHardSigmoid: return fmax(0.0, fmin(1.0, alpha * x + beta));
    case UnaryOp::kHardSwish: return x * fmax(0.0, fmin(1.0, x / 6.0 + 0.5));
    case UnaryOp::kTanh: return tanh(x);
    case UnaryOp::kSoftplus: return softplus(x);
    case UnaryOp::kSoftsign: return x / (1.0 + fabs(x));
    case UnaryOp::kGeluErf: return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
    case UnaryOp::kGeluTanh:
      return 0.5 * x * (1.0 + tanh(sqrt(2.0 / 3.14159265358979323846) * (x + 0.044715 * x * x * x)));
    case UnaryOp::kErf: return erf(x);
    case UnaryOp::kExp: return exp(x);
    case UnaryOp::kLog: return log(x);
    case UnaryOp::kSqrt: return sqrt(x);
    case UnaryOp::kReciprocal: return 1.0 / x;
    case UnaryOp::kAbs: return fabs(x);
    case UnaryOp::kNeg: return -x;
    case UnaryOp::kFloor: return floor(x);
    case UnaryOp::kCeil: return ceil(x);
    case UnaryOp::kSin: return sin(x);
    case UnaryOp::kCos: return cos(x);
    case UnaryOp::kMish: return x * tanh(softplus(x));
    case UnaryOp::kClip: {  // min(max(x, lo), hi) as std::min/std::max: NaN stays NaN
      double v = x < alpha ? alpha : x;
      return beta < v ? beta : v;
    }
    case UnaryOp::kIdentity: return x;
  }
  return x;
}

template <UnaryOp kOp>
__global__ void unary_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n, double alpha, double beta) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    y[i] = static_cast<float>(unary_math(kOp, static_cast<double>(x[i]), alpha, beta));
}

template <UnaryOp kOp>
__global__ void epilogue_kernel(float* __restrict__ y, int64_t n, EpilogueParams p) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float v = y[i];
    if (p.chan_bias) v += p.chan_bias[(i / p.chan_inner) % p.chan_count];
    if (p.col_bias) v += p.col_bias[i % p.col_count];
    if (p.addend) v += p.addend[i];
    if constexpr (kOp != UnaryOp::kIdentity) v = static_cast<float>(unary_math(kOp, static_cast<double>(v), p.alpha, p.beta));
    if (p.scale != 1.f || p.shift != 0.f) v = v * p.scale + p.shift;
    y[i] = v;
  }
}

/// x and y 16-byte aligned, n4 = n / 4 groups of 4 floats.
template <UnaryOp kOp>
__global__ void unary_vec4_kernel(const float4* __restrict__ x, float4* __restrict__ y, int64_t n4, double alpha,
                                  double beta) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n4;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float4 u = x[i];
    y[i] = make_float4(static_cast<float>(unary_math(kOp, u.x, alpha, beta)), static_cast<float>(unary_math(kOp, u.y, alpha, beta)),
                       static_cast<float>(unary_math(kOp, u.z, alpha, beta)), static_cast<float>(unary_math(kOp, u.w, alpha, beta)));
  }
}

template <typename T, typename I>
__global__ void gather_kernel(const T* __restrict__ data, const I* __restrict__ idx, T* __restrict__ out, int64_t outer,
                              int64_t axis_len, int64_t n_idx, int64_t inner, int* error_flag) {
  const int64_t n = outer * n_idx * inner;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t k = i % inner;
    const int64_t j = (i / inner) % n_idx;
    const int64_t o = i / (inner * n_idx);
    int64_t a = static_cast<int64_t>(idx[j]);
    if (a < 0) a += axis_len;
    if (a < 0 || a >= axis_len) {
      out[i] = T(0);
      if (error_flag) atomicExch(error_flag, 1);
      continue;
    }
    out[i] = data[(o * axis_len + a) * inner + k];
  }
}

template <typename T>
cudaError_t strided_copy_typed(const void* in, void* out, int64_t n, const StridedView& v, cudaStream_t s) {
  strided_copy_kernel<T><<<grid_for(n), kThreads, 0, s>>>(static_cast<const T*>(in), static_cast<T*>(out), n, v);
  return cudaGetLastError();
}

template <typename T>
cudaError_t gather_typed(const void* data, const void* indices, bool i64, void* out, int64_t outer, int64_t axis_len,
                         int64_t n_idx, int64_t inner, int* flag, cudaStream_t s) {
  const int64_t n = outer * n_idx * inner;
  if (i64)
    gather_kernel<T, int64_t><<<grid_for(n), kThreads, 0, s>>>(static_cast<const T*>(data), static_cast<const int64_t*>(indices),
                                                               static_cast<T*>(out), outer, axis_len, n_idx, inner, flag);
  else
    gather_kernel<T, int32_t><<<grid_for(n), kThreads, 0, s>>>(static_cast<const T*>(data), static_cast<const int32_t*>(indices),
                                                               static_cast<T*>(out), outer, axis_len, n_idx, inner, flag);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_strided_copy(const void* in, void* out, int64_t n, int elem_bytes, const StridedView& v,
                                cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  switch (elem_bytes) {
    case 1: return strided_copy_typed<uint8_t>(in, out, n, v, stream);
    case 2: return strided_copy_typed<uint16_t>(in, out, n, v, stream);
    case 4: return strided_copy_typed<uint32_t>(in, out, n, v, stream);
    case 8: return strided_copy_typed<uint64_t>(in, out, n, v, stream);
    case 16: return strided_copy_typed<uint4>(in, out, n, v, stream);
  }
  return cudaErrorInvalidValue;
}

cudaError_t launch_transpose_tiled(const void* in, void* out, int64_t batch, int64_t rows, int64_t cols, int elem_bytes,
                                   cudaStream_t stream) {
  if (batch <= 0 || rows <= 0 || cols <= 0) return cudaSuccess;
  if (batch > 65535 || (rows + 31) / 32 > 65535) return cudaErrorInvalidValue;
  dim3 grid(static_cast<unsigned>((cols + 31) / 32), static_cast<unsigned>((rows + 31) / 32), static_cast<unsigned>(batch));
  dim3 block(32, 8);
  if (elem_bytes == 4)
    transpose_tiled_kernel<uint32_t><<<grid, block, 0, stream>>>(static_cast<const uint32_t*>(in), static_cast<uint32_t*>(out), rows, cols);
  else if (elem_bytes == 8)
    transpose_tiled_kernel<uint64_t><<<grid, block, 0, stream>>>(static_cast<const uint64_t*>(in), static_cast<uint64_t*>(out), rows, cols);
  else
    return cudaErrorInvalidValue;
  return cudaGetLastError();
}

inline bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15) == 0; }

cudaError_t launch_binary_f32(BinaryOp op, const float* a, const float* b, float* y, int64_t n, const BinaryBroadcast& p,
                              cudaStream_t s) {
  if (n <= 0) return cudaSuccess;
  if (p.a_dense && p.b_dense && n % 4 == 0 && aligned16(a) && aligned16(b) && aligned16(y)) {
    const int64_t n4 = n / 4;
    const unsigned g4 = grid_for(n4);
    auto* a4 = reinterpret_cast<const float4*>(a);
    auto* b4 = reinterpret_cast<const float4*>(b);
    auto* y4 = reinterpret_cast<float4*>(y);
    switch (op) {
#define TSR_BIN4(E) \
  case BinaryOp::E: binary_vec4_kernel<BinaryOp::E><<<g4, kThreads, 0, s>>>(a4, b4, y4, n4); break;
      TSR_BIN4(kAdd) TSR_BIN4(kSub) TSR_BIN4(kMul) TSR_BIN4(kDiv) TSR_BIN4(kPow) TSR_BIN4(kMax) TSR_BIN4(kMin) TSR_BIN4(kPRelu)
#undef TSR_BIN4
      default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
  }
  const unsigned g = grid_for(n);
  switch (op) {
#define TSR_BIN(E) \
  case BinaryOp::E: binary_kernel<BinaryOp::E><<<g, kThreads, 0, s>>>(a, b, y, n, p); break;
    TSR_BIN(kAdd) TSR_BIN(kSub) TSR_BIN(kMul) TSR_BIN(kDiv) TSR_BIN(kPow) TSR_BIN(kMax) TSR_BIN(kMin) TSR_BIN(kPRelu)
#undef TSR_BIN
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t launch_unary_f32(UnaryOp op, const float* x, float* y, int64_t n, double alpha, double beta, cudaStream_t s) {
  if (n <= 0) return cudaSuccess;
  if (n % 4 == 0 && aligned16(x) && aligned16(y)) {
    const int64_t n4 = n / 4;
    const unsigned g4 = grid_for(n4);
    auto* x4 = reinterpret_cast<const float4*>(x);
    auto* y4 = reinterpret_cast<float4*>(y);
    switch (op) {
#define TSR_UN4(E) \
  case UnaryOp::E: unary_vec4_kernel<UnaryOp::E><<<g4, kThreads, 0, s>>>(x4, y4, n4, alpha, beta); break;
      TSR_UN4(kRelu) TSR_UN4(kLeakyRelu) TSR_UN4(kElu) TSR_UN4(kSelu) TSR_UN4(kSigmoid) TSR_UN4(kHardSigmoid) TSR_UN4(kHardSwish)
      TSR_UN4(kTanh) TSR_UN4(kSoftplus) TSR_UN4(kSoftsign) TSR_UN4(kGeluErf) TSR_UN4(kGeluTanh) TSR_UN4(kErf) TSR_UN4(kExp)
      TSR_UN4(kLog) TSR_UN4(kSqrt) TSR_UN4(kReciprocal) TSR_UN4(kAbs) TSR_UN4(kNeg) TSR_UN4(kFloor) TSR_UN4(kCeil) TSR_UN4(kSin)
      TSR_UN4(kCos) TSR_UN4(kMish) TSR_UN4(kClip) TSR_UN4(kIdentity)
#undef TSR_UN4
      default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
  }
  const unsigned g = grid_for(n);
  switch (op) {
#define TSR_UN(E) \
  case UnaryOp::E: unary_kernel<UnaryOp::E><<<g, kThreads, 0, s>>>(x, y, n, alpha, beta); break;
    TSR_UN(kRelu) TSR_UN(kLeakyRelu) TSR_UN(kElu) TSR_UN(kSelu) TSR_UN(kSigmoid) TSR_UN(kHardSigmoid) TSR_UN(kHardSwish)
    TSR_UN(kTanh) TSR_UN(kSoftplus) TSR_UN(kSoftsign) TSR_UN(kGeluErf) TSR_UN(kGeluTanh) TSR_UN(kErf) TSR_UN(kExp)
    TSR_UN(kLog) TSR_UN(kSqrt) TSR_UN(kReciprocal) TSR_UN(kAbs) TSR_UN(kNeg) TSR_UN(kFloor) TSR_UN(kCeil) TSR_UN(kSin)
    TSR_UN(kCos) TSR_UN(kMish) TSR_UN(kClip) TSR_UN(kIdentity)
#undef TSR_UN
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t launch_epilogue_f32(float* y, int64_t n, const EpilogueParams& p, cudaStream_t s) {
  if (n <= 0) return cudaSuccess;
  const unsigned g = grid_for(n);
  const UnaryOp op = p.has_act ? p.op : UnaryOp::kIdentity;
  switch (op) {
#define TSR_EP(E) \
  case UnaryOp::E: epilogue_kernel<UnaryOp::E><<<g, kThreads, 0, s>>>(y, n, p); break;
    TSR_EP(kRelu) TSR_EP(kLeakyRelu) TSR_EP(kSigmoid) TSR_EP(kHardSigmoid) TSR_EP(kHardSwish) TSR_EP(kTanh)
    TSR_EP(kGeluErf) TSR_EP(kClip) TSR_EP(kIdentity)
#undef TSR_EP
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t launch_gather(const void* data, const void* indices, bool indices_int64, void* out, int64_t outer,
                          int64_t axis_len, int64_t n_idx, int64_t inner, int elem_bytes, int* error_flag,
                          cudaStream_t stream) {
  if (outer * n_idx * inner <= 0) return cudaSuccess;
  switch (elem_bytes) {
    case 1: return gather_typed<uint8_t>(data, indices, indices_int64, out, outer, axis_len, n_idx, inner, error_flag, stream);
    case 2: return gather_typed<uint16_t>(data, indices, indices_int64, out, outer, axis_len, n_idx, inner, error_flag, stream);
    case 4: return gather_typed<uint32_t>(data, indices, indices_int64, out, outer, axis_len, n_idx, inner, error_flag, stream);
    case 8: return gather_typed<uint64_t>(data, indices, indices_int64, out, outer, axis_len, n_idx, inner, error_flag, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace tessera::cuda
