// Gemm reference kernel (ONNX Gemm-7/9/11/13):
//   Y[i, j] = alpha * sum_p A'[i, p] * B'[p, j] + beta * C[i or 0, j or 0]
// with the sum in double. C's strides are 0 along its broadcast dims.
#include "backends/cpu/ref/ref_kernels.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_Gemm(const CompileContext& ctx) {
  const Shape& as = ctx.input(0).shape;
  const Shape& bs = ctx.input(1).shape;
  const bool ta = ctx.node.attr_i("transA", 0) != 0, tb = ctx.node.attr_i("transB", 0) != 0;
  const double alpha = ctx.node.attr_f("alpha", 1.f), beta = ctx.node.attr_f("beta", 1.f);
  const int64_t m = ta ? as[1] : as[0], kdim = ta ? as[0] : as[1], n = tb ? bs[0] : bs[1];
  // Strides of A' and B' in the stored A and B.
  const int64_t a_si = ta ? 1 : kdim, a_sp = ta ? m : 1;
  const int64_t b_sp = tb ? 1 : n, b_sj = tb ? kdim : 1;
  const bool has_c = ctx.has_input(2);
  int64_t c_si = 0, c_sj = 0;
  if (has_c) {
    Shape cs = ctx.input(2).shape;
    while (cs.size() < 2) cs.insert(cs.begin(), 1);
    c_sj = cs[1] == 1 ? 0 : 1;
    c_si = cs[0] == 1 ? 0 : cs[1];
  }
  return make_fn_kernel([=](const KernelContext& k) {
    const float* a = k.input(0).data_as<float>();
    const float* b = k.input(1).data_as<float>();
    const float* c = has_c ? k.input(2).data_as<float>() : nullptr;
    float* y = k.output(0).data_as<float>();
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < kdim; ++p) acc += static_cast<double>(a[i * a_si + p * a_sp]) * b[p * b_sp + j * b_sj];
        double v = alpha * acc;
        if (c) v += beta * c[i * c_si + j * c_sj];
        y[i * n + j] = static_cast<float>(v);
      }
    }
    return Status::ok();
  });
}

}  // namespace tessera::ref
