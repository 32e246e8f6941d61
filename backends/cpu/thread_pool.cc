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
  for (int i = 1; i < num_threads_; ++i) workers_.emplace_back([this] { worker(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_.store(true);
  }
  start_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::run_chunks(Job& job) {
  for (;;) {
    const int c = job.next.fetch_add(1, std::memory_order_relaxed);
    if (c >= job.chunks) return;
    job.call(job.fn, chunk_begin(job.n, job.chunks, c), chunk_begin(job.n, job.chunks, c + 1));
  }
}

void ThreadPool::worker() {
  t_in_parallel = true;
  uint64_t seen = 0;
  auto news = [&] { return stop_.load(std::memory_order_acquire) || generation_.load(std::memory_order_acquire) != seen; };
  for (;;) {
    // Poll a while for the next job before sleeping, as onnxruntime's workers spin: a
    // model's parallel ops follow each other within microseconds, and waking a sleeping
    // worker (a futex) costs tens of them. The poll only reads the atomics.
    spin_until(news);
    std::unique_lock<std::mutex> lock(mu_);
    start_cv_.wait(lock, news);
    if (stop_.load(std::memory_order_acquire)) return;
    seen = generation_.load(std::memory_order_acquire);
    Job* job = job_;
    if (!job) continue;  // closed: the caller and faster workers took every chunk
    job->active.fetch_add(1, std::memory_order_relaxed);
    lock.unlock();
    run_chunks(*job);
    // Leaving: the last worker out wakes the caller if it sleeps (taking mu_ orders this
    // after its check of `active`). The caller's Job outlives this: it waits for active 0.
    if (job->active.fetch_sub(1, std::memory_order_acq_rel) == 1) {
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
  Job job;
  job.call = call;
  job.fn = fn;
  job.n = n;
  job.chunks = chunks;
  {
    std::lock_guard<std::mutex> lock(mu_);
    job_ = &job;
    generation_.fetch_add(1, std::memory_order_release);
  }
  start_cv_.notify_all();
  t_in_parallel = true;
  run_chunks(job);
  t_in_parallel = false;
  // Every chunk is claimed: close the job, so that no worker joins it any more, then wait
  // for those inside to finish theirs.
  {
    std::lock_guard<std::mutex> lock(mu_);
    job_ = nullptr;
  }
  auto done = [&] { return job.active.load(std::memory_order_acquire) == 0; };
  if (spin_until(done)) return;
  std::unique_lock<std::mutex> lock(mu_);
  done_cv_.wait(lock, done);
}

}  // namespace tessera
