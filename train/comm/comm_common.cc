#include "train/comm/comm_common.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace tessera::train {

size_t comm_dtype_size(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return 4;
    case DType::kFloat64: return 8;
    case DType::kInt64: return 8;
    case DType::kInt32: return 4;
    case DType::kUInt8: return 1;
    default: return 0;
  }
}

namespace comm_internal {

namespace {

template <typename T>
void reduce_typed(T* acc, const T* in, int64_t n, ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kAvg:
      for (int64_t i = 0; i < n; ++i) acc[i] = static_cast<T>(acc[i] + in[i]);
      break;
    case ReduceOp::kProd:
      for (int64_t i = 0; i < n; ++i) acc[i] = static_cast<T>(acc[i] * in[i]);
      break;
    case ReduceOp::kMax:  // a NaN on any rank stays NaN (x != x only for NaN)
      for (int64_t i = 0; i < n; ++i)
        if (acc[i] == acc[i] && (in[i] != in[i] || in[i] > acc[i])) acc[i] = in[i];
      break;
    case ReduceOp::kMin:
      for (int64_t i = 0; i < n; ++i)
        if (acc[i] == acc[i] && (in[i] != in[i] || in[i] < acc[i])) acc[i] = in[i];
      break;
  }
}

}  // namespace

Status reduce_into(void* acc, const void* in, int64_t count, DType dtype, ReduceOp op) {
  switch (dtype) {
    case DType::kFloat32: reduce_typed(static_cast<float*>(acc), static_cast<const float*>(in), count, op); break;
    case DType::kFloat64: reduce_typed(static_cast<double*>(acc), static_cast<const double*>(in), count, op); break;
    case DType::kInt64: reduce_typed(static_cast<int64_t*>(acc), static_cast<const int64_t*>(in), count, op); break;
    case DType::kInt32: reduce_typed(static_cast<int32_t*>(acc), static_cast<const int32_t*>(in), count, op); break;
    case DType::kUInt8: reduce_typed(static_cast<uint8_t*>(acc), static_cast<const uint8_t*>(in), count, op); break;
    default: return invalid_argument(std::string("communicator: dtype ") + dtype_name(dtype) + " is not supported");
  }
  return Status::ok();
}

Status divide(void* buf, int64_t count, DType dtype, int n) {
  if (dtype == DType::kFloat32) {
    auto* p = static_cast<float*>(buf);
    for (int64_t i = 0; i < count; ++i) p[i] /= static_cast<float>(n);
  } else if (dtype == DType::kFloat64) {
    auto* p = static_cast<double*>(buf);
    for (int64_t i = 0; i < count; ++i) p[i] /= n;
  } else {
    return invalid_argument(std::string("communicator: an average of ") + dtype_name(dtype) +
                            " values is not defined (use kSum)");
  }
  return Status::ok();
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

std::vector<int64_t> chunk_offsets(int64_t count, int parts) {
  std::vector<int64_t> off(static_cast<size_t>(parts) + 1, 0);
  const int64_t base = count / parts, extra = count % parts;
  for (int p = 0; p < parts; ++p) off[p + 1] = off[p] + base + (p < extra ? 1 : 0);
  return off;
}

Status check_buffer(const void* p, int64_t count, DType dtype, const char* what) {
  if (count < 0) return invalid_argument(std::string("communicator: ") + what + ": negative count " + std::to_string(count));
  if (comm_dtype_size(dtype) == 0)
    return invalid_argument(std::string("communicator: ") + what + ": dtype " + dtype_name(dtype) +
                            " is not supported (float32, float64, int64, int32, uint8)");
  if (count > 0 && !p) return invalid_argument(std::string("communicator: ") + what + ": null buffer");
  return Status::ok();
}

Worker::Worker() : thread_([this] { loop(); }) {}

Worker::~Worker() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

std::shared_ptr<Worker::Task> Worker::submit(std::function<Status()> fn) {
  auto t = std::make_shared<Task>();
  t->fn = std::move(fn);
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(t);
  }
  cv_.notify_all();
  return t;
}

void Worker::loop() {
  for (;;) {
    std::shared_ptr<Task> t;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stop_ with nothing left
      t = queue_.front();
      queue_.pop_front();
    }
    Status s = t->fn();
    {
      std::lock_guard<std::mutex> lock(t->mu);
      t->status = std::move(s);
      t->done = true;
    }
    t->cv.notify_all();
  }
}

Status Worker::Task::wait() {
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return done; });
  return status;
}

}  // namespace comm_internal
}  // namespace tessera::train
