#include "backends/cpu/thread_pool.h"

#include <fstream>
#include <set>
#include <string>
#include <utility>

namespace tessera {

namespace {
// Set on pool workers and on a caller while it runs a job: a nested parallel_for runs inline.
thread_local bool t_in_parallel = false;

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
    stop_ = true;
  }
  start_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::worker(int index) {
  t_in_parallel = true;
  uint64_t seen = 0;
  for (;;) {
    std::unique_lock<std::mutex> lock(mu_);
    start_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
    if (stop_) return;
    seen = generation_;
    if (index >= chunks_) continue;  // this job has fewer chunks than threads
    const Call call = call_;
    void* fn = fn_;
    const int64_t n = n_;
    const int chunks = chunks_;
    lock.unlock();
    call(fn, chunk_begin(n, chunks, index), chunk_begin(n, chunks, index + 1));
    lock.lock();
    if (--pending_ == 0) done_cv_.notify_one();
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
    pending_ = chunks - 1;
    ++generation_;
  }
  start_cv_.notify_all();
  t_in_parallel = true;
  call(fn, 0, chunk_begin(n, chunks, 1));
  t_in_parallel = false;
  std::unique_lock<std::mutex> lock(mu_);
  done_cv_.wait(lock, [&] { return pending_ == 0; });
}

}  // namespace tessera
