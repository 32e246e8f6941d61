// The x86 Transpose (backends/cpu/x86/transpose_x86.cc; NEON 4 x 4 blocks on aarch64) against the reference
// (ref/transpose.cc): bit-exact, for every ISA path this CPU has and the scalar path, one and
// two threads, over 2-D shapes around the tile sizes (1, 7, 8, 15, 16, 17, 31, 32, 33, ...),
// batched and general permutations (NCHW <-> NHWC, BERT's [B, S, H, D] -> [B, H, S, D] and
// [B, H, D, S]), size-1 dims, the identity, and element sizes 1, 2, 4 and 8 bytes; plus a
// 2-D transpose large enough to take the non-temporal-store path (on AVX2 staged through the
// kernel's scratch, and without scratch directly).
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "backends/cpu/thread_pool.h"
#include "backends/cpu/x86/transpose_x86.h"
#include "backends/cpu/x86/x86_kernels.h"
#include "x86_test_util.h"

namespace tessera {
namespace {

using namespace testing;
using V = std::vector<int64_t>;

template <typename T>
Tensor random_of(const Shape& shape, std::mt19937& rng) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<T> v(static_cast<size_t>(n));
  for (T& x : v) x = static_cast<T>(rng());
  return make_tensor<T>(shape, v);
}

void check(const Tensor& x, const V& perm, ThreadPool* pool, int threads, const std::string& what) {
  OpSpec spec{"Transpose", {}, 13};
  if (!perm.empty()) spec.attrs.push_back(attr_ints("perm", perm));
  auto want = run_op(spec, {&x});
  ASSERT_TRUE(want.is_ok()) << what << ": " << want.status().to_string();
  auto got = run_op_with(&x86::make_Transpose, spec, {&x}, {}, pool, threads);
  ASSERT_TRUE(got.is_ok()) << what << ": " << got.status().to_string();
  const Tensor& g = got.value()[0];
  const Tensor& w = want.value()[0];
  ASSERT_EQ(g.shape(), w.shape()) << what;
  EXPECT_EQ(std::memcmp(g.data(), w.data(), w.nbytes()), 0) << what;
}

struct Case {
  Shape x;
  V perm;
};

std::vector<Case> cases() {
  std::vector<Case> c;
  for (int64_t r : {1, 7, 8, 15, 16, 17, 31, 32, 33, 65})
    for (int64_t k : {1, 8, 16, 17, 33, 100}) c.push_back({{r, k}, {1, 0}});
  c.push_back({{300, 1100}, {}});  // default perm: reversed; several 256 x 256 blocks
  c.push_back({{2, 3, 4, 5}, {0, 2, 3, 1}});     // NCHW -> NHWC
  c.push_back({{2, 35, 9, 7}, {0, 3, 1, 2}});    // NHWC -> NCHW
  c.push_back({{1, 3, 224, 224}, {0, 2, 3, 1}});  // few rows: edges only
  c.push_back({{2, 128, 12, 64}, {0, 2, 1, 3}});  // [B, S, H, D] -> [B, H, S, D]: runs of D
  c.push_back({{2, 128, 12, 64}, {0, 2, 3, 1}});  // -> [B, H, D, S]
  c.push_back({{3, 4, 5, 6, 7}, {4, 2, 0, 3, 1}});
  c.push_back({{3, 4, 5, 6, 7}, {1, 0, 2, 3, 4}});
  c.push_back({{5, 1, 7, 1}, {3, 2, 1, 0}});
  c.push_back({{4, 5, 6}, {0, 1, 2}});  // identity
  c.push_back({{1, 1, 1}, {2, 0, 1}});
  c.push_back({{17}, {0}});
  c.push_back({{2, 0, 3}, {2, 1, 0}});  // empty
  return c;
}

TEST(TransposeX86, MatchesReference) {
  ThreadPool pool(2);
  std::mt19937 rng(31);
  std::vector<x86::Isa> isas = available_isas();
  isas.push_back(x86::Isa::kScalar);
  for (x86::Isa isa : isas) {
    IsaScope scope(isa);
    for (const Case& c : cases()) {
      for (int bytes : {1, 2, 4, 8}) {
        if (bytes != 4 && c.x.size() == 2 && c.x[0] % 16 != 1) continue;  // keep the run short
        Tensor x = bytes == 1 ? random_of<uint8_t>(c.x, rng)
                   : bytes == 2 ? random_of<int16_t>(c.x, rng)
                   : bytes == 4 ? random_of<float>(c.x, rng)
                                : random_of<int64_t>(c.x, rng);
        for (int threads : {1, 2}) {
          check(x, c.perm, threads > 1 ? &pool : nullptr, threads,
                std::string(x86::isa_name(isa)) + " " + shape_to_string(c.x) + " bytes " + std::to_string(bytes) +
                    " threads " + std::to_string(threads));
        }
      }
    }
  }
}

TEST(TransposeX86, StreamingStoresLargeMatrix) {
  // 4 Ki x 1 Ki floats (16 MiB, >= kStreamBytes): the non-temporal path, aligned output rows
  // (and, on a misaligned view of the output, the peeled head rows). The Transpose kernel
  // gives AVX2 its staged path (scratch); run_transpose without scratch, the direct one.
#if defined(__aarch64__)
  GTEST_SKIP() << "non-temporal stores are an x86 path; the NEON block stores normally";
#endif
  ThreadPool pool(2);
  std::mt19937 rng(32);
  for (x86::Isa isa : available_isas()) {
    IsaScope scope(isa);
    const x86::TransposePlan p = x86::plan_transpose({4096, 1024}, {1, 0}, 4);
    EXPECT_TRUE(p.stream);
    const size_t stage = x86::transpose_scratch_bytes(p, 2);
    EXPECT_EQ(stage, isa == x86::Isa::kAvx2 ? 2 * x86::kStageBytes : 0) << x86::isa_name(isa);
    Tensor x = random_of<float>({4096, 1024}, rng);
    check(x, {1, 0}, &pool, 2, std::string(x86::isa_name(isa)) + " 4096x1024 streaming");
    Tensor y = random_of<float>({1023, 4097}, rng);  // unaligned rows: streaming only where aligned
    check(y, {1, 0}, &pool, 2, std::string(x86::isa_name(isa)) + " 1023x4097 streaming");
    // dst 4 bytes past a line: run_transpose directly on offset buffers, without and with
    // the stage scratch (a 4097-row output: the staged rows' unaligned heads and tails).
    std::vector<float> src(4097 * 1024 + 16), dst(4097 * 1024 + 32);
    std::vector<float> scratch(stage / sizeof(float) + 16);
    float* st = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(scratch.data()) + 63) / 64 * 64);
    for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i);
    float* d = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(dst.data()) + 63) / 64 * 64) + 1;
    for (int64_t rows : {4096, 4097}) {
      const x86::TransposePlan q = x86::plan_transpose({rows, 1024}, {1, 0}, 4);
      for (bool staged : {false, true}) {
        std::fill(dst.begin(), dst.end(), -1.f);
        x86::run_transpose(q, src.data() + 3, d, &pool, 2, staged ? st : nullptr);
        int bad = 0;
        for (int64_t r = 0; r < rows && bad < 3; ++r)
          for (int64_t c = 0; c < 1024; ++c)
            if (d[c * rows + r] != src[static_cast<size_t>(3 + r * 1024 + c)] && ++bad <= 3)
              ADD_FAILURE() << x86::isa_name(isa) << " offset dst, " << rows << " rows, staged " << staged << ", at " << r
                            << ", " << c;
      }
    }
  }
}

TEST(TransposeX86, PlanCollapsesDims) {
  // NCHW -> NHWC is a batched 2-D transpose [N, C, HW] -> [N, HW, C].
  const x86::TransposePlan p = x86::plan_transpose({2, 3, 4, 5}, {0, 2, 3, 1}, 4);
  EXPECT_EQ(p.kind, x86::TransposePlan::Kind::kTile2d);
  ASSERT_EQ(p.rank, 3);
  EXPECT_EQ(p.dims[0], 2);
  EXPECT_EQ(p.dims[1], 20);
  EXPECT_EQ(p.dims[2], 3);
  const x86::TransposePlan q = x86::plan_transpose({2, 128, 12, 64}, {0, 2, 1, 3}, 4);
  EXPECT_EQ(q.kind, x86::TransposePlan::Kind::kRuns);
  const x86::TransposePlan r = x86::plan_transpose({4, 1, 6}, {1, 0, 2}, 4);
  EXPECT_EQ(r.kind, x86::TransposePlan::Kind::kCopy);
}

}  // namespace
}  // namespace tessera
