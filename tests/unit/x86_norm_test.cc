// The x86 LayerNormalization (backends/cpu/x86/norm_x86.cc) and ReduceSum / ReduceMean /
// ReduceMax (reduce_x86.cc) kernels against the reference kernels (double accumulation), on
// random inputs, for every ISA path this CPU has, one and two threads.
// Tolerances:
//   LayerNormalization, x in [-1, 1]: the float mean and variance of n terms in kW lanes are
//   off by at most (n / kW + 5) ulp relative, so y = (x - mean) * inv_std * scale + b is
//   within 2^-21 * (n / 16 + 8) * (|y| + |b| + 1); Mean and InvStdDev the same relative.
//   ReduceSum / ReduceMean: (size / 16 + 8) * 2^-24 * sum|x| (/ size for the mean);
//   ReduceMax: bit-exact.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "backends/cpu/thread_pool.h"
#include "backends/cpu/x86/x86_kernels.h"
#include "x86_test_util.h"

namespace tessera {
namespace {

using namespace testing;
using V = std::vector<int64_t>;

void compare(const std::string& what, const Tensor& got, const Tensor& want, double rel, double abs_floor) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  ASSERT_GT(want.numel(), 0) << what;
  int bad = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const float a = got.data_as<float>()[i], e = want.data_as<float>()[i];
    const bool ok = rel == 0 && abs_floor == 0 ? std::memcmp(&a, &e, 4) == 0
                                               : std::fabs(a - e) <= rel * std::fabs(e) + abs_floor;
    if (!ok && ++bad <= 3) ADD_FAILURE() << what << " element " << i << ": got " << a << " want " << e;
  }
}

TEST(LayerNormX86, MatchesReference) {
  const auto isas = available_isas();
  if (isas.empty()) GTEST_SKIP() << "no vector path on this CPU (AVX2+FMA, AVX-512F or NEON)";
  ThreadPool pool(2);
  std::mt19937 rng(21);
  struct Case {
    Shape x;
    int64_t axis;
  };
  const std::vector<Case> cases = {{{1, 128, 768}, -1}, {{3, 1}, -1}, {{5, 7}, 1}, {{2, 3, 17}, -1},
                                   {{2, 3, 4, 5}, 2},   {{4, 33}, -1}, {{2, 4096}, 1}, {{7, 5, 3}, 0}};
  for (x86::Isa isa : isas) {
    IsaScope scope(isa);
    for (const Case& c : cases) {
      const int64_t rank = static_cast<int64_t>(c.x.size()), axis = c.axis < 0 ? c.axis + rank : c.axis;
      const Shape norm(c.x.begin() + axis, c.x.end());
      int64_t n = 1;
      for (int64_t d : norm) n *= d;
      Tensor x = random_floats(c.x, rng), scale = random_floats(norm, rng, 0.5f, 1.5f), b = random_floats(norm, rng);
      for (bool bias : {false, true}) {
        for (float eps : {1e-5f, 1e-12f}) {
          OpSpec spec{"LayerNormalization", {attr_i("axis", c.axis), attr_f("epsilon", eps)}, 17, 3};
          std::vector<const Tensor*> ins = {&x, &scale};
          if (bias) ins.push_back(&b);
          auto want = run_op(spec, ins);
          ASSERT_TRUE(want.is_ok()) << want.status().to_string();
          for (int threads : {1, 2}) {
            const std::string what = std::string(x86::isa_name(isa)) + " LayerNormalization " + shape_to_string(c.x) +
                                     " axis " + std::to_string(c.axis) + (bias ? " bias" : "") + " threads " +
                                     std::to_string(threads);
            auto got = run_op_with(&x86::make_LayerNormalization, spec, ins, {}, threads > 1 ? &pool : nullptr, threads);
            ASSERT_TRUE(got.is_ok()) << what << ": " << got.status().to_string();
            const double rel = std::ldexp(n / 16.0 + 8, -21);
            // Y: relative to |y| + |b| + 1 (b and scale are O(1)).
            compare(what + " Y", got.value()[0], want.value()[0], rel, rel * 3);
            compare(what + " Mean", got.value()[1], want.value()[1], rel, rel);
            compare(what + " InvStdDev", got.value()[2], want.value()[2], rel, 0);
          }
        }
      }
      // Only Y requested (Mean and InvStdDev omitted).
      OpSpec spec{"LayerNormalization", {attr_i("axis", c.axis)}, 17, 3};
      auto got = run_op_with(&x86::make_LayerNormalization, spec, {&x, &scale}, {}, nullptr, 1, {true, false, false});
      ASSERT_TRUE(got.is_ok()) << got.status().to_string();
    }
  }
}

TEST(LayerNormX86, DeclinesBroadcastScale) {
  if (available_isas().empty()) GTEST_SKIP() << "no vector path on this CPU (AVX2+FMA, AVX-512F or NEON)";
  std::mt19937 rng(22);
  Tensor x = random_floats({2, 3, 4}, rng), scale = random_floats({4}, rng);
  auto r = run_op_with(&x86::make_LayerNormalization, {"LayerNormalization", {attr_i("axis", 1)}, 17}, {&x, &scale});
  EXPECT_EQ(r.status().code(), StatusCode::kUnimplemented);
}

TEST(ReduceX86, MatchesReference) {
  const auto isas = available_isas();
  if (isas.empty()) GTEST_SKIP() << "no vector path on this CPU (AVX2+FMA, AVX-512F or NEON)";
  ThreadPool pool(2);
  std::mt19937 rng(23);
  struct Case {
    Shape x;
    V axes;
    int64_t keepdims;
  };
  const std::vector<Case> cases = {{{1, 128, 768}, {-1}, 1}, {{2, 3, 5, 7}, {2, 3}, 1}, {{2, 3, 5, 7}, {3, 2}, 0},
                                   {{5}, {0}, 0},           {{3, 1}, {1}, 1},          {{4, 33}, {-1}, 0},
                                   {{2, 1, 9}, {1, 2}, 1},  {{1, 2048, 7, 7}, {2, 3}, 1}, {{6, 5000}, {1}, 1},
                                   {{3, 4, 5}, {}, 1}};
  for (x86::Isa isa : isas) {
    IsaScope scope(isa);
    for (const Case& c : cases) {
      Tensor x = random_floats(c.x, rng);
      Tensor axes = make_tensor<int64_t>({static_cast<int64_t>(c.axes.size())}, c.axes);
      int64_t size = 1;
      if (c.axes.empty()) {
        for (int64_t d : c.x) size *= d;
      } else {
        for (int64_t a : c.axes) size *= c.x[a < 0 ? a + c.x.size() : a];
      }
      for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax"}) {
        // ReduceSum takes axes as an input from opset 13, the others from 18.
        OpSpec spec{op, {attr_i("keepdims", c.keepdims)}, 18};
        std::vector<const Tensor*> ins = {&x};
        if (!c.axes.empty()) ins.push_back(&axes);
        auto want = run_op(spec, ins, {1});
        ASSERT_TRUE(want.is_ok()) << want.status().to_string();
        KernelFactory f = op[6] == 'S' ? &x86::make_ReduceSum : op[6] == 'M' && op[7] == 'e' ? &x86::make_ReduceMean
                                                                                            : &x86::make_ReduceMax;
        for (int threads : {1, 2}) {
          const std::string what = std::string(x86::isa_name(isa)) + " " + op + " " + shape_to_string(c.x) +
                                   " threads " + std::to_string(threads);
          auto got = run_op_with(f, spec, ins, {1}, threads > 1 ? &pool : nullptr, threads);
          ASSERT_TRUE(got.is_ok()) << what << ": " << got.status().to_string();
          const double ulps = std::ldexp(size / 16.0 + 8, -24);
          if (op[7] == 'a') compare(what, got.value()[0], want.value()[0], 0, 0);
          else compare(what, got.value()[0], want.value()[0], 0, ulps * (op[6] == 'S' ? size : 1));
        }
      }
    }
  }
}

TEST(ReduceX86, DeclinesInnerKeptAxes) {
  if (available_isas().empty()) GTEST_SKIP() << "no vector path on this CPU (AVX2+FMA, AVX-512F or NEON)";
  std::mt19937 rng(24);
  Tensor x = random_floats({2, 3, 4}, rng);
  Tensor axes = make_tensor<int64_t>({1}, {1});
  auto r = run_op_with(&x86::make_ReduceSum, {"ReduceSum", {}, 18}, {&x, &axes}, {1});
  EXPECT_EQ(r.status().code(), StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace tessera
