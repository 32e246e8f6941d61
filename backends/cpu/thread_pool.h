// The CPU thread pool shared by all kernels of a Session.
//
//   ThreadPool pool(0);                                  // one thread per physical core
//   pool.parallel_for(rows, [&](int64_t begin, int64_t end) {
//     for (int64_t r = begin; r < end; ++r) process(r);   // each index exactly once
//   });
//
// The pool is created once per Session (SessionOptions::threads) and its threads live as
// long as the Session, so a run creates no threads and allocates nothing. The calling
// thread takes part in the work: a pool of T threads starts T - 1 workers.
//
// Waiting: the caller, once its own chunk is done, polls for the workers to finish for up
// to 200 us (with the CPU's pause hint) before it sleeps on a condition variable: most
// jobs' chunks end within microseconds of each other, and a sleeping caller costs a
// wake-up. Workers sleep between jobs. Workers that polled for the next job too (200 us,
// as onnxruntime's pool spins) made 2-thread MobileNetV2 5-10% faster but Silero VAD, whose
// parallel kernels are separated by many small serial ones, 1.5-2x slower on this 2-vCPU
// virtual machine (a polling vCPU takes host time the main thread needs), so they do not.
// Tried again with 1 ms of polling: alone, a job of nothing went from 14-27 us to 0.6 us
// and one pass looked better, but in bench/cpu_vs_onnxruntime (alternating with
// onnxruntime's own spinning pool) Silero VAD at 2 threads went from 1.57-1.75 to
// 3.07-3.45 ms in two alternated pairs, and MobileNetV2 did not gain (9.40 vs 9.35 ms).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace tessera {

/// Physical cores of this machine (distinct (package, core) pairs in
/// /sys/devices/system/cpu/cpu*/topology), or std::thread::hardware_concurrency() when the
/// topology cannot be read; at least 1.
int physical_core_count();

class ThreadPool {
 public:
  /// A pool of `threads` threads, the caller included; 0 = physical_core_count(). Values
  /// below 0 are treated as 1 (Session checks the option and reports an error first).
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  /// Threads that run work, the caller included (>= 1).
  int num_threads() const { return num_threads_; }

  /// Calls fn(begin, end) on disjoint contiguous ranges that cover [0, n) exactly once,
  /// at most num_threads() of them, sizes differing by at most one; returns when all are
  /// done. n <= 0 calls nothing. A call made from inside a parallel_for (nested), or while
  /// another thread's parallel_for holds the pool, runs fn(0, n) on the calling thread.
  /// fn must not throw. Allocates nothing.
  template <typename F>
  void parallel_for(int64_t n, F&& fn) {
    using Fn = std::remove_reference_t<F>;
    run(n, [](void* f, int64_t b, int64_t e) { (*static_cast<Fn*>(f))(b, e); },
        const_cast<void*>(static_cast<const void*>(&fn)));
  }

 private:
  using Call = void (*)(void*, int64_t, int64_t);
  void run(int64_t n, Call call, void* fn);
  void worker(int index);

  int num_threads_ = 1;
  std::vector<std::thread> workers_;
  std::mutex run_mu_;                 // one parallel_for at a time
  std::mutex mu_;                     // held while a job is published; the condition variables'
  std::condition_variable start_cv_, done_cv_;
  // A new job: the fields below are written, then generation_ is advanced (release), under
  // mu_; a worker that sees the new generation (acquire) reads them.
  std::atomic<uint64_t> generation_{0};
  std::atomic<bool> stop_{false};
  std::atomic<int> pending_{0};       // workers still running the current job
  Call call_ = nullptr;
  void* fn_ = nullptr;
  int64_t n_ = 0;
  int chunks_ = 0;
};

/// parallel_for on `pool`, or fn(0, n) on the calling thread when pool is null.
template <typename F>
void parallel_for(ThreadPool* pool, int64_t n, F&& fn) {
  if (n <= 0) return;
  if (pool) pool->parallel_for(n, fn);
  else fn(int64_t{0}, n);
}

}  // namespace tessera
