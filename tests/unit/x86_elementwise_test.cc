// The float32 elementwise kernels (backends/cpu/x86/elementwise_x86.h: AVX-512, AVX2, and NEON
// on aarch64, where this file runs under QEMU in CI) against the reference kernels, for
// every ISA path this CPU can run (each forced), on many shapes
// (size 1, odd sizes, large, every broadcast pattern, 0-size) with special values mixed into
// random inputs (inf, -inf, NaN, -0, 0, 3e38, subnormals), with and without threads.
// What right looks like:
//   - Add, Sub, Mul, Div, Max, Min, PRelu, Relu, LeakyRelu, Clip, Sqrt, Neg, Abs, Pow(x, 2),
//     Pow(x, 1): bit-identical to the reference (any NaN matches any NaN);
//   - HardSigmoid, HardSwish: within 2 ulp (the reference rounds alpha * x + beta in double);
//   - Exp, Sigmoid, Tanh, Erf, Gelu, Pow(x, 0.5): within the ulp bounds below, which are
//     the max errors measured against long double on a dense sweep (every 331st float bit
//     pattern) rounded up. Measured max errors (AVX-512 and AVX2 give the same values):
//       exp 0.98 ulp, sigmoid 2.21, tanh 1.26, erf 2.26, gelu(erf) 3.74 (at x = -7.96;
//       4.50 over every float in [-20, 20], at x = -10.105: its bound is 5),
//       gelu(tanh) 7.71 for x >= -3 (4.6e-7 relative; below -3 it grows about as |2y|
//       ulp, see elementwise_simd.h).
// The broadcast-run decomposition (backends/cpu/broadcast_runs.h) is also checked on its
// own against per-element index arithmetic, for arbitrary [begin, end) ranges.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "backends/cpu/broadcast_runs.h"
#include "backends/cpu/ref/ref_kernels.h"
#include "backends/cpu/ref/ref_util.h"
#include "backends/cpu/thread_pool.h"
#include "backends/cpu/x86/elementwise_x86.h"
#include "op_test_util.h"

namespace tessera {
namespace {

using cpu::ElementwiseIsa;
using testing::attr_f;
using testing::attr_s;
using testing::make_tensor;
using testing::OpSpec;
using testing::run_op;
using testing::run_op_with;

std::vector<ElementwiseIsa> available_isas() {
  std::vector<ElementwiseIsa> v;
  for (ElementwiseIsa isa : {ElementwiseIsa::kAvx512, ElementwiseIsa::kAvx2, ElementwiseIsa::kNeon})
    if (cpu::elementwise_isa_available(isa)) v.push_back(isa);
  return v;
}

template <ElementwiseIsa kIsa>
Result<std::unique_ptr<Kernel>> forced(const CompileContext& ctx) {
  return x86::make_elementwise(ctx, kIsa);
}
KernelFactory factory_for(ElementwiseIsa isa) {
  switch (isa) {
    case ElementwiseIsa::kAvx512: return &forced<ElementwiseIsa::kAvx512>;
    case ElementwiseIsa::kAvx2: return &forced<ElementwiseIsa::kAvx2>;
    default: return &forced<ElementwiseIsa::kNeon>;
  }
}

const float kSpecials[] = {INFINITY, -INFINITY, NAN, -0.f, 0.f, 3e38f, -3e38f, 1e-40f, -1e-40f, 1.f, -1.f};

/// Random values in [-lo_hi, lo_hi], about one in 16 replaced by a special value.
Tensor random_tensor(const Shape& shape, std::mt19937& rng, float range = 4.f, bool specials = true) {
  std::uniform_real_distribution<float> d(-range, range);
  std::uniform_int_distribution<int> pick(0, 15 * static_cast<int>(std::size(kSpecials)));
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) {
    const int k = pick(rng);
    x = specials && k < static_cast<int>(std::size(kSpecials)) ? kSpecials[k] : d(rng);
  }
  return make_tensor<float>(shape, v);
}

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

/// Distance in ulps of the float result `got` from the exact value `want` (ulp of want's
/// float binade; subnormal ulp 2^-149).
double ulp_error(float got, long double want) {
  if (std::isnan(got) || std::isnan(static_cast<double>(want))) return std::isnan(got) == std::isnan(static_cast<double>(want)) ? 0 : 1e30;
  if (std::isinf(got) || std::isinf(static_cast<double>(want))) {
    if (got == static_cast<float>(want)) return 0;
    return 1e30;
  }
  const float wf = static_cast<float>(want);
  int e = 0;
  std::frexp(std::fabs(wf) > 0 ? std::fabs(wf) : FLT_MIN, &e);
  const long double ulp = std::ldexp(1.0L, std::max(e - 24, -149));
  return static_cast<double>(std::fabs(static_cast<long double>(got) - want) / ulp);
}

/// Compares the forced ISA kernel's output with the reference kernel's: bit-exact when
/// max_ulp == 0, else within max_ulp ulp of the reference's value (or abs_tol absolute).
void compare(ElementwiseIsa isa, const OpSpec& spec, const std::vector<const Tensor*>& ins, std::vector<int> consts,
             double max_ulp, double abs_tol, ThreadPool* pool, int threads, const std::string& what) {
  auto want = run_op(spec, ins, consts);
  ASSERT_TRUE(want.is_ok()) << what << ": " << want.status().to_string();
  auto got = run_op_with(factory_for(isa), spec, ins, consts, pool, threads);
  ASSERT_TRUE(got.is_ok()) << what << ": " << got.status().to_string();
  const Tensor& w = want.value()[0];
  const Tensor& g = got.value()[0];
  ASSERT_EQ(w.shape(), g.shape()) << what;
  int bad = 0;
  for (int64_t i = 0; i < w.numel() && bad < 5; ++i) {
    const float a = g.data_as<float>()[i], b = w.data_as<float>()[i];
    bool ok;
    if (std::isnan(a) || std::isnan(b)) ok = std::isnan(a) && std::isnan(b);
    else if (max_ulp == 0) ok = bits(a) == bits(b);
    else ok = ulp_error(a, b) <= max_ulp || std::fabs(static_cast<double>(a) - b) <= abs_tol;
    if (!ok) {
      ++bad;
      ADD_FAILURE() << what << " [" << cpu::elementwise_isa_name(isa) << "] element " << i << ": got " << a
                    << " (0x" << std::hex << bits(a) << "), reference " << b << " (0x" << bits(b) << std::dec << ")";
    }
  }
}

// ---- the broadcast-run decomposition -----------------------------------------------------

TEST(BroadcastRuns, MatchesIndexArithmetic) {
  const std::vector<std::array<Shape, 2>> cases = {
      {Shape{2, 3, 4, 5}, Shape{2, 3, 4, 5}}, {Shape{2, 3, 4, 5}, Shape{}}, {Shape{2, 3, 4, 5}, Shape{3, 1, 1}},
      {Shape{2, 3, 4, 5}, Shape{1, 3, 1, 1}}, {Shape{2, 3, 4, 5}, Shape{5}}, {Shape{2, 3, 4, 5}, Shape{4, 1}},
      {Shape{2, 1, 4, 1}, Shape{1, 3, 1, 5}}, {Shape{1, 1, 7}, Shape{3, 1}}, {Shape{6, 1, 1, 2}, Shape{6, 5, 1, 2}},
      {Shape{2, 3, 4, 5}, Shape{2, 3, 1, 1}}, {Shape{1}, Shape{1}}, {Shape{}, Shape{}}, {Shape{3, 0, 2}, Shape{2}}};
  std::mt19937 rng(7);
  for (const auto& c : cases) {
    const Shape out = broadcast_shapes(c[0], c[1]).value();
    for (int swap = 0; swap < 2; ++swap) {
      const Shape& sa = swap ? c[1] : c[0];
      const Shape& sb = swap ? c[0] : c[1];
      cpu::BroadcastRuns br;
      ASSERT_TRUE(br.init(out, sa, sb)) << shape_to_string(sa) << " " << shape_to_string(sb);
      const int64_t n = br.numel();
      for (int trial = 0; trial < 20; ++trial) {
        std::uniform_int_distribution<int64_t> d(0, n);
        int64_t b = d(rng), e = d(rng);
        if (trial == 0) b = 0, e = n;
        if (b > e) std::swap(b, e);
        int64_t next = b;
        br.for_each_run(b, e, [&](int64_t ia, int64_t ib, int64_t iy, int64_t len, int64_t ra, int64_t rb) {
          EXPECT_EQ(iy, next);
          EXPECT_GT(len, 0);
          for (int64_t i = 0; i < len; ++i) {
            EXPECT_EQ(ia + i * ra, ref::broadcast_offset(iy + i, out, sa)) << shape_to_string(sa) << " at " << iy + i;
            EXPECT_EQ(ib + i * rb, ref::broadcast_offset(iy + i, out, sb)) << shape_to_string(sb) << " at " << iy + i;
          }
          next = iy + len;
        });
        EXPECT_EQ(next, e);
      }
    }
  }
  cpu::BroadcastRuns br;
  EXPECT_FALSE(br.init(Shape{2, 3}, Shape{3, 3}, Shape{3}));  // 3 does not broadcast to 2
  ASSERT_TRUE(br.init(Shape{2, 3, 4, 5}, Shape{2, 3, 4, 5}, Shape{1, 3, 1, 1}));
  EXPECT_EQ(br.inner(), 20);  // per-channel: runs of H*W with one b element
  EXPECT_EQ(br.inner_stride_b(), 0);
}

// ---- binary ops ----------------------------------------------------------------------------

const std::vector<std::array<Shape, 2>>& binary_shapes() {
  static const std::vector<std::array<Shape, 2>> v = {
      {Shape{1}, Shape{1}},
      {Shape{7}, Shape{7}},
      {Shape{33}, Shape{}},
      {Shape{}, Shape{65}},
      {Shape{1000}, Shape{1000}},
      {Shape{0}, Shape{1}},
      {Shape{3, 0, 4}, Shape{4}},
      {Shape{2, 5, 7, 3}, Shape{5, 1, 1}},        // per-channel, [C,1,1]
      {Shape{2, 16, 9, 9}, Shape{1, 16, 1, 1}},   // per-channel, [1,C,1,1]
      {Shape{1, 16, 9, 9}, Shape{1, 16, 1, 1}},
      {Shape{3, 17}, Shape{17}},                  // trailing row
      {Shape{5, 4, 31}, Shape{1, 1, 31}},
      {Shape{1, 1, 31}, Shape{5, 4, 31}},         // broadcast on the left
      {Shape{4, 1}, Shape{1, 23}},                // both broadcast (outer product)
      {Shape{2, 3, 1, 5}, Shape{3, 7, 1}},        // alternating
      {Shape{2, 3, 4, 5}, Shape{2, 3, 4, 1}},     // inner size-1 run
      {Shape{1, 64, 56, 56}, Shape{1, 64, 56, 56}},   // large
      {Shape{1, 64, 56, 56}, Shape{64, 1, 1}},
      {Shape{4, 40, 480}, Shape{480}},
      {Shape{4, 40, 480}, Shape{}},
  };
  return v;
}

TEST(X86Elementwise, BinaryOpsMatchReferenceBitExactly) {
  ThreadPool pool(3);
  std::mt19937 rng(1);
  for (ElementwiseIsa isa : available_isas()) {
    for (const char* op : {"Add", "Sub", "Mul", "Div", "Max", "Min"}) {
      for (const auto& s : binary_shapes()) {
        const Tensor a = random_tensor(s[0], rng), b = random_tensor(s[1], rng);
        const std::string what = std::string(op) + " " + shape_to_string(s[0]) + " " + shape_to_string(s[1]);
        compare(isa, OpSpec{op, {}, 14}, {&a, &b}, {}, 0, 0, nullptr, 1, what);
        compare(isa, OpSpec{op, {}, 14}, {&b, &a}, {}, 0, 0, nullptr, 1, what + " swapped");
        compare(isa, OpSpec{op, {}, 14}, {&a, &b}, {}, 0, 0, &pool, 3, what + " 3 threads");
      }
    }
  }
}

// Outputs large enough to be split over threads (cheap ops: >= 2 x 2^20 elements; the
// transcendental ones: >= 2 x 2^16), with split points inside broadcast runs.
TEST(X86Elementwise, ThreadedSplitsMatchReference) {
  ThreadPool pool(3);
  std::mt19937 rng(11);
  const Shape big{2, 64, 129, 131};  // 2.16M elements
  const Tensor a = random_tensor(big, rng);
  const Tensor per_channel = random_tensor({64, 1, 1}, rng), row = random_tensor({131}, rng), scalar = random_tensor({}, rng);
  for (ElementwiseIsa isa : available_isas()) {
    for (const char* op : {"Add", "Div", "Max"})
      for (const Tensor* b : {&a, &per_channel, &row, &scalar})
        compare(isa, OpSpec{op, {}, 14}, {&a, b}, {}, 0, 0, &pool, 3, std::string(op) + " big x " + shape_to_string(b->shape()));
    compare(isa, OpSpec{"Relu", {}, 14}, {&a}, {}, 0, 0, &pool, 3, "Relu big");
    const Tensor mid = random_tensor({3, 50001}, rng, 20.f);
    compare(isa, OpSpec{"Sigmoid", {}, 13}, {&mid}, {}, 3, 1e-37, &pool, 3, "Sigmoid [3,50001]");
    compare(isa, OpSpec{"Gelu", {}, 20}, {&mid}, {}, 6, 1e-15, &pool, 2, "Gelu [3,50001]");
  }
}

TEST(X86Elementwise, PReluMatchesReferenceBitExactly) {
  ThreadPool pool(2);
  std::mt19937 rng(2);
  const std::vector<std::array<Shape, 2>> cases = {{Shape{1}, Shape{1}},          {Shape{2, 5, 7, 3}, Shape{5, 1, 1}},
                                                   {Shape{3, 17}, Shape{17}},     {Shape{9, 33}, Shape{1}},
                                                   {Shape{1, 64, 56, 56}, Shape{64, 1, 1}}, {Shape{0, 3}, Shape{3}}};
  for (ElementwiseIsa isa : available_isas())
    for (const auto& s : cases) {
      const Tensor x = random_tensor(s[0], rng), slope = random_tensor(s[1], rng);
      compare(isa, OpSpec{"PRelu", {}, 16}, {&x, &slope}, {1}, 0, 0, &pool, 2, "PRelu " + shape_to_string(s[0]));
    }
}

TEST(X86Elementwise, SpecialValuesEverywhere) {
  // Every pair of special values, so each NaN / inf / -0 rule is hit at every position.
  std::vector<float> va, vb;
  for (float x : kSpecials)
    for (float y : kSpecials) va.push_back(x), vb.push_back(y);
  const Tensor a = make_tensor<float>({static_cast<int64_t>(va.size())}, va);
  const Tensor b = make_tensor<float>({static_cast<int64_t>(vb.size())}, vb);
  for (ElementwiseIsa isa : available_isas()) {
    for (const char* op : {"Add", "Sub", "Mul", "Div", "Max", "Min", "PRelu"})
      compare(isa, OpSpec{op, {}, 16}, {&a, &b}, {}, 0, 0, nullptr, 1, std::string(op) + " specials");
    for (const char* op : {"Relu", "Sqrt", "Neg", "Abs"})
      compare(isa, OpSpec{op, {}, 14}, {&a}, {}, 0, 0, nullptr, 1, std::string(op) + " specials");
    compare(isa, OpSpec{"Clip", {attr_f("min", -1.f), attr_f("max", 2.f)}, 6}, {&a}, {}, 0, 0, nullptr, 1, "Clip-6 specials");
    compare(isa, OpSpec{"Clip", {}, 13}, {&a}, {}, 0, 0, nullptr, 1, "Clip-13 no bounds, specials");
    for (const char* op : {"Exp", "Sigmoid", "Tanh", "Erf", "HardSwish"})
      compare(isa, OpSpec{op, {}, 14}, {&a}, {}, 4, 1e-37, nullptr, 1, std::string(op) + " specials");
    compare(isa, OpSpec{"HardSigmoid", {}, 6}, {&a}, {}, 2, 1e-37, nullptr, 1, "HardSigmoid specials");
    compare(isa, OpSpec{"Gelu", {attr_s("approximate", "tanh")}, 20}, {&a}, {}, 4, 1e-37, nullptr, 1, "Gelu(tanh) specials");
    compare(isa, OpSpec{"Gelu", {}, 20}, {&a}, {}, 4, 1e-37, nullptr, 1, "Gelu(erf) specials");  // -inf: NaN, both
  }
}

// ---- unary ops -----------------------------------------------------------------------------

struct UnaryCase {
  OpSpec spec;
  double max_ulp;   // 0: bit-exact
  double abs_tol;
  float range;      // inputs in [-range, range] (plus specials)
};

std::vector<UnaryCase> unary_cases() {
  return {
      {{"Relu", {}, 14}, 0, 0, 4},
      {{"LeakyRelu", {attr_f("alpha", 0.1f)}, 16}, 0, 0, 4},
      {{"Clip", {attr_f("min", -0.5f), attr_f("max", 0.75f)}, 6}, 0, 0, 4},
      {{"Clip", {}, 6}, 0, 0, 4},
      {{"Sqrt", {}, 13}, 0, 0, 100},
      {{"Neg", {}, 13}, 0, 0, 4},
      {{"Abs", {}, 13}, 0, 0, 4},
      {{"HardSigmoid", {attr_f("alpha", 0.3f), attr_f("beta", 0.4f)}, 6}, 2, 1e-37, 6},
      {{"HardSwish", {}, 14}, 2, 1e-37, 6},
      {{"Exp", {}, 13}, 2, 1e-37, 100},
      {{"Sigmoid", {}, 13}, 3, 1e-37, 30},
      {{"Tanh", {}, 13}, 3, 1e-37, 12},
      {{"Erf", {}, 13}, 3, 1e-37, 5},
      // The reference computes 1 + erf in double: for x < -5.5 it keeps only ~1e-16 * |x|
      // absolute accuracy, the kernel (erfc form) more; hence the absolute bound.
      {{"Gelu", {}, 20}, 4, 1e-15, 12},
      {{"Gelu", {attr_s("approximate", "tanh")}, 20}, 4, 1e-7, 3},
  };
}

TEST(X86Elementwise, UnaryOpsMatchReference) {
  ThreadPool pool(2);
  std::mt19937 rng(3);
  const std::vector<Shape> shapes = {Shape{1}, Shape{5}, Shape{16}, Shape{17}, Shape{3, 31}, Shape{0},
                                     Shape{2, 0}, Shape{1000}, Shape{1, 32, 40, 40}};
  for (ElementwiseIsa isa : available_isas())
    for (const UnaryCase& c : unary_cases())
      for (const Shape& s : shapes) {
        const Tensor x = random_tensor(s, rng, c.range);
        const std::string what = c.spec.op_type + "-" + std::to_string(c.spec.opset) + " " + shape_to_string(s);
        compare(isa, c.spec, {&x}, {}, c.max_ulp, c.abs_tol, nullptr, 1, what);
        compare(isa, c.spec, {&x}, {}, c.max_ulp, c.abs_tol, &pool, 2, what + " 2 threads");
      }
}

TEST(X86Elementwise, ClipWithInputBounds) {
  std::mt19937 rng(4);
  const Tensor x = random_tensor({3, 77}, rng);
  const Tensor lo = make_tensor<float>({}, {-0.25f}), hi = make_tensor<float>({}, {1.5f});
  for (ElementwiseIsa isa : available_isas()) {
    compare(isa, OpSpec{"Clip", {}, 13}, {&x, &lo, &hi}, {}, 0, 0, nullptr, 1, "Clip min max");
    compare(isa, OpSpec{"Clip", {}, 13}, {&x, &lo, nullptr}, {}, 0, 0, nullptr, 1, "Clip min");
    compare(isa, OpSpec{"Clip", {}, 13}, {&x, nullptr, &hi}, {}, 0, 0, nullptr, 1, "Clip max");
    compare(isa, OpSpec{"Clip", {}, 13}, {&x}, {}, 0, 0, nullptr, 1, "Clip none");  // -inf -> -FLT_MAX, as the reference
  }
}

TEST(X86Elementwise, PowWithScalarExponent) {
  std::mt19937 rng(5);
  const Tensor x = random_tensor({4, 33}, rng, 10.f);
  for (ElementwiseIsa isa : available_isas()) {
    for (float e : {2.f, 1.f}) {
      const Tensor et = make_tensor<float>({}, {e});
      compare(isa, OpSpec{"Pow", {}, 15}, {&x, &et}, {1}, 0, 0, nullptr, 1, "Pow " + std::to_string(e));
    }
    const Tensor half = make_tensor<float>({}, {0.5f});
    compare(isa, OpSpec{"Pow", {}, 15}, {&x, &half}, {1}, 1, 0, nullptr, 1, "Pow 0.5");
    const Tensor two64 = make_tensor<int64_t>({1}, {2});
    compare(isa, OpSpec{"Pow", {}, 15}, {&x, &two64}, {1}, 0, 0, nullptr, 1, "Pow int64 2");
    // Another exponent, or one not known at plan time: declined (the reference runs).
    const Tensor three = make_tensor<float>({}, {3.f});
    auto r = run_op_with(factory_for(isa), OpSpec{"Pow", {}, 15}, {&x, &three}, {1}, nullptr, 1);
    EXPECT_EQ(r.status().code(), StatusCode::kUnimplemented);
    auto r2 = run_op_with(factory_for(isa), OpSpec{"Pow", {}, 15}, {&x, &half}, {}, nullptr, 1);
    EXPECT_EQ(r2.status().code(), StatusCode::kUnimplemented);
  }
}

TEST(X86Elementwise, DeclinesOtherDtypes) {
  const Tensor a = make_tensor<int32_t>({3}, {1, 2, 3});
  const Tensor d = make_tensor<double>({3}, {1, 2, 3});
  for (ElementwiseIsa isa : available_isas()) {
    EXPECT_EQ(run_op_with(factory_for(isa), OpSpec{"Add", {}, 14}, {&a, &a}).status().code(), StatusCode::kUnimplemented);
    EXPECT_EQ(run_op_with(factory_for(isa), OpSpec{"Relu", {}, 14}, {&d}).status().code(), StatusCode::kUnimplemented);
  }
}

// ---- accuracy sweep ------------------------------------------------------------------------

struct SweepCase {
  cpu::UnaryOp op;
  const char* name;
  float lo, hi;     // input range swept
  double max_ulp;   // bound asserted (the measured max, rounded up; see the file comment)
  long double (*exact)(long double);
};

long double exact_gelu_erf(long double x) { return 0.5L * x * std::erfc(-x / std::sqrt(2.0L)); }
long double exact_gelu_tanh(long double x) {
  const long double y = std::sqrt(2.0L / 3.14159265358979323846264338327950288L) * (x + 0.044715L * x * x * x);
  return x / (1.0L + std::exp(-2.0L * y));
}

TEST(X86Elementwise, TranscendentalAccuracySweep) {
  const SweepCase cases[] = {
      {cpu::UnaryOp::kExp, "exp", -110.f, 90.f, 1, [](long double x) { return std::exp(x); }},
      {cpu::UnaryOp::kSigmoid, "sigmoid", -100.f, 100.f, 3, [](long double x) { return 1.0L / (1.0L + std::exp(-x)); }},
      {cpu::UnaryOp::kTanh, "tanh", -12.f, 12.f, 2, [](long double x) { return std::tanh(x); }},
      {cpu::UnaryOp::kErf, "erf", -6.f, 6.f, 3, [](long double x) { return std::erf(x); }},
      {cpu::UnaryOp::kGeluErf, "gelu(erf)", -14.f, 14.f, 5, exact_gelu_erf},
      {cpu::UnaryOp::kGeluTanh, "gelu(tanh)", -3.f, 14.f, 8, exact_gelu_tanh},
  };
  for (ElementwiseIsa isa : available_isas()) {
    const cpu::ElementwiseCore core = cpu::elementwise_core(isa);
    for (const SweepCase& c : cases) {
      // Every 331st float bit pattern in [lo, hi] (both signs), plus the range ends; on
      // aarch64 (run under QEMU, where long double is emulated binary128) every 33101st.
#if defined(__aarch64__)
      constexpr uint64_t kStride = 33101;
#else
      constexpr uint64_t kStride = 331;
#endif
      std::vector<float> xs;
      for (uint64_t u = 0; u < 0x7f800000u; u += kStride) {
        float f;
        const uint32_t b = static_cast<uint32_t>(u);
        std::memcpy(&f, &b, 4);
        if (f <= c.hi) xs.push_back(f);
        if (-f >= c.lo) xs.push_back(-f);
      }
      xs.push_back(c.lo);
      xs.push_back(c.hi);
      std::vector<float> ys(xs.size());
      core.unary(c.op, cpu::UnaryParams{}, xs.data(), ys.data(), static_cast<int64_t>(xs.size()));
      double worst = 0;
      float worst_x = 0;
      for (size_t i = 0; i < xs.size(); ++i) {
        const double e = ulp_error(ys[i], c.exact(xs[i]));
        if (e > worst) worst = e, worst_x = xs[i];
      }
      std::printf("[ sweep    ] %-7s %-10s %zu inputs in [%g, %g]: max error %.2f ulp at x = %.9g\n",
                  cpu::elementwise_isa_name(isa), c.name, xs.size(), c.lo, c.hi, worst, worst_x);
      EXPECT_LE(worst, c.max_ulp) << c.name << " at x = " << worst_x;
    }
  }
}

}  // namespace
}  // namespace tessera
