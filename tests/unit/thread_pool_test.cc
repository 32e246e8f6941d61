// ThreadPool: every index covered exactly once, ranges contiguous and balanced, threads
// reused across calls (no thread per call), nested calls run inline, null pool runs inline.
#include "backends/cpu/thread_pool.h"
#include "backends/cpu/x86/parallel_x86.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace tessera {
namespace {

TEST(ThreadPool, CoversEveryIndexOnce) {
  for (int threads : {1, 2, 3, 4, 7}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.num_threads(), threads);
    for (int64_t n : {0, 1, 2, 3, 5, 8, 100, 1001}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      std::atomic<int> calls{0};
      std::atomic<int64_t> min_len{n + 1}, max_len{0};
      pool.parallel_for(n, [&](int64_t b, int64_t e) {
        ASSERT_LE(0, b);
        ASSERT_LT(b, e);
        ASSERT_LE(e, n);
        for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)]++;
        ++calls;
        int64_t len = e - b, cur = min_len.load();
        while (len < cur && !min_len.compare_exchange_weak(cur, len)) {}
        cur = max_len.load();
        while (len > cur && !max_len.compare_exchange_weak(cur, len)) {}
      });
      for (int64_t i = 0; i < n; ++i) EXPECT_EQ(hits[static_cast<size_t>(i)].load(), 1) << "n=" << n << " i=" << i;
      EXPECT_EQ(calls.load(), static_cast<int>(std::min<int64_t>(n, threads))) << "n=" << n;
      if (n > 0) {
        EXPECT_LE(max_len.load() - min_len.load(), 1) << "chunks are balanced";
      }
    }
  }
}

TEST(ThreadPool, ZeroMeansPhysicalCores) {
  ThreadPool pool(0);
  EXPECT_EQ(pool.num_threads(), physical_core_count());
  EXPECT_GE(pool.num_threads(), 1);
}

TEST(ThreadPool, ThreadsPersistAcrossCalls) {
  ThreadPool pool(3);
  std::set<std::thread::id> ids;
  std::mutex mu;
  for (int rep = 0; rep < 200; ++rep) {
    pool.parallel_for(3, [&](int64_t, int64_t) {
      std::lock_guard<std::mutex> lock(mu);
      ids.insert(std::this_thread::get_id());
    });
  }
  // The caller plus at most 2 workers, whatever the number of calls.
  EXPECT_LE(ids.size(), 3u);
  EXPECT_TRUE(ids.count(std::this_thread::get_id()));
}

TEST(ThreadPool, UsesWorkersInParallel) {
  ThreadPool pool(2);
  std::atomic<int> arrived{0};
  std::atomic<bool> both{false};
  // Each chunk waits (bounded) until the other has started: only true parallel execution
  // sees both arrive.
  pool.parallel_for(2, [&](int64_t, int64_t) {
    ++arrived;
    for (int i = 0; i < 2000000 && arrived.load() < 2; ++i) std::this_thread::yield();
    if (arrived.load() == 2) both = true;
  });
  EXPECT_TRUE(both.load());
}

TEST(ThreadPool, NestedCallRunsInline) {
  ThreadPool pool(2);
  std::atomic<int> inner_calls{0}, inner_items{0};
  pool.parallel_for(2, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      pool.parallel_for(10, [&](int64_t ib, int64_t ie) {
        ++inner_calls;
        inner_items += static_cast<int>(ie - ib);
      });
  });
  EXPECT_EQ(inner_calls.load(), 2);  // one inline call per outer index
  EXPECT_EQ(inner_items.load(), 20);
}

TEST(ThreadPool, NullPoolRunsInline) {
  int calls = 0;
  int64_t seen_b = -1, seen_e = -1;
  parallel_for(nullptr, 17, [&](int64_t b, int64_t e) { ++calls; seen_b = b; seen_e = e; });
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(seen_b, 0);
  EXPECT_EQ(seen_e, 17);
  parallel_for(nullptr, 0, [&](int64_t, int64_t) { ++calls; });
  EXPECT_EQ(calls, 1);
}

// Chunks are claimed at run time (the caller takes those no worker has started): many
// short jobs back to back, some after a pause long enough for the workers to sleep, some
// with chunks of uneven length, each covering its indices exactly once (a worker that
// wakes after a job closed must neither run a chunk twice nor touch that job).
TEST(ThreadPool, ClaimedChunksCoverEachJobOnce) {
  for (int threads : {2, 3}) {
    ThreadPool pool(threads);
    uint32_t seed = 7;
    auto next = [&] { return seed = seed * 1664525u + 1013904223u; };
    for (int rep = 0; rep < 3000; ++rep) {
      const int64_t n = 1 + next() % 9;
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      std::atomic<int> calls{0};
      const uint32_t r = next();
      if (r % 97 == 0) std::this_thread::sleep_for(std::chrono::microseconds(400));  // workers fall asleep
      pool.parallel_for(n, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)]++;
        if (b == 0 && r % 5 == 0) std::this_thread::sleep_for(std::chrono::microseconds(50));
        ++calls;
      });
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << "rep " << rep << " n " << n << " i " << i;
      ASSERT_EQ(calls.load(), static_cast<int>(std::min<int64_t>(n, threads))) << "rep " << rep;
    }
  }
}

// x86::run_slots_claimed (the Winograd Conv's phases): every index in exactly one range of
// at most `chunk` (one range of all when one slot is used), slot numbers below the slots
// used and never in use by two threads at once (a slot owns per-thread scratch); on a null
// pool the chunks in order on slot 0.
TEST(ThreadPool, RunSlotsClaimedCoversEachIndexOncePerSlotScratch) {
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    for (int64_t n : {1, 2, 7, 36, 256}) {
      for (int64_t chunk : {1, 3, 8, 300}) {
        std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
        std::vector<std::atomic<int>> in_use(4);
        std::atomic<bool> overlap{false}, too_long{false}, bad_slot{false};
        std::atomic<int> calls{0};
        const int64_t slots_used = std::min<int64_t>(threads, (n + chunk - 1) / chunk);
        x86::run_slots_claimed(&pool, threads, n, chunk, [&](int64_t slot, int64_t b, int64_t e) {
          if (slot < 0 || slot >= slots_used) {
            bad_slot = true;
            return;
          }
          if (in_use[static_cast<size_t>(slot)]++ != 0) overlap = true;
          if ((slots_used > 1 && e - b > chunk) || e <= b) too_long = true;
          ++calls;
          for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)]++;
          std::this_thread::yield();
          in_use[static_cast<size_t>(slot)]--;
        });
        const std::string what = "threads " + std::to_string(threads) + " n " + std::to_string(n) + " chunk " +
                                 std::to_string(chunk);
        EXPECT_FALSE(bad_slot.load()) << what;
        EXPECT_FALSE(overlap.load()) << what;
        EXPECT_FALSE(too_long.load()) << what;
        if (slots_used == 1) EXPECT_EQ(calls.load(), 1) << what;
        else EXPECT_EQ(calls.load(), (n + chunk - 1) / chunk) << what;
        for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << what << " i " << i;
      }
    }
  }
  int calls = 0;
  x86::run_slots_claimed(nullptr, 1, 10, 3, [&](int64_t slot, int64_t b, int64_t e) {
    ++calls;
    EXPECT_EQ(slot, 0);
    EXPECT_EQ(b, 0);
    EXPECT_EQ(e, 10);
  });
  EXPECT_EQ(calls, 1);
  // A null pool with several slots: the chunks in order on the calling thread, slot 0.
  std::vector<std::pair<int64_t, int64_t>> ranges;
  x86::run_slots_claimed(nullptr, 3, 10, 3, [&](int64_t slot, int64_t b, int64_t e) {
    EXPECT_EQ(slot, 0);
    ranges.emplace_back(b, e);
  });
  const std::vector<std::pair<int64_t, int64_t>> expected = {{0, 3}, {3, 6}, {6, 9}, {9, 10}};
  EXPECT_EQ(ranges, expected);
}

TEST(ThreadPool, ConcurrentCallersBothFinish) {
  ThreadPool pool(2);
  std::atomic<int64_t> total{0};
  auto job = [&] {
    for (int rep = 0; rep < 100; ++rep)
      pool.parallel_for(64, [&](int64_t b, int64_t e) { total += e - b; });
  };
  std::thread other(job);
  job();
  other.join();
  EXPECT_EQ(total.load(), 2 * 100 * 64);
}

}  // namespace
}  // namespace tessera
