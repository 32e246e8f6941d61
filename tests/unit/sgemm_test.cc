// The packed SGEMM (backends/cpu/x86/sgemm.h) against a plain triple loop in double, on
// random inputs over many shapes, for every ISA path this CPU can run (each forced), with
// and without threads. Tolerance: the floating-point summation bound
//   |err| <= (k + 3) * eps32 * (|alpha| * sum_p |a||b| + |beta * c| + |bias|)
// (Higham, "Accuracy and Stability of Numerical Algorithms", 2002, section 3.1), times 2.
#include "backends/cpu/x86/sgemm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "backends/cpu/thread_pool.h"

namespace tessera::cpu {
namespace {

struct Case {
  int64_t m, n, k;
  bool ta, tb;
  float alpha, beta;
  bool bias, relu;
  int64_t pad = 0;  // extra leading-dimension elements
  // The fused epilogue and weight pre-packing (sgemm_pack_a): row bias, an m x n addend and
  // an activation after everything else.
  bool pack_a = false, row_bias = false, addend = false;
  FusedActivation::Kind act = FusedActivation::Kind::kNone;
  bool pack_b = false;  // op(B) pre-packed by sgemm_pack_b
  // Scratch sized for a larger product (0: this one's own size), as a Conv sizes it for its
  // widest tile and runs a narrower last one.
  int64_t plan_m = 0, plan_n = 0, plan_k = 0;
};

double apply_act(FusedActivation::Kind k, double x) {
  using K = FusedActivation::Kind;
  switch (k) {
    case K::kNone: return x;
    case K::kRelu: return std::max(x, 0.0);
    case K::kLeakyRelu: return x >= 0 ? x : 0.1 * x;
    case K::kClip: return std::min(std::max(x, -0.5), 0.75);
    case K::kSigmoid: return 1.0 / (1.0 + std::exp(-x));
    case K::kHardSigmoid: return std::max(0.0, std::min(1.0, 0.2 * x + 0.5));
    case K::kHardSwish: return x * std::max(0.0, std::min(1.0, x / 6 + 0.5));
    case K::kTanh: return std::tanh(x);
    case K::kGelu: return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
  }
  return x;
}

FusedActivation make_act(FusedActivation::Kind k) {
  FusedActivation a;
  a.kind = k;
  if (k == FusedActivation::Kind::kLeakyRelu) a.alpha = 0.1f;
  if (k == FusedActivation::Kind::kClip) a.alpha = -0.5f, a.beta = 0.75f;
  if (k == FusedActivation::Kind::kHardSigmoid) a.alpha = 0.2f, a.beta = 0.5f;
  return a;
}

std::vector<SgemmIsa> available_isas() {
  std::vector<SgemmIsa> v;
  for (SgemmIsa isa : {SgemmIsa::kAvx512, SgemmIsa::kAvx2, SgemmIsa::kNeon, SgemmIsa::kGeneric})
    if (sgemm_isa_available(isa)) v.push_back(isa);
  return v;
}

// Runs one case on one path; returns the number of elements out of bound (reported).
// `out`, when given, receives C after the product (to compare runs bit for bit).
void check(const Case& cs, SgemmIsa isa, ThreadPool* pool, int threads, uint32_t seed,
           std::vector<float>* out = nullptr) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  const int64_t a_rows = cs.ta ? cs.k : cs.m, a_cols = cs.ta ? cs.m : cs.k;
  const int64_t b_rows = cs.tb ? cs.n : cs.k, b_cols = cs.tb ? cs.k : cs.n;
  const int64_t lda = a_cols + cs.pad, ldb = b_cols + cs.pad, ldc = cs.n + cs.pad;
  std::vector<float> a(static_cast<size_t>(std::max<int64_t>(a_rows * lda, 1))), b(static_cast<size_t>(std::max<int64_t>(b_rows * ldb, 1)));
  std::vector<float> c(static_cast<size_t>(std::max<int64_t>(cs.m * ldc, 1))), bias(static_cast<size_t>(std::max<int64_t>(cs.n, 1)));
  for (float& x : a) x = dist(rng);
  for (float& x : b) x = dist(rng);
  for (float& x : bias) x = dist(rng);
  for (float& x : c) x = cs.beta == 0.f ? std::numeric_limits<float>::quiet_NaN() : dist(rng);  // beta 0: C unread
  const std::vector<float> c0 = c;
  std::vector<float> row_bias(static_cast<size_t>(std::max<int64_t>(cs.m, 1))), addend(static_cast<size_t>(std::max<int64_t>(cs.m * ldc, 1)));
  for (float& x : row_bias) x = dist(rng);
  for (float& x : addend) x = dist(rng);
  std::vector<float> packed_store;
  float* packed = nullptr;
  if (cs.pack_a) {
    packed_store.assign(sgemm_packed_a_floats(cs.m, cs.k, isa) + 16, 0.f);
    packed = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(packed_store.data()) + 63) / 64 * 64);
    sgemm_pack_a(a.data(), lda, cs.ta, cs.m, cs.k, isa, packed);
  }
  std::vector<float> packed_b_store;
  float* packed_b = nullptr;
  if (cs.pack_b) {
    packed_b_store.assign(sgemm_packed_b_floats(cs.n, cs.k, isa) + 16, 0.f);
    packed_b = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(packed_b_store.data()) + 63) / 64 * 64);
    sgemm_pack_b(b.data(), ldb, cs.tb, cs.k, cs.n, isa, packed_b);
  }

  SgemmArgs g;
  g.m = cs.m; g.n = cs.n; g.k = cs.k;
  g.a = a.data(); g.lda = lda; g.trans_a = cs.ta;
  g.b = b.data(); g.ldb = ldb; g.trans_b = cs.tb;
  g.c = c.data(); g.ldc = ldc;
  g.alpha = cs.alpha; g.beta = cs.beta;
  g.bias = cs.bias ? bias.data() : nullptr;
  g.relu = cs.relu;
  g.isa = isa;
  g.packed_a = packed;
  g.packed_b = packed_b;
  if (cs.row_bias) g.row_bias = row_bias.data();
  if (cs.addend) {
    g.addend = addend.data();
    g.ld_addend = ldc;
  }
  g.act = make_act(cs.act);
  // A pre-packed B: the smaller scratch without B blocks (the guard below checks it holds).
  const size_t bytes = sgemm_scratch_bytes(std::max(cs.m, cs.plan_m), std::max(cs.n, cs.plan_n), std::max(cs.k, cs.plan_k),
                                           threads, isa, packed_b != nullptr);
  std::vector<uint8_t> scratch_store(bytes + 64 + 256, 0xEE);
  uint8_t* scratch = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(scratch_store.data()) + 63) / 64 * 64);
  // Guard bytes after the scratch: the GEMM must stay within what it asked for.
  std::fill(scratch + bytes, scratch + bytes + 128, uint8_t{0xA5});
  sgemm(g, scratch, pool, threads);
  for (size_t i = 0; i < 128; ++i) ASSERT_EQ(scratch[bytes + i], 0xA5) << "wrote past its scratch";
  if (out) *out = c;

  const double eps = std::numeric_limits<float>::epsilon();
  int bad = 0;
  for (int64_t i = 0; i < cs.m; ++i) {
    for (int64_t j = 0; j < cs.n; ++j) {
      double acc = 0, mag = 0;
      for (int64_t p = 0; p < cs.k; ++p) {
        const double av = cs.ta ? a[p * lda + i] : a[i * lda + p];
        const double bv = cs.tb ? b[j * ldb + p] : b[p * ldb + j];
        acc += av * bv;
        mag += std::fabs(av * bv);
      }
      double want = cs.alpha * acc, scale = std::fabs(cs.alpha) * mag;
      if (cs.beta != 0.f) { want += cs.beta * c0[i * ldc + j]; scale += std::fabs(cs.beta * c0[i * ldc + j]); }
      if (cs.bias) { want += bias[j]; scale += std::fabs(bias[j]); }
      if (cs.row_bias) { want += row_bias[i]; scale += std::fabs(row_bias[i]); }
      if (cs.addend) { want += addend[i * ldc + j]; scale += std::fabs(addend[i * ldc + j]); }
      if (cs.relu) want = std::max(want, 0.0);
      want = apply_act(cs.act, want);
      // Sigmoid, Tanh and Gelu are evaluated by the SIMD elementwise math on x86 (within
      // 2.3, 1.3 and 5 ulp of exact: x86_elementwise_test.cc): 8 ulp of the result more.
      using AK = FusedActivation::Kind;
      const bool approx = cs.act == AK::kSigmoid || cs.act == AK::kTanh || cs.act == AK::kGelu;
      const double tol = 2.0 * (static_cast<double>(cs.k) + 3) * eps * scale + 1e-30 +
                         (approx ? 8 * eps * std::fabs(want) + 1e-8 : 0.0);
      const double got = c[i * ldc + j];
      if (!(std::fabs(got - want) <= tol) && ++bad <= 3)
        ADD_FAILURE() << sgemm_isa_name(isa) << " threads=" << threads << " m=" << cs.m << " n=" << cs.n << " k=" << cs.k
                      << " ta=" << cs.ta << " tb=" << cs.tb << " beta=" << cs.beta << " bias=" << cs.bias
                      << " relu=" << cs.relu << " pack_a=" << cs.pack_a << " act=" << static_cast<int>(cs.act) << " at (" << i << "," << j << "): got " << got << " want " << want
                      << " tol " << tol;
    }
    // Padding columns of C are never written.
    for (int64_t j = cs.n; j < ldc; ++j) {
      const float before = c0[i * ldc + j], after = c[i * ldc + j];
      EXPECT_TRUE(std::memcmp(&before, &after, sizeof(float)) == 0) << "wrote C padding at (" << i << "," << j << ")";
    }
  }
}

std::vector<Case> shapes() {
  std::vector<Case> v;
  const int64_t dims[][3] = {{1, 1, 1},   {1, 1, 7},    {1, 33, 17},  {5, 1, 9},    {17, 33, 65}, {14, 32, 256},
                             {15, 33, 257}, {28, 64, 3}, {6, 16, 1},   {7, 17, 300}, {100, 3, 50}, {3, 100, 50},
                             {64, 64, 64}, {129, 70, 513}, {337, 40, 20}, {20, 2049, 5}, {1, 300, 600}, {300, 1, 600},
                             // NEON's 8 x 12 tile, its edges, and past its MC (128) and NC (1536)
                             {8, 12, 1}, {16, 24, 256}, {9, 25, 257}, {130, 1550, 7},
                             // One MC block up to 5/4 of MC (x86: 150 rows), two past it
                             {150, 40, 400}, {151, 40, 400}, {264, 20, 30}};
  for (auto& d : dims)
    for (int t = 0; t < 4; ++t)
      v.push_back({d[0], d[1], d[2], (t & 1) != 0, (t & 2) != 0, 1.f, 0.f, false, false});
  // Epilogue variants on odd sizes.
  for (auto& d : {std::array<int64_t, 3>{17, 33, 65}, std::array<int64_t, 3>{29, 45, 300}}) {
    v.push_back({d[0], d[1], d[2], false, false, 1.f, 1.f, false, false});
    v.push_back({d[0], d[1], d[2], false, true, 0.5f, 1.f, true, false});
    v.push_back({d[0], d[1], d[2], true, false, -2.f, 0.25f, true, true});
    v.push_back({d[0], d[1], d[2], false, false, 1.f, 0.f, true, true});
    v.push_back({d[0], d[1], d[2], true, true, 1.5f, 1.f, false, true, 3});
  }
  // Pre-packed A and the fused epilogue (row bias, addend, every activation).
  using K = FusedActivation::Kind;
  const K acts[] = {K::kNone,        K::kRelu,      K::kLeakyRelu, K::kClip, K::kSigmoid,
                    K::kHardSigmoid, K::kHardSwish, K::kTanh,      K::kGelu};
  int i = 0;
  for (auto& d : {std::array<int64_t, 3>{17, 33, 65}, std::array<int64_t, 3>{29, 45, 300}, std::array<int64_t, 3>{64, 49, 600},
                  std::array<int64_t, 3>{1, 1, 1}, std::array<int64_t, 3>{350, 70, 20},
                  // More than one MC block on AVX2, and KC block on the generic path, more than
                  // one NC block on AVX-512: Sigmoid, Tanh and Gelu run on each finished
                  // block (sgemm.cc).
                  std::array<int64_t, 3>{170, 530, 400}}) {
    for (K act : acts) {
      Case c{d[0], d[1], d[2], (i & 4) != 0, (i & 8) != 0, 1.f, 0.f, (i & 1) != 0, false, i % 3};
      c.pack_a = (i & 2) == 0;
      c.row_bias = i % 3 != 1;
      c.addend = i % 2 == 0;
      c.act = act;
      v.push_back(c);
      ++i;
    }
  }
  // Few rows (the small-M path, m <= 4): B row-major, transposed (the tiled path) or
  // pre-packed, A transposed or not, every epilogue term, K past one KC block.
  int s = 0;
  for (auto& d : {std::array<int64_t, 3>{1, 1000, 520}, std::array<int64_t, 3>{2, 45, 300}, std::array<int64_t, 3>{3, 70, 20},
                  std::array<int64_t, 3>{4, 33, 600}, std::array<int64_t, 3>{1, 15, 7}, std::array<int64_t, 3>{2, 16, 1}}) {
    for (int t = 0; t < 6; ++t) {
      Case c{d[0], d[1], d[2], (t & 1) != 0, t == 2 || t == 3, t % 2 ? 0.5f : 1.f, t >= 4 ? 1.f : 0.f, t != 1, false, s % 2};
      c.pack_b = t >= 4 || t == 3;
      c.row_bias = (t & 1) == 0;
      c.addend = t >= 3;
      c.act = acts[s % 9];
      v.push_back(c);
      ++s;
    }
  }
  // Past the AVX-512 path's blocks, KC 1024, MC 336 and NC 512 (and NEON's): a second KC
  // pass with each epilogue term, pre-packed A and B, A and B transposed (the AVX-512
  // panel packer's 16 x 16 transposes and its tails).
  int b = 0;
  for (auto& d : {std::array<int64_t, 3>{29, 45, 1030}, std::array<int64_t, 3>{15, 530, 1025},
                  std::array<int64_t, 3>{340, 33, 1100}}) {
    for (int t = 0; t < 4; ++t) {
      Case c{d[0], d[1], d[2], (t & 1) != 0, (t & 2) != 0, 1.f, t % 2 ? 0.5f : 0.f, t != 1, false, t % 2};
      c.pack_a = t == 1 || t == 2;
      c.pack_b = t >= 2;
      c.row_bias = t % 2 == 0;
      c.addend = t != 2;
      c.act = acts[b % 9];
      v.push_back(c);
      ++b;
    }
  }
  v.push_back({8, 9, 0, false, false, 1.f, 0.5f, true, true});  // k = 0: C = relu(beta C + bias)
  {
    Case c{8, 9, 0, false, false, 1.f, 0.5f, true, false};
    c.row_bias = c.addend = true;
    c.act = K::kHardSwish;
    v.push_back(c);
  }
  v.push_back({0, 9, 4, false, false, 1.f, 0.f, false, false});
  v.push_back({9, 0, 4, false, false, 1.f, 0.f, false, false});
  return v;
}

TEST(Sgemm, AvailablePaths) {
  // On x86-64 with AVX-512 (the development machine) all three x86 paths must be exercised;
  // on aarch64 NEON and generic.
  EXPECT_TRUE(sgemm_isa_available(SgemmIsa::kGeneric));
  EXPECT_TRUE(sgemm_isa_available(sgemm_best_isa()));
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f")) {
    EXPECT_EQ(sgemm_best_isa(), SgemmIsa::kAvx512);
  }
#endif
#if defined(__aarch64__)
  // AdvSIMD is part of ARMv8-A: NEON must be there and chosen.
  EXPECT_TRUE(sgemm_isa_available(SgemmIsa::kNeon));
  EXPECT_EQ(sgemm_best_isa(), SgemmIsa::kNeon);
#else
  EXPECT_FALSE(sgemm_isa_available(SgemmIsa::kNeon));
#endif
  for (SgemmIsa isa : available_isas()) std::printf("[ path ] %s\n", sgemm_isa_name(isa));
}

TEST(Sgemm, ManyShapesEveryPathOneThread) {
  uint32_t seed = 1;
  for (SgemmIsa isa : available_isas())
    for (const Case& cs : shapes()) check(cs, isa, nullptr, 1, seed++);
}

TEST(Sgemm, ManyShapesEveryPathThreads) {
  ThreadPool pool(3);
  uint32_t seed = 1000;
  for (SgemmIsa isa : available_isas())
    for (const Case& cs : shapes()) check(cs, isa, &pool, 3, seed++);
}

TEST(Sgemm, Large512EveryPath) {
  ThreadPool pool(2);
  uint32_t seed = 77;
  for (SgemmIsa isa : available_isas()) {
    check({512, 512, 512, false, false, 1.f, 0.f, false, false}, isa, &pool, 2, seed++);
    check({512, 512, 512, true, true, 1.f, 1.f, true, true}, isa, nullptr, 1, seed++);
  }
}

TEST(Sgemm, ScratchForALargerProductHoldsASmallerOne) {
  // Sized for 100 x 128 (cut by columns on 2 threads), run at 100 x 97 (cut by rows): found
  // by a fuzzer as memory corruption in a 1x1 Conv on a 15 x 15 input at 2 threads. Every
  // smaller shape below must stay within the scratch (check's guard bytes) and be right.
  ThreadPool pool(2), pool3(3);
  for (SgemmIsa isa : available_isas()) {
    uint32_t seed = 300;
    for (const auto& d : {std::array<int64_t, 3>{100, 97, 256}, std::array<int64_t, 3>{100, 33, 256},
                          std::array<int64_t, 3>{7, 128, 256}, std::array<int64_t, 3>{3, 128, 256},
                          std::array<int64_t, 3>{100, 128, 17}, std::array<int64_t, 3>{1, 1, 1}}) {
      Case c{d[0], d[1], d[2], false, false, 1.f, 0.f, true, false};
      c.plan_m = 100, c.plan_n = 128, c.plan_k = 256;
      check(c, isa, &pool, 2, seed++);
      check(c, isa, &pool3, 3, seed++);
      check(c, isa, nullptr, 2, seed++);
    }
    // Sized for 300 rows (MC blocks of 120 on x86), run at 264 and 140 rows (one block of
    // up to 150 per part: the scratch must hold it).
    for (const auto& d : {std::array<int64_t, 3>{264, 20, 400}, std::array<int64_t, 3>{140, 64, 400}}) {
      Case c{d[0], d[1], d[2], false, false, 1.f, 0.f, true, false};
      c.plan_m = 300, c.plan_n = 64, c.plan_k = 400;
      check(c, isa, &pool, 2, seed++);
      check(c, isa, &pool3, 3, seed++);
      check(c, isa, nullptr, 2, seed++);
    }
  }
}

// Each case on every ISA path at 1 thread, then on 2 and 3 threads and on 2 threads of a
// pool of 3 (max_threads below the pool's): each run right against the reference and within
// its scratch (check), and every multi-thread C bit-identical to the 1-thread one.
void expect_threads_bit_identical(const std::vector<Case>& cases, uint32_t first_seed) {
  ThreadPool pool(2), pool3(3);
  struct Run {
    ThreadPool* pool;
    int threads;
    const char* what;
  };
  const Run runs[] = {{&pool, 2, "2 threads"}, {&pool3, 3, "3 threads"}, {&pool3, 2, "2 of 3 threads"}};
  for (SgemmIsa isa : available_isas()) {
    uint32_t seed = first_seed;
    for (const Case& c : cases) {
      std::vector<float> one, many;
      check(c, isa, nullptr, 1, seed, &one);
      for (const Run& r : runs) {
        check(c, isa, r.pool, r.threads, seed, &many);
        ASSERT_EQ(one.size(), many.size());
        EXPECT_EQ(std::memcmp(one.data(), many.data(), one.size() * sizeof(float)), 0)
            << sgemm_isa_name(isa) << " m=" << c.m << " n=" << c.n << " k=" << c.k << ": " << r.what
            << " differ from 1";
      }
      ++seed;
    }
  }
}

// Cut by columns on 2 or 3 threads with an A that is pre-packed or small enough to pack
// once for all threads: sgemm's claimed-columns path (A packed by the threads together, then
// chunks of NR panels claimed at run time).
TEST(Sgemm, ClaimedColumnsMatchOneThreadBitForBit) {
  using K = FusedActivation::Kind;
  std::vector<Case> cases = {
      {128, 768, 384, false, false, 1.f, 0.f, true, false},   // BERT's products, B packed per call
      {128, 768, 3072, false, false, 1.f, 0.f, true, false},  // 3 KC blocks (AVX2, AVX-512), pre-packed B
      {37, 1000, 900, true, false, 0.5f, 1.f, false, true},   // A transposed, beta 1, Relu
      {100, 530, 700, false, true, 1.f, 0.f, true, false},    // B transposed, pre-packed A
      {6, 300, 64, false, false, 1.f, 0.f, false, false},     // one MR panel
  };
  cases[1].pack_b = true;
  cases[1].act = K::kGelu;  // applied per finished block
  cases[1].addend = true;
  cases[2].pad = 3;
  cases[3].pack_a = true;
  cases[3].row_bias = true;
  cases[4].plan_m = 64, cases[4].plan_n = 512, cases[4].plan_k = 128;  // scratch for a larger product
  expect_threads_bit_identical(cases, 500);
}

// The small-M path (m <= 4) cut over threads. Its parts are cut at whole 16-column vectors:
// cut at the portable path's 8-column panels, a part's last 8 columns went through the
// scalar tail and differed in the last bits (found by a review: m = 2, n = 786, k = 3,696,
// A transposed).
TEST(Sgemm, SmallMMatchesOneThreadBitForBit) {
  std::vector<Case> cases = {
      {2, 786, 3696, true, false, 1.f, 0.f, false, false},
      {3, 520, 2000, false, false, 1.f, 0.f, true, false},
      {1, 1000, 1280, false, false, 1.f, 0.f, true, true},
      {4, 300, 4096, true, false, 0.5f, 1.f, false, false},
  };
  cases[2].pack_b = true;
  expect_threads_bit_identical(cases, 900);
}

TEST(Sgemm, FewerPoolThreadsThanPlanned) {
  // Scratch sized for 4 threads, run on a pool of 2 and without a pool.
  ThreadPool pool(2);
  for (SgemmIsa isa : available_isas()) {
    check({200, 300, 100, false, false, 1.f, 0.f, true, false}, isa, &pool, 4, 5);
    check({200, 300, 100, false, false, 1.f, 0.f, true, false}, isa, nullptr, 4, 6);
  }
}

}  // namespace
}  // namespace tessera::cpu
