// The x86 Softmax / LogSoftmax kernels (backends/cpu/x86/softmax_x86.cc) against the
// reference (ref/softmax_common.h, double sums and exp), and vec_exp (vec_math.h) against
// exp in double, for every ISA path this CPU has.
// Tolerances, inputs in [-4, 4] so |x - m| <= 8:
//   vec_exp: <= 2 ulp (Cephes expf's bound) over [-87, 88];
//   softmax: relative (16 + n / 8) * 2^-23: exp's 2 ulp, x - m's rounding amplified by
//            |x - m| <= 8 (4 ulp), the float sum of n terms in kW lanes (n / kW + log2 kW ulp),
//            the reciprocal and the product;
//   logsoftmax: absolute 2^-22 * (|y| + 1) + (n / 8) * 2^-23 (two roundings of numbers below
//            |y| + log n, plus log of the sum's relative error).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "backends/cpu/thread_pool.h"
#include "backends/cpu/x86/softmax_x86.h"
#include "backends/cpu/x86/x86_kernels.h"
#include "x86_test_util.h"

namespace tessera {
namespace {

using namespace testing;

// Distance in units in the last place between two positive finite floats.
int64_t ulp_distance(float a, float b) {
  int32_t ia, ib;
  std::memcpy(&ia, &a, 4);
  std::memcpy(&ib, &b, 4);
  return std::llabs(static_cast<int64_t>(ia) - ib);
}

TEST(VecExpX86, WithinTwoUlp) {
  const auto isas = available_isas();
  if (isas.empty()) GTEST_SKIP() << "no vector path on this CPU (AVX2+FMA, AVX-512F or NEON)";
  std::vector<float> x, y(1 << 20);
  for (int i = 0; i < (1 << 20); ++i) x.push_back(-87.f + 175.f * static_cast<float>(i) / (1 << 20));
  x.push_back(0.f);
  x.push_back(-1e-8f);
  x.push_back(1e-8f);
  y.resize(x.size());
  for (x86::Isa isa : isas) {
    {
      using namespace x86;
      TSR_ISA_DISPATCH(isa, exp_array(x.data(), y.data(), static_cast<int64_t>(x.size())));
    }
    int64_t worst = 0;
    float worst_x = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const float e = static_cast<float>(std::exp(static_cast<double>(x[i])));
      const int64_t d = ulp_distance(y[i], e);
      if (d > worst) worst = d, worst_x = x[i];
    }
    EXPECT_LE(worst, 2) << x86::isa_name(isa) << ": worst at x = " << worst_x;
    // Edges: far below the range gives 0, NaN stays NaN.
    const float edge_in[3] = {-1000.f, -88.f, NAN};
    float edge_out[3];
    {
      using namespace x86;
      TSR_ISA_DISPATCH(isa, exp_array(edge_in, edge_out, 3));
    }
    EXPECT_EQ(edge_out[0], 0.f);
    EXPECT_EQ(edge_out[1], 0.f);
    EXPECT_TRUE(std::isnan(edge_out[2]));
  }
}

struct Case {
  Shape x;
  int64_t axis;
  int opset;
};

TEST(SoftmaxX86, MatchesReference) {
  const auto isas = available_isas();
  if (isas.empty()) GTEST_SKIP() << "no vector path on this CPU (AVX2+FMA, AVX-512F or NEON)";
  ThreadPool pool(2);
  std::mt19937 rng(11);
  const std::vector<Case> cases = {
      {{1}, -1, 13},           {{7}, 0, 13},          {{3, 1}, -1, 13},         {{5, 17}, 1, 13},
      {{2, 12, 128, 128}, -1, 13},                    {{4, 1000}, -1, 13},      {{3, 33}, -1, 13},
      {{2, 3, 5, 7}, 1, 13},   {{2, 3, 5, 7}, 2, 13}, {{2, 40, 19}, 1, 13},     {{2, 3, 4, 5}, 0, 13},
      {{2, 3, 4, 5}, 1, 11},   {{6, 31}, 0, 11},      {{64, 4097}, -1, 13},     {{1, 1, 16}, -2, 13},
  };
  for (x86::Isa isa : isas) {
    IsaScope scope(isa);
    for (const Case& c : cases) {
      Tensor x = random_floats(c.x, rng, -4.f, 4.f);
      int64_t n = 1;
      const int64_t rank = static_cast<int64_t>(c.x.size()), axis = c.axis < 0 ? c.axis + rank : c.axis;
      for (int64_t i = c.opset < 13 ? axis : axis; i < (c.opset < 13 ? rank : axis + 1); ++i) n *= c.x[i];
      for (bool log : {false, true}) {
        OpSpec spec{log ? "LogSoftmax" : "Softmax", {attr_i("axis", c.axis)}, c.opset};
        auto want = run_op(spec, {&x});
        ASSERT_TRUE(want.is_ok()) << want.status().to_string();
        for (int threads : {1, 2}) {
          const std::string what = std::string(x86::isa_name(isa)) + " " + spec.op_type + " " + shape_to_string(c.x) +
                                   " axis " + std::to_string(c.axis) + " opset " + std::to_string(c.opset) +
                                   " threads " + std::to_string(threads);
          auto got = run_op_with(log ? &x86::make_LogSoftmax : &x86::make_Softmax, spec, {&x}, {},
                                 threads > 1 ? &pool : nullptr, threads);
          ASSERT_TRUE(got.is_ok()) << what << ": " << got.status().to_string();
          const Tensor& g = got.value()[0];
          const Tensor& w = want.value()[0];
          ASSERT_EQ(g.shape(), w.shape()) << what;
          int bad = 0;
          for (int64_t i = 0; i < w.numel(); ++i) {
            const double a = g.data_as<float>()[i], e = w.data_as<float>()[i];
            const double tol = log ? std::ldexp(std::fabs(e) + 1, -22) + n / 8.0 * std::ldexp(1.0, -23)
                                   : e * (16 + n / 8.0) * std::ldexp(1.0, -23) + 1e-37;
            if (!(std::fabs(a - e) <= tol) && ++bad <= 3)
              ADD_FAILURE() << what << " element " << i << ": got " << a << " want " << e;
          }
        }
      }
    }
  }
}

TEST(SoftmaxX86, LargeAndEqualInputs) {
  // Inputs far from 0 (the max subtraction keeps exp in range) and a constant row (1 / n).
  const auto isas = available_isas();
  if (isas.empty()) GTEST_SKIP() << "no vector path on this CPU (AVX2+FMA, AVX-512F or NEON)";
  for (x86::Isa isa : isas) {
    IsaScope scope(isa);
    Tensor x = make_tensor<float>({2, 3}, {1000.f, 999.f, 998.f, -5.f, -5.f, -5.f});
    auto got = run_op_with(&x86::make_Softmax, {"Softmax", {}, 13}, {&x});
    ASSERT_TRUE(got.is_ok());
    const float* y = got.value()[0].data_as<float>();
    const double s = 1 + std::exp(-1.0) + std::exp(-2.0);
    EXPECT_NEAR(y[0], 1 / s, 1e-6);
    EXPECT_NEAR(y[2], std::exp(-2.0) / s, 1e-6);
    for (int i = 3; i < 6; ++i) EXPECT_NEAR(y[i], 1.0 / 3, 1e-7);
  }
}

}  // namespace
}  // namespace tessera
