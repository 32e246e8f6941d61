#include "backends/cpu/thread_pool.h"

#include <chrono>
#include <fstream>
#include <set>
#include <string>
#include <utility>

namespace tessera {

namespace {
// Set on pool workers and on a caller while it runs a job: a nested parallel_for runs inline.
thread_local bool t_in_parallel = false;

// How long a caller polls for the workers to finish before sleeping.
constexpr auto kSpin = std::chrono::microseconds(200);

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Polls `ready` for up to kSpin; true as soon as it holds.
template <typename Pred>
bool spin_until(Pred ready) {
  const auto deadline = std::chrono::steady_clock::now() + kSpin;
  for (int i = 0;; ++i) {
    if (ready()) return true;
    cpu_relax();
    if ((i & 63) == 63 && std::chrono::steady_clock::now() >= deadline) return ready();
  }
}

// Chunk c of `chunks` over [0, n): sizes differ by at most one.
inline int64_t chunk_begin(int64_t n, int chunks, int c) { return n / chunks * c + std::min<int64_t>(c, n % chunks); }
}  // namespace

int physical_core_count() {
  std::set<std::pair<int, int>> cores;
  for (int cpu = 0;; ++cpu) {
    const std::string dir = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
    std::ifstream core(dir + "core_id"), pkg(dir + "physical_package_id");
    int c = -1, p = -1;
    if (!(core >> c)) break;
    if (!(pkg >> p)) p = 0;
    cores.insert({p, c});
  }
  int n = static_cast<int>(cores.size());
  if (n == 0) n = static_cast<int>(std::thread::hardware_concurrency());
  return n > 0 ? n : 1;
}

ThreadPool::ThreadPool(int threads) {
  num_threads_ = threads == 0 ? physical_core_count() : (threads < 1 ? 1 : threads);
  workers_.reserve(static_cast<size_t>(num_threads_ - 1));
  for (int i = 1; i < num_threads_; ++i) workers_.emplace_back([this, i] { worker(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_.store(true);
  }
  start_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::worker(int index) {
  t_in_parallel = true;
  uint64_t seen = 0;
  auto news = [&] { return stop_.load(std::memory_order_acquire) || generation_.load(std::memory_order_acquire) != seen; };
  for (;;) {
    // Poll a while for the next job before sleeping, as onnxruntime's workers spin: a
    // model's parallel ops follow each other within microseconds, and waking a sleeping
    // worker (a futex) costs tens of them. The poll only reads the atomics.
    spin_until(news);
    // The job's fields and its generation are read together under mu_ (a worker that a
    // job did not need may look late, while the caller already writes the next job).
    std::unique_lock<std::mutex> lock(mu_);
    start_cv_.wait(lock, news);
    if (stop_.load(std::memory_order_acquire)) return;
    seen = generation_.load(std::memory_order_acquire);
    if (index >= chunks_) continue;  // this job has fewer chunks than threads
    const Call call = call_;
    void* fn = fn_;
    const int64_t n = n_;
    const int chunks = chunks_;
    lock.unlock();
    call(fn, chunk_begin(n, chunks, index), chunk_begin(n, chunks, index + 1));
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      // The last one: wake the caller if it sleeps (taking mu_ orders this after its
      // check of pending_).
      std::lock_guard<std::mutex> wake(mu_);
      done_cv_.notify_one();
    }
  }
}

void ThreadPool::run(int64_t n, Call call, void* fn) {
  if (n <= 0) return;
  const int chunks = static_cast<int>(std::min<int64_t>(n, num_threads_));
  std::unique_lock<std::mutex> run_lock(run_mu_, std::defer_lock);
  if (chunks <= 1 || t_in_parallel || !run_lock.try_lock()) {
    call(fn, 0, n);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    call_ = call;
    fn_ = fn;
    n_ = n;
    chunks_ = chunks;
    pending_.store(chunks - 1, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
  }
  start_cv_.notify_all();
  t_in_parallel = true;
  call(fn, 0, chunk_begin(n, chunks, 1));
  t_in_parallel = false;
  auto done = [&] { return pending_.load(std::memory_order_acquire) == 0; };
  if (spin_until(done)) return;
  std::unique_lock<std::mutex> lock(mu_);
  done_cv_.wait(lock, done);
}

}  // namespace tessera
