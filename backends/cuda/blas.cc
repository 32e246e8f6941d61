// MatMul (ONNX MatMul-13: numpy matmul, batch dims broadcast) and Gemm (ONNX Gemm-13:
// Y = alpha * A' B' + beta * C, C unidirectionally broadcast to [M, N]) in float32 through
// cuBLAS SGEMM. Row-major trick: a row-major [R, C] matrix is the column-major [C, R]
// matrix, so Y = A B is computed as Y^T = B^T A^T with the operands swapped.
// Accumulation is float (the CPU reference sums in double): errors grow ~ sqrt(K) * 2^-24.
#include <algorithm>
#include <array>

#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_kernels.h"

namespace tessera::cuda {

namespace {

/// One SGEMM Y[M, N] (ld N) = alpha * op(A) op(B) + beta * Y in row-major terms, batched
/// with element strides (0: the same matrix for every batch).
struct GemmCall {
  bool ta = false, tb = false;
  int m = 0, n = 0, k = 0;
  int64_t stride_a = 0, stride_b = 0, stride_y = 0;
  int batch = 1;
};

Status run_gemm(const CudaContext& c, const GemmCall& g, float alpha, const float* a, const float* b, float beta, float* y) {
  if (g.m == 0 || g.n == 0) return Status::ok();
  const cublasOperation_t op_b = g.tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_a = g.ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int ldb = g.tb ? g.k : g.n;
  const int lda = g.ta ? g.m : g.k;
  if (g.batch == 1)
    return cublas_check(lib().cublasSgemm(c.cublas, op_b, op_a, g.n, g.m, g.k, &alpha, b, ldb, a, lda, &beta, y, g.n), "sgemm");
  return cublas_check(lib().cublasSgemmStridedBatched(c.cublas, op_b, op_a, g.n, g.m, g.k, &alpha, b, ldb, g.stride_b, a, lda,
                                                g.stride_a, &beta, y, g.n, g.stride_y, g.batch),
                      "sgemm strided batched");
}

bool fits_int(int64_t v) { return v >= 0 && v <= INT32_MAX; }

Result<std::unique_ptr<Kernel>> make_matmul(const CudaContext& c, const CompileContext& ctx) {
  if (!all_float32(ctx) || ctx.inputs.size() != 2 || !ctx.has_input(0) || !ctx.has_input(1)) return decline();
  Shape as = ctx.input(0).shape, bs = ctx.input(1).shape;
  if (as.empty() || bs.empty()) return decline();
  if (as.size() == 1) as.insert(as.begin(), 1);  // [K] -> [1, K]
  if (bs.size() == 1) bs.push_back(1);           // [K] -> [K, 1]
  const int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  if (bs[bs.size() - 2] != k) return decline();  // the schema has rejected this already
  Shape ab(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
  const size_t r = std::max(ab.size(), bb.size());
  ab.insert(ab.begin(), r - ab.size(), 1);
  bb.insert(bb.begin(), r - bb.size(), 1);
  Shape ob(r);
  int64_t a_batch = 1, b_batch = 1, o_batch = 1;
  for (size_t i = 0; i < r; ++i) {
    ob[i] = std::max(ab[i], bb[i]);
    a_batch *= ab[i];
    b_batch *= bb[i];
    o_batch *= ob[i];
  }
  if (!fits_int(m) || !fits_int(n) || !fits_int(k) || !fits_int(o_batch)) return decline();
  // Per output batch: (A offset, B offset, Y offset) in elements, for the general case.
  GemmCall g;
  g.n = static_cast<int>(n);
  g.k = static_cast<int>(k);
  std::vector<std::array<int64_t, 3>> calls;
  if (b_batch == 1) {  // B shared: fold A's batch into M (A and Y are contiguous)
    if (!fits_int(a_batch * m)) return decline();
    g.m = static_cast<int>(a_batch * m);
  } else {
    g.m = static_cast<int>(m);
    const bool a_full = a_batch == o_batch, b_full = b_batch == o_batch;
    if ((a_full || a_batch == 1) && b_full) {
      g.batch = static_cast<int>(o_batch);
      g.stride_a = a_batch == 1 ? 0 : m * k;
      g.stride_b = k * n;
      g.stride_y = m * n;
    } else {  // general broadcast: one SGEMM per output batch
      for (int64_t ob_i = 0; ob_i < o_batch; ++ob_i) {
        int64_t rem = ob_i, ai = 0, bi = 0, as_ = 1, bs_ = 1;
        for (size_t d = r; d-- > 0;) {
          const int64_t coord = rem % ob[d];
          rem /= ob[d];
          if (ab[d] != 1) ai += coord * as_;
          if (bb[d] != 1) bi += coord * bs_;
          as_ *= ab[d];
          bs_ *= bb[d];
        }
        calls.push_back({ai * m * k, bi * k * n, ob_i * m * n});
      }
    }
  }
  TSR_RETURN_IF_ERROR(ensure_cublas(c));
  const CudaContext* cp = &c;
  return make_fn_kernel([cp, g, calls](const KernelContext& kc) -> Status {
    const float* a = kc.input(0).data_as<float>();
    const float* b = kc.input(1).data_as<float>();
    float* y = kc.output(0).data_as<float>();
    if (g.k == 0) return cuda_check(cudaMemsetAsync(y, 0, kc.output(0).nbytes(), cp->stream), "MatMul with K = 0");
    if (calls.empty()) return run_gemm(*cp, g, 1.f, a, b, 0.f, y);
    for (const auto& off : calls) TSR_RETURN_IF_ERROR(run_gemm(*cp, g, 1.f, a + off[0], b + off[1], 0.f, y + off[2]));
    return Status::ok();
  });
}

Result<std::unique_ptr<Kernel>> make_gemm(const CudaContext& c, const CompileContext& ctx) {
  if (!all_float32(ctx) || !ctx.has_input(0) || !ctx.has_input(1)) return decline();
  const Shape& as = ctx.input(0).shape;
  const Shape& bs = ctx.input(1).shape;
  if (as.size() != 2 || bs.size() != 2) return decline();
  GemmCall g;
  g.ta = ctx.node.attr_i("transA", 0) != 0;
  g.tb = ctx.node.attr_i("transB", 0) != 0;
  const int64_t m = g.ta ? as[1] : as[0], k = g.ta ? as[0] : as[1];
  const int64_t n = g.tb ? bs[0] : bs[1];
  if ((g.tb ? bs[1] : bs[0]) != k) return decline();
  if (!fits_int(m) || !fits_int(n) || !fits_int(k) || k == 0) return decline();  // K = 0: the CPU computes beta * C
  g.m = static_cast<int>(m);
  g.n = static_cast<int>(n);
  g.k = static_cast<int>(k);
  const float alpha = ctx.node.attr_f("alpha", 1.f);
  float beta = ctx.node.attr_f("beta", 1.f);
  const bool has_c = ctx.has_input(2) && beta != 0.f;
  StridedView cview;  // C broadcast to [M, N]
  if (has_c) {
    const Shape& cs = ctx.input(2).shape;
    if (cs.size() > 2) return decline();
    Shape c2 = cs;
    c2.insert(c2.begin(), 2 - c2.size(), 1);
    if ((c2[0] != 1 && c2[0] != m) || (c2[1] != 1 && c2[1] != n)) return decline();
    cview.rank = 2;
    cview.out_dims[0] = m;
    cview.out_dims[1] = n;
    cview.in_strides[0] = c2[0] == 1 ? 0 : c2[1];
    cview.in_strides[1] = c2[1] == 1 ? 0 : 1;
  } else {
    beta = 0.f;
  }
  TSR_RETURN_IF_ERROR(ensure_cublas(c));
  const CudaContext* cp = &c;
  return make_fn_kernel([cp, g, alpha, beta, has_c, cview](const KernelContext& kc) -> Status {
    float* y = kc.output(0).data_as<float>();
    const int64_t n_out = static_cast<int64_t>(g.m) * g.n;
    if (has_c)
      TSR_RETURN_IF_ERROR(cuda_check(launch_strided_copy(kc.input(2).data(), y, n_out, 4, cview, cp->stream), "Gemm C"));
    return run_gemm(*cp, g, alpha, kc.input(0).data_as<float>(), kc.input(1).data_as<float>(), beta, y);
  });
}

}  // namespace

void add_blas_ops(std::vector<CudaOp>& ops) {
  ops.push_back({"MatMul", &make_matmul});
  ops.push_back({"Gemm", &make_gemm});
}

}  // namespace tessera::cuda
