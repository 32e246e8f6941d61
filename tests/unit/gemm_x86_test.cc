// The x86 MatMul and Gemm kernels (backends/cpu/x86/) against the reference kernels, on
// random inputs over many shapes: batched and broadcast MatMul, 1-D operands, empty dims,
// Gemm with every transA/transB, alpha/beta and C broadcast, a constant (pre-packed) B, and
// a thread pool. Tolerance: (k + 3) * eps32 * sum|a||b| (+ |beta c|), from the summation
// bound (Higham 2002, section 3.1), as an absolute bound per element times 2; inputs in
// [-1, 1].
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "backends/cpu/thread_pool.h"
#include "backends/cpu/x86/x86_kernels.h"
#include "op_test_util.h"

namespace tessera {
namespace {

using testing::attr_f;
using testing::attr_i;
using testing::make_tensor;
using testing::OpSpec;
using testing::run_op;
using testing::run_op_with;

Tensor random_tensor(const Shape& shape, std::mt19937& rng) {
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = d(rng);
  return make_tensor<float>(shape, v);
}

// Compares the optimized kernel's output with the reference's; `k` the reduction length.
void compare(KernelFactory opt, const OpSpec& spec, const std::vector<const Tensor*>& ins, int64_t k,
             std::vector<int> consts, ThreadPool* pool, int threads, double c_scale, const std::string& what) {
  auto want = run_op(spec, ins, consts);
  ASSERT_TRUE(want.is_ok()) << what << ": " << want.status().to_string();
  auto got = run_op_with(opt, spec, ins, consts, pool, threads);
  ASSERT_TRUE(got.is_ok()) << what << ": " << got.status().to_string();
  const Tensor& w = want.value()[0];
  const Tensor& g = got.value()[0];
  ASSERT_EQ(w.shape(), g.shape()) << what;
  const double tol = 2.0 * (static_cast<double>(k) + 3) * std::numeric_limits<float>::epsilon() * (static_cast<double>(k) + c_scale) + 1e-7;
  int bad = 0;
  for (int64_t i = 0; i < w.numel(); ++i) {
    const double a = g.data_as<float>()[i], b = w.data_as<float>()[i];
    if (!(std::fabs(a - b) <= tol) && ++bad <= 3) ADD_FAILURE() << what << " element " << i << ": got " << a << " want " << b;
  }
}

TEST(MatMulX86, MatchesReference) {
  ThreadPool pool(2);
  std::mt19937 rng(42);
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{1, 1}, {1, 1}},          {{17, 65}, {65, 33}},          {{3}, {3}},               {{5}, {5, 7}},
      {{4, 5}, {5}},             {{2, 3, 17, 9}, {9, 31}},      {{2, 1, 6, 8}, {3, 8, 5}}, {{7, 8}, {4, 8, 9}},
      {{2, 3, 4, 5}, {2, 3, 5, 6}}, {{0, 5}, {5, 3}},           {{4, 0}, {0, 3}},          {{128, 300}, {300, 200}},
      {{1, 512}, {512, 1000}},   {{3, 100, 64}, {64, 64}},
      // Batches over the threads, each product on one (too small for sgemm to split):
      // attention-like heads, an odd batch count, a broadcast A.
      {{12, 40, 16}, {12, 16, 40}}, {{5, 9, 7}, {5, 7, 11}}, {{1, 33, 20}, {7, 20, 9}}};
  for (const auto& [as, bs] : cases) {
    Tensor a = random_tensor(as, rng), b = random_tensor(bs, rng);
    const int64_t k = as.back();
    for (int consts = 0; consts < 2; ++consts)
      for (int threads : {1, 2}) {
        std::string what = "MatMul " + shape_to_string(as) + " x " + shape_to_string(bs) + (consts ? " const B" : "") +
                           " threads " + std::to_string(threads);
        compare(&x86::make_MatMul, {"MatMul"}, {&a, &b}, k, consts ? std::vector<int>{1} : std::vector<int>{},
                threads > 1 ? &pool : nullptr, threads, 0, what);
      }
  }
}

TEST(MatMulX86, DeclinesOtherDtypes) {
  Tensor a = make_tensor<int32_t>({2, 2}, {1, 2, 3, 4}), b = make_tensor<int32_t>({2, 2}, {1, 0, 0, 1});
  auto r = run_op_with(&x86::make_MatMul, {"MatMul"}, {&a, &b});
  EXPECT_EQ(r.status().code(), StatusCode::kUnimplemented);  // declined: the reference runs it
}

TEST(GemmX86, MatchesReference) {
  ThreadPool pool(2);
  std::mt19937 rng(7);
  struct Dims { int64_t m, n, k; };
  for (Dims d : {Dims{1, 1, 1}, Dims{17, 33, 65}, Dims{5, 1, 9}, Dims{64, 100, 3}, Dims{200, 150, 300}}) {
    for (int t = 0; t < 4; ++t) {
      const bool ta = t & 1, tb = t & 2;
      Tensor a = random_tensor(ta ? Shape{d.k, d.m} : Shape{d.m, d.k}, rng);
      Tensor b = random_tensor(tb ? Shape{d.n, d.k} : Shape{d.k, d.n}, rng);
      const std::vector<Shape> c_shapes = {{}, {d.n}, {1, d.n}, {d.m, 1}, {d.m, d.n}, {1}};
      for (size_t ci = 0; ci <= c_shapes.size(); ++ci) {
        const bool has_c = ci < c_shapes.size();
        Tensor c = has_c ? random_tensor(c_shapes[ci], rng) : Tensor();
        for (auto [alpha, beta] : {std::pair<float, float>{1.f, 1.f}, {0.5f, -2.f}, {1.f, 0.f}}) {
          OpSpec spec{"Gemm", {attr_i("transA", ta), attr_i("transB", tb), attr_f("alpha", alpha), attr_f("beta", beta)}, 13};
          std::vector<const Tensor*> ins = {&a, &b};
          if (has_c) ins.push_back(&c);
          for (int consts = 0; consts < 2; ++consts) {
            std::string what = "Gemm m=" + std::to_string(d.m) + " n=" + std::to_string(d.n) + " k=" + std::to_string(d.k) +
                               " ta=" + std::to_string(ta) + " tb=" + std::to_string(tb) +
                               (has_c ? " C " + shape_to_string(c_shapes[ci]) : " no C") + " alpha=" + std::to_string(alpha) +
                               " beta=" + std::to_string(beta) + (consts ? " const B" : "");
            compare(&x86::make_Gemm, spec, ins, d.k, consts ? std::vector<int>{1} : std::vector<int>{},
                    consts ? &pool : nullptr, consts ? 2 : 1, std::fabs(beta), what);
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace tessera
