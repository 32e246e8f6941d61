// The x86 pooling kernels (backends/cpu/x86/pool_x86.cc) against the reference kernels
// (ref/max_pool.cc, ref/average_pool.cc, ref/global_*_pool.cc), on random inputs in [-1, 1],
// for every ISA path this CPU has, on one and two threads.
// MaxPool and GlobalMaxPool: bit-exact (max is exact; no NaN inputs here).
// AveragePool: the kernel sums K <= kh*kw taps in float and multiplies by 1/rows and 1/cols
// (the reference sums in double and divides once); with |x| <= 1 the error is at most
// (K + 3) * 2^-24 (Higham 2002, section 3.1, plus three roundings), the tolerance used.
// GlobalAveragePool: float sums over `size` elements in 2 * kW lanes: tolerance
// (size / 16 + 8) * 2^-24.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "backends/cpu/thread_pool.h"
#include "backends/cpu/x86/x86_kernels.h"
#include "x86_test_util.h"

namespace tessera {
namespace {

using namespace testing;
using V = std::vector<int64_t>;

struct Case {
  std::string name;
  Shape x;
  std::vector<Attribute> attrs;
};

std::vector<Case> pool_cases() {
  return {
      {"2x2 s2", {1, 3, 8, 8}, {attr_ints("kernel_shape", V{2, 2}), attr_ints("strides", V{2, 2})}},
      {"3x3 s2 p1 (ResNet stem)", {1, 64, 112, 112},
       {attr_ints("kernel_shape", V{3, 3}), attr_ints("strides", V{2, 2}), attr_ints("pads", V{1, 1, 1, 1})}},
      {"3x3 s1 p1", {2, 5, 13, 17}, {attr_ints("kernel_shape", V{3, 3}), attr_ints("pads", V{1, 1, 1, 1})}},
      {"3x3 s1 no pad odd", {1, 7, 9, 35}, {attr_ints("kernel_shape", V{3, 3})}},
      {"3x3 s2 ceil_mode", {1, 4, 14, 15},
       {attr_ints("kernel_shape", V{3, 3}), attr_ints("strides", V{2, 2}), attr_i("ceil_mode", 1)}},
      {"2x2 s2 ceil_mode odd", {2, 3, 7, 9},
       {attr_ints("kernel_shape", V{2, 2}), attr_ints("strides", V{2, 2}), attr_i("ceil_mode", 1)}},
      {"3x3 s2 p1 ceil_mode", {1, 3, 10, 37},
       {attr_ints("kernel_shape", V{3, 3}), attr_ints("strides", V{2, 2}), attr_ints("pads", V{1, 1, 1, 1}),
        attr_i("ceil_mode", 1)}},
      {"asymmetric pads", {1, 2, 11, 12},
       {attr_ints("kernel_shape", V{3, 3}), attr_ints("pads", V{0, 2, 1, 0}), attr_ints("strides", V{1, 2})}},
      {"kernel 2x3 stride 2x1", {1, 3, 9, 40}, {attr_ints("kernel_shape", V{2, 3}), attr_ints("strides", V{2, 1})}},
      {"stride 3 (scalar columns)", {1, 2, 16, 50}, {attr_ints("kernel_shape", V{3, 3}), attr_ints("strides", V{3, 3})}},
      {"SAME_UPPER s2", {1, 3, 15, 21},
       {attr_ints("kernel_shape", V{3, 3}), attr_ints("strides", V{2, 2}), attr_s("auto_pad", "SAME_UPPER")}},
      {"SAME_LOWER", {1, 3, 10, 11}, {attr_ints("kernel_shape", V{2, 2}), attr_s("auto_pad", "SAME_LOWER")}},
      {"VALID", {1, 3, 10, 11}, {attr_ints("kernel_shape", V{3, 2}), attr_s("auto_pad", "VALID")}},
      {"1x1 kernel", {1, 4, 6, 7}, {attr_ints("kernel_shape", V{1, 1})}},
      {"window = input", {2, 8, 7, 7}, {attr_ints("kernel_shape", V{7, 7})}},
      {"1x1 spatial, padded", {1, 3, 1, 1}, {attr_ints("kernel_shape", V{2, 2}), attr_ints("pads", V{1, 1, 0, 0})}},
      {"single row", {1, 2, 1, 33}, {attr_ints("kernel_shape", V{1, 3}), attr_ints("strides", V{1, 2})}},
      {"wide rows", {1, 2, 5, 300},
       {attr_ints("kernel_shape", V{3, 3}), attr_ints("strides", V{2, 2}), attr_ints("pads", V{1, 1, 1, 1})}},
  };
}

void compare(const std::string& what, const Tensor& got, const Tensor& want, double tol) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  ASSERT_GT(want.numel(), 0) << what;
  int bad = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const float a = got.data_as<float>()[i], e = want.data_as<float>()[i];
    const bool ok = tol == 0 ? std::memcmp(&a, &e, sizeof(float)) == 0 : std::fabs(a - e) <= tol;
    if (!ok && ++bad <= 3) ADD_FAILURE() << what << " element " << i << ": got " << a << " want " << e;
  }
}

TEST(PoolX86, MatchesReference) {
  const auto isas = available_isas();
  if (isas.empty()) GTEST_SKIP() << "no vector path on this CPU (AVX2+FMA, AVX-512F or NEON)";
  ThreadPool pool(2);
  std::mt19937 rng(7);
  for (x86::Isa isa : isas) {
    IsaScope scope(isa);
    for (const Case& c : pool_cases()) {
      Tensor x = random_floats(c.x, rng);
      for (const char* op : {"MaxPool", "AveragePool"}) {
        for (int cip : {0, 1}) {
          if (op[0] == 'M' && cip) continue;
          std::vector<Attribute> attrs = c.attrs;
          if (cip) attrs.push_back(attr_i("count_include_pad", 1));
          OpSpec spec{op, attrs, op[0] == 'M' ? 12 : 19};
          auto want = run_op(spec, {&x});
          ASSERT_TRUE(want.is_ok()) << c.name << ": " << want.status().to_string();
          int64_t taps = 1;
          for (const Attribute& a : c.attrs)
            if (a.name == "kernel_shape") taps = a.ints[0] * a.ints[1];
          for (int threads : {1, 2}) {
            const std::string what = std::string(x86::isa_name(isa)) + " " + op + " " + c.name +
                                     (cip ? " count_include_pad" : "") + " threads " + std::to_string(threads);
            auto got = run_op_with(op[0] == 'M' ? &x86::make_MaxPool : &x86::make_AveragePool, spec, {&x}, {},
                                   threads > 1 ? &pool : nullptr, threads);
            ASSERT_TRUE(got.is_ok()) << what << ": " << got.status().to_string();
            compare(what, got.value()[0], want.value()[0], op[0] == 'M' ? 0.0 : (taps + 3) * std::ldexp(1.0, -24));
          }
        }
      }
    }
  }
}

TEST(PoolX86, GlobalPoolsMatchReference) {
  const auto isas = available_isas();
  if (isas.empty()) GTEST_SKIP() << "no vector path on this CPU (AVX2+FMA, AVX-512F or NEON)";
  ThreadPool pool(2);
  std::mt19937 rng(8);
  const std::vector<Shape> shapes = {{1, 2048, 7, 7}, {2, 3, 1, 1}, {1, 5, 13}, {1, 7, 33, 31}, {3, 4, 2, 3, 5}, {1, 1, 1000, 17}};
  for (x86::Isa isa : isas) {
    IsaScope scope(isa);
    for (const Shape& s : shapes) {
      Tensor x = random_floats(s, rng);
      int64_t size = 1;
      for (size_t i = 2; i < s.size(); ++i) size *= s[i];
      for (const char* op : {"GlobalMaxPool", "GlobalAveragePool"}) {
        auto want = run_op({op, {}, 1}, {&x});
        ASSERT_TRUE(want.is_ok()) << want.status().to_string();
        for (int threads : {1, 2}) {
          const std::string what = std::string(x86::isa_name(isa)) + " " + op + " " + shape_to_string(s) + " threads " +
                                   std::to_string(threads);
          auto got = run_op_with(op[6] == 'M' ? &x86::make_GlobalMaxPool : &x86::make_GlobalAveragePool, {op, {}, 1},
                                 {&x}, {}, threads > 1 ? &pool : nullptr, threads);
          ASSERT_TRUE(got.is_ok()) << what << ": " << got.status().to_string();
          compare(what, got.value()[0], want.value()[0], op[6] == 'M' ? 0.0 : (size / 16.0 + 8) * std::ldexp(1.0, -24));
        }
      }
    }
  }
}

TEST(PoolX86, Declines) {
  if (available_isas().empty()) GTEST_SKIP() << "no vector path on this CPU (AVX2+FMA, AVX-512F or NEON)";
  std::mt19937 rng(9);
  Tensor x4 = random_floats({1, 2, 6, 6}, rng), x3 = random_floats({1, 2, 9}, rng);
  // Dilation, 1-D, and the Indices output run on the reference.
  auto dil = run_op_with(&x86::make_MaxPool,
                         {"MaxPool", {attr_ints("kernel_shape", V{2, 2}), attr_ints("dilations", V{2, 2})}, 12}, {&x4});
  EXPECT_EQ(dil.status().code(), StatusCode::kUnimplemented);
  auto one_d = run_op_with(&x86::make_AveragePool, {"AveragePool", {attr_ints("kernel_shape", V{3})}, 19}, {&x3});
  EXPECT_EQ(one_d.status().code(), StatusCode::kUnimplemented);
  auto idx = run_op_with(&x86::make_MaxPool, {"MaxPool", {attr_ints("kernel_shape", V{2, 2})}, 12, 2}, {&x4});
  EXPECT_EQ(idx.status().code(), StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace tessera
