// gemm_peak: how close the packed SGEMM runs to this core's arithmetic peak.
//
//   gemm_peak [--runs N] [--max-size S] [--threads T]
//
// 1. Peak: a register-only loop of independent FMAs (24 accumulators, more than latency x
//    ports = 4 x 2 needs), AVX-512 when the CPU has it, else AVX2; one thread.
//    GFLOP/s = 2 * lanes * FMAs / seconds.
// 2. SGEMM C = A B (row-major, beta 0) for M = N = K = 64 ... 2048, one thread (no pool), the
//    median of --runs timings (each timing repeats the product until >= 50 ms); GFLOP/s =
//    2 M N K / seconds and its percentage of the peak. The percentage is the median, over the
//    timings, of each timing's rate divided by a peak loop (~10 ms) run just before it, so that
//    a neighbour on a shared host, or a clock change, moves both sides of each ratio alike.
//    With --threads T > 1, a second column runs the same products on a pool of T threads.
// 3. Transpose: the CPU backend's Transpose kernel (x86::run_transpose: in-register tiles,
//    non-temporal stores at this size) on a 4096 x 4096 float matrix (64 MiB), against memcpy
//    of the same bytes between the same 64-byte aligned, already faulted-in buffers, alternated, median of
//    max(--runs, 5) after a warm-up; GB/s counts bytes read + written; the percentage is the
//    median of the per-pair ratios. The plain blocked loop
//    (64 x 64 tiles) this replaced is printed too. With --threads T > 1, a second line runs
//    the kernel on T threads against memcpy split into T parallel chunks.
// Timings on a shared machine are noisy: medians are printed.
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/thread_pool.h"
#include "backends/cpu/x86/parallel_x86.h"
#include "backends/cpu/x86/sgemm.h"
#include "backends/cpu/x86/transpose_x86.h"

using namespace tessera;

namespace {

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

__attribute__((target("avx512f,fma"))) double fma_loop_avx512(int64_t iters) {
  __m512 acc[24];
  for (int i = 0; i < 24; ++i) acc[i] = _mm512_set1_ps(static_cast<float>(i) * 1e-3f);
  const __m512 x = _mm512_set1_ps(0.999999f), y = _mm512_set1_ps(1e-7f);
  for (int64_t it = 0; it < iters; ++it) {
#pragma GCC unroll 24
    for (int i = 0; i < 24; ++i) acc[i] = _mm512_fmadd_ps(acc[i], x, y);
  }
  __m512 s = acc[0];
  for (int i = 1; i < 24; ++i) s = _mm512_add_ps(s, acc[i]);
  float out[16];
  _mm512_storeu_ps(out, s);
  return out[0] + out[15];
}

__attribute__((target("avx2,fma"))) double fma_loop_avx2(int64_t iters) {
  __m256 acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = _mm256_set1_ps(static_cast<float>(i) * 1e-3f);
  const __m256 x = _mm256_set1_ps(0.999999f), y = _mm256_set1_ps(1e-7f);
  for (int64_t it = 0; it < iters; ++it) {
#pragma GCC unroll 12
    for (int i = 0; i < 12; ++i) acc[i] = _mm256_fmadd_ps(acc[i], x, y);
  }
  float out[8];
  __m256 s = acc[0];
  for (int i = 1; i < 12; ++i) s = _mm256_add_ps(s, acc[i]);
  _mm256_storeu_ps(out, s);
  return out[0] + out[7];
}

// One timing of the register-only loop: single-thread GFLOP/s (0 without AVX2+FMA).
// `iters` = 2'000'000 takes ~10 ms at 150 GFLOP/s.
double peak_once(int64_t iters) {
  const bool avx512 = __builtin_cpu_supports("avx512f");
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (!avx512 && !avx2) return 0;
  const double flops = avx512 ? 2.0 * 16 * 24 * static_cast<double>(iters) : 2.0 * 8 * 12 * static_cast<double>(iters);
  static volatile double sink = 0;
  const double t0 = now_s();
  sink = sink + (avx512 ? fma_loop_avx512(iters) : fma_loop_avx2(iters));
  return flops / (now_s() - t0) / 1e9;
}

// Peak single-thread GFLOP/s (median of 5), and the ISA it used.
std::pair<double, const char*> measure_peak() {
  const bool avx512 = __builtin_cpu_supports("avx512f");
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (!avx512 && !avx2) return {0, "none"};
  std::vector<double> r;
  for (int rep = 0; rep < 5; ++rep) r.push_back(peak_once(20'000'000));
  return {median(r), avx512 ? "AVX-512" : "AVX2"};
}

// Blocked transpose: dst (cols x rows) = src (rows x cols)^T, 64 x 64 tiles so both the
// rows read and the columns written stay in L1.
void transpose_blocked(const float* src, float* dst, int64_t rows, int64_t cols) {
  constexpr int64_t kT = 64;
  for (int64_t i0 = 0; i0 < rows; i0 += kT)
    for (int64_t j0 = 0; j0 < cols; j0 += kT) {
      const int64_t i1 = std::min(rows, i0 + kT), j1 = std::min(cols, j0 + kT);
      for (int64_t j = j0; j < j1; ++j)
        for (int64_t i = i0; i < i1; ++i) dst[j * rows + i] = src[i * cols + j];
    }
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 5, max_size = 2048, threads = 1;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&](int lo, int hi) {
      if (i + 1 >= argc) { std::fprintf(stderr, "gemm_peak: %s needs a value\n", a.c_str()); std::exit(2); }
      char* end = nullptr;
      long v = std::strtol(argv[++i], &end, 10);
      if (*end || v < lo || v > hi) {
        std::fprintf(stderr, "gemm_peak: %s must be an integer in [%d, %d]\n", a.c_str(), lo, hi);
        std::exit(2);
      }
      return static_cast<int>(v);
    };
    if (a == "--runs") runs = next(1, 1000);
    else if (a == "--max-size") max_size = next(64, 8192);
    else if (a == "--threads") threads = next(1, 1024);
    else {
      std::fprintf(stderr, "usage: gemm_peak [--runs N] [--max-size S] [--threads T]\n");
      return 2;
    }
  }

  const auto [peak, isa] = measure_peak();
  std::printf("peak FMA (%s, 1 thread, register-only): %.1f GFLOP/s\n", isa, peak);
  std::printf("sgemm path: %s\n", cpu::sgemm_isa_name(cpu::sgemm_best_isa()));
  std::unique_ptr<ThreadPool> pool;
  if (threads > 1) pool = std::make_unique<ThreadPool>(threads);
  std::printf("%6s %12s %8s", "M=N=K", "GFLOP/s 1T", "% peak");
  if (pool) std::printf(" %12s %8s", ("GFLOP/s " + std::to_string(threads) + "T").c_str(), "speedup");
  std::printf("\n");

  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (int64_t s = 64; s <= max_size; s *= 2) {
    std::vector<float> a(static_cast<size_t>(s * s)), b(a.size()), c(a.size());
    for (float& x : a) x = dist(rng);
    for (float& x : b) x = dist(rng);
    cpu::SgemmArgs g;
    g.m = g.n = g.k = s;
    g.a = a.data(); g.lda = s;
    g.b = b.data(); g.ldb = s;
    g.c = c.data(); g.ldc = s;
    const int max_t = pool ? threads : 1;
    const size_t bytes = cpu::sgemm_scratch_bytes(s, s, s, max_t);
    void* scratch = std::aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
    const double flops = 2.0 * static_cast<double>(s) * static_cast<double>(s) * static_cast<double>(s);
    // Median GFLOP/s over --runs timings, and the median of each timing's rate over a peak
    // loop timed just before it (0 when there is no peak loop).
    auto time_with = [&](ThreadPool* p, int t) {
      cpu::sgemm(g, scratch, p, t);  // warm-up
      std::vector<double> r, ratio;
      for (int rep = 0; rep < runs; ++rep) {
        const double pk = peak_once(2'000'000);
        int reps = 0;
        const double t0 = now_s();
        double t1 = t0;
        do {
          cpu::sgemm(g, scratch, p, t);
          ++reps;
          t1 = now_s();
        } while (t1 - t0 < 0.05);
        r.push_back(flops * reps / (t1 - t0) / 1e9);
        ratio.push_back(pk > 0 ? r.back() / pk : 0.0);
      }
      return std::make_pair(median(r), median(ratio));
    };
    const auto [one, one_frac] = time_with(nullptr, 1);
    std::printf("%6lld %12.1f %7.1f%%", static_cast<long long>(s), one, 100.0 * one_frac);
    if (pool) {
      const double many = time_with(pool.get(), threads).first;
      std::printf(" %12.1f %7.2fx", many, many / one);
    }
    std::printf("\n");
    std::fflush(stdout);
    std::free(scratch);
  }

  // Transpose vs memcpy, 4096 x 4096 floats.
  const int64_t rows = 4096, cols = 4096;
  const size_t n = static_cast<size_t>(rows * cols);
  // 64-byte aligned, as the runtime's arena gives tensors; zero-filled so that every page is
  // faulted in before timing (for memcpy and the kernel alike).
  auto alloc = [&] {
    return std::unique_ptr<float[], void (*)(float*)>(static_cast<float*>(std::aligned_alloc(64, n * sizeof(float))),
                                                       [](float* p) { std::free(p); });
  };
  auto src = alloc(), dst = alloc();
  for (size_t i = 0; i < n; ++i) src[i] = static_cast<float>(i), dst[i] = 0.f;
  const double bytes = 2.0 * static_cast<double>(n * sizeof(float));  // read + write
  const x86::TransposePlan plan = x86::plan_transpose({rows, cols}, {1, 0}, 4);
  auto timed = [&](auto&& fn) {
    const double t0 = now_s();
    fn();
    return bytes / (now_s() - t0) / 1e9;
  };
  auto report = [&](const char* what, int t, ThreadPool* p) {
    auto copy = [&] {
      x86::run_slots(p, t, static_cast<int64_t>(n), [&](int64_t, int64_t b, int64_t e) {
        std::memcpy(dst.get() + b, src.get() + b, static_cast<size_t>(e - b) * sizeof(float));
      });
    };
    // The scratch the runtime's Transpose kernel declares (its staged path on AVX2).
    const size_t scratch_bytes = x86::transpose_scratch_bytes(plan, t);
    std::unique_ptr<void, void (*)(void*)> scratch(scratch_bytes ? std::aligned_alloc(64, scratch_bytes) : nullptr,
                                                  [](void* q) { std::free(q); });
    auto kernel = [&] { x86::run_transpose(plan, src.get(), dst.get(), p, t, scratch.get()); };
    copy();
    kernel();  // warm-up
    std::vector<double> tr, mc, bl, ratio;
    for (int rep = 0; rep < std::max(runs, 5); ++rep) {
      mc.push_back(timed(copy));
      tr.push_back(timed(kernel));
      ratio.push_back(tr.back() / mc.back());
      if (t == 1) bl.push_back(timed([&] { transpose_blocked(src.get(), dst.get(), rows, cols); }));
    }
    std::fill(dst.get(), dst.get() + n, -1.f);
    kernel();
    int64_t wrong = 0;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) wrong += dst[static_cast<size_t>(c * rows + r)] != src[static_cast<size_t>(r * cols + c)];
    if (wrong) std::printf("transpose check failed: %lld of %zu elements wrong\n", static_cast<long long>(wrong), n);
    const double t_gbs = median(tr), m_gbs = median(mc);
    std::printf("Transpose 4096x4096 float, %s (%s%s): %.1f GB/s, memcpy %.1f GB/s, %.1f%% of memcpy\n", what,
                x86::isa_name(plan.isa), !plan.stream ? "" : scratch_bytes ? ", staged, streaming stores" : ", streaming stores", t_gbs, m_gbs, 100.0 * median(ratio));
    if (t == 1)
      std::printf("  (plain blocked 64x64 loop: %.1f GB/s, %.1f%% of memcpy)\n", median(bl), 100.0 * median(bl) / m_gbs);
  };
  report("1 thread", 1, nullptr);
  if (pool) report((std::to_string(threads) + " threads").c_str(), threads, pool.get());
  return 0;
}
