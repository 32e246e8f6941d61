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
// Chunks are claimed at run time, the caller first: when a worker is slow to start (a
// vCPU the host has not scheduled, a sleeping thread whose wake-up takes longer than the
// job), the caller runs its chunk too instead of waiting for it. With a static chunk per
// thread, a busy second CPU (a spinning process on it) held every op of MobileNetV2 at 2
// threads until the worker got its turn: 31 ms a run against 13 ms with claiming (9.5 at
// 1 thread), and Silero VAD at 2 threads went from 2.99 to 1.68 ms on this machine.
// Waiting: the caller, once no chunk is left to claim, closes the job (no worker joins it
// any more) and polls for the workers inside it to finish for up to 200 us (with the
// CPU's pause hint) before it sleeps on a condition variable. Workers poll for the next
// job for 200 us before they sleep (MobileNetV2 at 2 threads: 7.0-7.3 against 7.2-8.0 ms
// sleeping at once). Polling for 1 ms was tried and dropped: in bench/cpu_vs_onnxruntime
// (alternating with onnxruntime's own spinning pool) Silero VAD at 2 threads went from
// 1.57-1.75 to 3.07-3.45 ms in two alternated pairs (a polling vCPU takes host time the
// main thread needs), and MobileNetV2 did not gain (9.40 vs 9.35 ms).
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
  /// done. Ranges are claimed at run time: one thread may run several of them, one after
  /// the other (the caller takes those no worker has started), never two at once. n <= 0
  /// calls nothing. A call made from inside a parallel_for (nested), or while another
  /// thread's parallel_for holds the pool, runs fn(0, n) on the calling thread.
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
  void worker();

  int num_threads_ = 1;
  std::vector<std::thread> workers_;
  // One parallel_for: its chunks are claimed one at a time (next), by the caller and by
  // whichever workers join while it is open, so a worker that wakes late (a vCPU the host
  // has not scheduled yet) leaves its chunk to the caller instead of holding it up.
  struct Job {
    Call call;
    void* fn;
    int64_t n;
    int chunks;
    std::atomic<int> next{0};    // the next chunk to claim
    std::atomic<int> active{0};  // workers inside the job (joined under mu_, not yet left)
  };
  // Claims and runs chunks of `job` until none is left.
  static void run_chunks(Job& job);

  std::mutex run_mu_;                 // one parallel_for at a time
  std::mutex mu_;                     // guards job_ (publishing, joining, closing); the condition variables'
  std::condition_variable start_cv_, done_cv_;
  // A new job: job_ is set and generation_ advanced (release) under mu_; a worker that sees
  // a new generation joins the job under mu_ if job_ is still open (non-null).
  std::atomic<uint64_t> generation_{0};
  std::atomic<bool> stop_{false};
  Job* job_ = nullptr;
};

/// parallel_for on `pool`, or fn(0, n) on the calling thread when pool is null.
template <typename F>
void parallel_for(ThreadPool* pool, int64_t n, F&& fn) {
  if (n <= 0) return;
  if (pool) pool->parallel_for(n, fn);
  else fn(int64_t{0}, n);
}

}  // namespace tessera
