// CUDA kernels that reduce or window: Softmax / LogSoftmax and LayerNormalization (one
// block per row, warp-shuffle trees), ReduceSum / ReduceMean, BatchNormalization
// (inference), 2-D pooling and 2-D Resize. Formulas: the ONNX operators', as the CPU
// reference kernels compute them (backends/cpu/ref/), accumulating in double.
#include <cfloat>
#include <cmath>

#include "backends/cuda/cuda_kernels.h"
#include "runtime/ops/resize_nearest.h"

namespace tessera::cuda {

namespace {

constexpr int kThreads = 256;

inline unsigned grid_for(int64_t n) {
  int64_t blocks = (n + kThreads - 1) / kThreads;
  if (blocks > 65535LL * 32) blocks = 65535LL * 32;
  return static_cast<unsigned>(blocks < 1 ? 1 : blocks);
}
/// One block per row: rows beyond the grid limit are covered by a block-stride loop.
inline unsigned row_grid(int64_t rows) { return static_cast<unsigned>(rows < 1 ? 1 : (rows > 1048576 ? 1048576 : rows)); }

__device__ __forceinline__ double warp_sum(double v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_down_sync(0xffffffffu, v, o));
  return v;
}

/// Sum over the block; every thread gets the result. `shared` holds >= 32 doubles.
__device__ double block_sum(double v, double* shared) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  v = warp_sum(v);
  __syncthreads();  // `shared` may still be read from a previous call
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  const int warps = (blockDim.x + 31) >> 5;
  double t = threadIdx.x < warps ? shared[threadIdx.x] : 0.0;
  if (warp == 0) t = warp_sum(t);
  if (threadIdx.x == 0) shared[0] = t;
  __syncthreads();
  return shared[0];
}

__device__ float block_max(float v, float* shared) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  v = warp_max(v);
  __syncthreads();
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  const int warps = (blockDim.x + 31) >> 5;
  float t = threadIdx.x < warps ? shared[threadIdx.x] : -INFINITY;
  if (warp == 0) t = warp_max(t);
  if (threadIdx.x == 0) shared[0] = t;
  __syncthreads();
  return shared[0];
}

// Row r = (o, i) of x viewed as [outer, len, inner]: elements x[o*len*inner + a*inner + i].
__global__ void softmax_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t outer, int64_t len,
                               int64_t inner, bool log_softmax) {
  __shared__ double dsh[32];
  __shared__ float fsh[32];
  for (int64_t r = blockIdx.x; r < outer * inner; r += gridDim.x) {
    const int64_t o = r / inner, i = r % inner;
    const int64_t base = o * len * inner + i;
    float mx = -INFINITY;
    for (int64_t a = threadIdx.x; a < len; a += blockDim.x) mx = fmaxf(mx, x[base + a * inner]);
    mx = block_max(mx, fsh);
    double s = 0;
    for (int64_t a = threadIdx.x; a < len; a += blockDim.x) s += exp(static_cast<double>(x[base + a * inner]) - mx);
    s = block_sum(s, dsh);
    const double ls = log(s);
    for (int64_t a = threadIdx.x; a < len; a += blockDim.x) {
      const double d = static_cast<double>(x[base + a * inner]) - mx;
      y[base + a * inner] = static_cast<float>(log_softmax ? d - ls : exp(d) / s);
    }
  }
}

__global__ void layer_norm_kernel(const float* __restrict__ x, const float* __restrict__ scale, int64_t scale_n,
                                  const float* __restrict__ bias, int64_t bias_n, float* __restrict__ y,
                                  float* __restrict__ mean_out, float* __restrict__ inv_out, int64_t rows, int64_t inner,
                                  double eps) {
  __shared__ double sh[32];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* xr = x + r * inner;
    float* yr = y + r * inner;
    double s = 0;
    for (int64_t j = threadIdx.x; j < inner; j += blockDim.x) s += xr[j];
    const double mean = block_sum(s, sh) / static_cast<double>(inner);
    double v = 0;
    for (int64_t j = threadIdx.x; j < inner; j += blockDim.x) {
      const double d = xr[j] - mean;
      v += d * d;
    }
    const double var = block_sum(v, sh) / static_cast<double>(inner);
    const double inv_std = 1.0 / sqrt(var + eps);
    for (int64_t j = threadIdx.x; j < inner; j += blockDim.x)
      yr[j] = static_cast<float>((xr[j] - mean) * inv_std * scale[j % scale_n] + (bias ? bias[j % bias_n] : 0.f));
    if (threadIdx.x == 0) {
      if (mean_out) mean_out[r] = static_cast<float>(mean);
      if (inv_out) inv_out[r] = static_cast<float>(inv_std);
    }
  }
}

__global__ void reduce_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t outer, int64_t len, int64_t inner,
                              bool mean) {
  __shared__ double sh[32];
  for (int64_t r = blockIdx.x; r < outer * inner; r += gridDim.x) {
    const int64_t o = r / inner, i = r % inner;
    const int64_t base = o * len * inner + i;
    double s = 0;
    for (int64_t a = threadIdx.x; a < len; a += blockDim.x) s += x[base + a * inner];
    s = block_sum(s, sh);
    if (threadIdx.x == 0) y[r] = static_cast<float>(mean ? (len > 0 ? s / static_cast<double>(len) : NAN) : s);
  }
}

// Many short rows (inner > 1, e.g. reducing a middle axis): one thread per output element.
__global__ void reduce_columns_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t outer, int64_t len,
                                      int64_t inner, bool mean) {
  for (int64_t r = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; r < outer * inner;
       r += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t o = r / inner, i = r % inner;
    const float* p = x + o * len * inner + i;
    double s = 0;
    for (int64_t a = 0; a < len; ++a) s += p[a * inner];
    y[r] = static_cast<float>(mean ? (len > 0 ? s / static_cast<double>(len) : NAN) : s);
  }
}

__global__ void batch_norm_kernel(const float* __restrict__ x, const float* __restrict__ scale, const float* __restrict__ bias,
                                  const float* __restrict__ mean, const float* __restrict__ var, float* __restrict__ y,
                                  int64_t n, int64_t c, int64_t spatial, double eps) {
  const int64_t total = n * c * spatial;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t ch = (i / spatial) % c;
    const double inv_std = 1.0 / sqrt(static_cast<double>(var[ch]) + eps);
    y[i] = static_cast<float>((x[i] - static_cast<double>(mean[ch])) * inv_std * scale[ch] + bias[ch]);
  }
}

__global__ void pool2d_kernel(const float* __restrict__ x, float* __restrict__ y, Pool2d p) {
  const int64_t total = p.planes * p.oh * p.ow;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t ox = i % p.ow, oy = (i / p.ow) % p.oh, plane = i / (p.ow * p.oh);
    const float* xp = x + plane * p.h * p.w;
    float best = -FLT_MAX;
    double sum = 0;
    int64_t inside = 0;
    for (int64_t ky = 0; ky < p.kh; ++ky) {
      const int64_t iy = oy * p.sh - p.ph + ky * p.dh;
      if (iy < 0 || iy >= p.h) continue;
      for (int64_t kx = 0; kx < p.kw; ++kx) {
        const int64_t ix = ox * p.sw - p.pw + kx * p.dw;
        if (ix < 0 || ix >= p.w) continue;
        const float v = xp[iy * p.w + ix];
        if (p.max) {
          if (v > best) best = v;  // as the reference: std::max keeps the first of equals; NaN never wins
        } else {
          sum += v;
        }
        ++inside;
      }
    }
    if (p.max) {
      y[i] = best;
    } else {
      const int64_t count = p.count_include_pad ? p.kh * p.kw : inside;
      y[i] = count > 0 ? static_cast<float>(sum / count) : 0.f;
    }
  }
}

__device__ double resize_coord(int mode, int64_t o, int64_t in, int64_t out, double scale) {
  switch (mode) {
    case 0: return (o + 0.5) / scale - 0.5;                                            // half_pixel
    case 1: return o / scale;                                                          // asymmetric
    case 2: return out == 1 ? 0.0 : o * static_cast<double>(in - 1) / (in * scale - 1);  // align_corners
    case 3: return out > 1 ? (o + 0.5) / scale - 0.5 : 0.0;                            // pytorch_half_pixel
    case 4: return (o + 0.5) / scale;                                                  // tf_half_pixel_for_nn
    case 5: return (in - 1) / 2.0 + (o + 0.5 - out / 2.0) / scale;                     // half_pixel_symmetric
  }
  return 0;
}

__device__ int64_t resize_nearest(int mode, double x, double scale, int64_t in) {
  double r;
  switch (mode) {
    case 0: r = x - floor(x) == 0.5 ? floor(x) : round(x); break;  // round_prefer_floor
    case 1: r = x - floor(x) == 0.5 ? ceil(x) : round(x); break;   // round_prefer_ceil
    case 2: r = floor(x); break;
    case 3: r = ceil(x); break;
    default: r = scale < 1 ? ceil(x) : trunc(x); break;            // Upsample's "simple"
  }
  int64_t k = static_cast<int64_t>(r);
  return k < 0 ? 0 : (k > in - 1 ? in - 1 : k);
}

__global__ void resize2d_kernel(const float* __restrict__ x, float* __restrict__ y, Resize2d p) {
  const int64_t total = p.planes * p.oh * p.ow;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t ox = i % p.ow, oy = (i / p.ow) % p.oh, plane = i / (p.ow * p.oh);
    const float* xp = x + plane * p.h * p.w;
    double fy = resize_coord(p.coord_mode, oy, p.h, p.oh, p.scale_h);
    double fx = resize_coord(p.coord_mode, ox, p.w, p.ow, p.scale_w);
    if (p.exact_nearest) {  // sizes: integer arithmetic, exact at ties (runtime/ops/resize_nearest.h)
      int64_t ny, dy, nx, dx;
      resize_exact_coordinate(p.coord_mode, oy, p.h, p.oh, &ny, &dy);
      resize_exact_coordinate(p.coord_mode, ox, p.w, p.ow, &nx, &dx);
      y[i] = xp[resize_exact_nearest(p.nearest_mode, ny, dy, p.h, p.oh < p.h) * p.w +
                resize_exact_nearest(p.nearest_mode, nx, dx, p.w, p.ow < p.w)];
      continue;
    }
    if (!p.linear) {
      y[i] = xp[resize_nearest(p.nearest_mode, fy, p.scale_h, p.h) * p.w + resize_nearest(p.nearest_mode, fx, p.scale_w, p.w)];
      continue;
    }
    fy = fmin(fmax(fy, 0.0), static_cast<double>(p.h - 1));
    fx = fmin(fmax(fx, 0.0), static_cast<double>(p.w - 1));
    const int64_t y0 = static_cast<int64_t>(floor(fy)), x0 = static_cast<int64_t>(floor(fx));
    const int64_t y1 = y0 + 1 < p.h ? y0 + 1 : p.h - 1, x1 = x0 + 1 < p.w ? x0 + 1 : p.w - 1;
    const double ty = fy - y0, tx = fx - x0;
    const double v = (1 - ty) * ((1 - tx) * xp[y0 * p.w + x0] + tx * xp[y0 * p.w + x1]) +
                     ty * ((1 - tx) * xp[y1 * p.w + x0] + tx * xp[y1 * p.w + x1]);
    y[i] = static_cast<float>(v);
  }
}

}  // namespace

cudaError_t launch_softmax_f32(const float* x, float* y, int64_t outer, int64_t len, int64_t inner, bool log,
                               cudaStream_t s) {
  if (outer * len * inner <= 0) return cudaSuccess;
  const int threads = len >= 1024 ? 512 : (len >= 256 ? 256 : (len >= 64 ? 128 : 32));
  softmax_kernel<<<row_grid(outer * inner), threads, 0, s>>>(x, y, outer, len, inner, log);
  return cudaGetLastError();
}

cudaError_t launch_layer_norm_f32(const float* x, const float* scale, int64_t scale_n, const float* bias, int64_t bias_n,
                                  float* y, float* mean_out, float* inv_std_out, int64_t rows, int64_t inner, double eps,
                                  cudaStream_t s) {
  if (rows <= 0) return cudaSuccess;
  const int threads = inner >= 1024 ? 512 : (inner >= 256 ? 256 : (inner >= 64 ? 128 : 32));
  layer_norm_kernel<<<row_grid(rows), threads, 0, s>>>(x, scale, scale_n, bias, bias_n, y, mean_out, inv_std_out, rows,
                                                        inner, eps);
  return cudaGetLastError();
}

cudaError_t launch_reduce_f32(const float* x, float* y, int64_t outer, int64_t len, int64_t inner, bool mean,
                              cudaStream_t s) {
  if (outer * inner <= 0) return cudaSuccess;
  if (inner > 1 && len <= 64 * inner) {
    reduce_columns_kernel<<<grid_for(outer * inner), kThreads, 0, s>>>(x, y, outer, len, inner, mean);
  } else {
    const int threads = len >= 1024 ? 512 : (len >= 256 ? 256 : (len >= 64 ? 128 : 32));
    reduce_kernel<<<row_grid(outer * inner), threads, 0, s>>>(x, y, outer, len, inner, mean);
  }
  return cudaGetLastError();
}

cudaError_t launch_batch_norm_f32(const float* x, const float* scale, const float* bias, const float* mean,
                                  const float* var, float* y, int64_t n, int64_t c, int64_t spatial, double eps,
                                  cudaStream_t s) {
  const int64_t total = n * c * spatial;
  if (total <= 0) return cudaSuccess;
  batch_norm_kernel<<<grid_for(total), kThreads, 0, s>>>(x, scale, bias, mean, var, y, n, c, spatial, eps);
  return cudaGetLastError();
}

cudaError_t launch_pool2d_f32(const float* x, float* y, const Pool2d& p, cudaStream_t s) {
  const int64_t total = p.planes * p.oh * p.ow;
  if (total <= 0) return cudaSuccess;
  pool2d_kernel<<<grid_for(total), kThreads, 0, s>>>(x, y, p);
  return cudaGetLastError();
}

cudaError_t launch_resize2d_f32(const float* x, float* y, const Resize2d& p, cudaStream_t s) {
  const int64_t total = p.planes * p.oh * p.ow;
  if (total <= 0) return cudaSuccess;
  resize2d_kernel<<<grid_for(total), kThreads, 0, s>>>(x, y, p);
  return cudaGetLastError();
}

}  // namespace tessera::cuda
