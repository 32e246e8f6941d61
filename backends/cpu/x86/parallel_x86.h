// Splitting a kernel's work over the Session's thread pool with per-thread scratch slots.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "backends/cpu/thread_pool.h"

namespace tessera::x86 {

/// Threads worth using for `work` units of about one element each (a thread per 32 Ki
/// units, so small tensors stay on the calling thread), at most `threads`, at least 1.
inline int threads_for(int64_t work, int threads) {
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(threads, work / (32 * 1024))));
}

/// Cuts [0, n) into `slots` contiguous ranges (sizes differing by at most one) and calls
/// f(slot, begin, end) once per non-empty range, on the pool's threads (pool may be null:
/// all on the calling thread). Each slot runs on one thread, so `slot` indexes per-thread
/// scratch sized for `slots` threads at plan time.
template <typename F>
void run_slots(ThreadPool* pool, int slots, int64_t n, F&& f) {
  if (n <= 0) return;
  const int64_t s = std::max<int64_t>(1, std::min<int64_t>(slots, n));
  if (s == 1) {
    f(int64_t{0}, int64_t{0}, n);
    return;
  }
  parallel_for(pool, s, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) f(i, n * i / s, n * (i + 1) / s);
  });
}

/// As run_slots, but the indices are claimed at run time, `chunk` at a time in order, by
/// one slot per thread (an atomic counter): f(slot, begin, end) runs on each claimed range
/// [begin, end), several per slot. A thread whose core is slowed (a cloud host's busy
/// sibling hyperthread) takes fewer chunks instead of holding up the op with an equal
/// share. When only one slot is used (slots 1, or n <= chunk) f runs once on [0, n), slot
/// 0; with a null pool the chunks run in order on the calling thread, all on slot 0. Which
/// thread computes an index does not change its result.
template <typename F>
void run_slots_claimed(ThreadPool* pool, int slots, int64_t n, int64_t chunk, F&& f) {
  if (n <= 0) return;
  chunk = std::max<int64_t>(1, chunk);
  const int64_t s = std::max<int64_t>(1, std::min<int64_t>(slots, (n + chunk - 1) / chunk));
  if (s == 1) {
    f(int64_t{0}, int64_t{0}, n);
    return;
  }
  std::atomic<int64_t> next{0};
  parallel_for(pool, s, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      for (int64_t c0 = next.fetch_add(chunk, std::memory_order_relaxed); c0 < n;
           c0 = next.fetch_add(chunk, std::memory_order_relaxed))
        f(i, c0, std::min(n, c0 + chunk));
  });
}

}  // namespace tessera::x86
