// Pieces shared by the communicators (not a public header): element-wise reduction of
// buffers, the split of a buffer into near-equal ring chunks, and the per-communicator
// worker that runs operations in the order they were started.
#pragma once

#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "train/comm/comm.h"

namespace tessera::train::comm_internal {

/// acc[i] = op(acc[i], in[i]) for i < count (kAvg sums: the caller divides once at the end).
/// Errors: kInvalidArgument for a dtype the communicators do not take.
Status reduce_into(void* acc, const void* in, int64_t count, DType dtype, ReduceOp op);
/// buf[i] /= n for float dtypes (the last step of kAvg). Errors: kInvalidArgument for
/// integer dtypes (an average of integers is not an integer).
Status divide(void* buf, int64_t count, DType dtype, int n);

/// Element offsets of the `parts` near-equal chunks of `count` elements (the first count %
/// parts chunks one element longer); offsets has parts + 1 entries.
std::vector<int64_t> chunk_offsets(int64_t count, int parts);

/// A timeout in seconds as text: "%g" ("60", "0.5", "1e-06"), so that a sub-second
/// timeout does not print as "0 s".
std::string seconds_text(double s);

/// Checks a buffer argument: non-null unless count is 0, count >= 0, a taken dtype.
Status check_buffer(const void* p, int64_t count, DType dtype, const char* what);

/// Runs tasks one at a time, in the order they were queued, on a thread of its own.
class Worker {
 public:
  Worker();
  ~Worker();  // runs what is queued, then stops
  /// A queued task: done() after it ran, with its status.
  struct Task {
    std::function<Status()> fn;
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    Status status;
    Status wait();
  };
  std::shared_ptr<Task> submit(std::function<Status()> fn);

 private:
  void loop();
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Task>> queue_;
  bool stop_ = false;
  std::thread thread_;
};

/// A CommRequest waiting for a Worker task.
class TaskRequest final : public CommRequest {
 public:
  explicit TaskRequest(std::shared_ptr<Worker::Task> t) : task_(std::move(t)) {}
  Status wait() override { return task_->wait(); }

 private:
  std::shared_ptr<Worker::Task> task_;
};

}  // namespace tessera::train::comm_internal
