#include "train/data_parallel.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace tessera::train {

std::pair<int64_t, int64_t> split_rows(int64_t rows, int parts, int rank) {
  const int64_t base = rows / parts, extra = rows % parts;
  const int64_t first = rank * base + std::min<int64_t>(rank, extra);
  return {first, first + base + (rank < extra ? 1 : 0)};
}

uint64_t ring_all_reduce_bytes(int64_t count, size_t elem_bytes, int parts, int rank) {
  if (parts <= 1) return 0;
  auto chunk = [&](int r) {
    auto [a, b] = split_rows(count, parts, r);
    return static_cast<uint64_t>(b - a) * elem_bytes;
  };
  return 2 * static_cast<uint64_t>(count) * elem_bytes - chunk(rank) - chunk((rank + 1) % parts);
}

Result<std::unique_ptr<GradientBuckets>> GradientBuckets::create(Communicator& comm, const std::vector<Shape>& shapes,
                                                                 int64_t bucket_bytes) {
  if (bucket_bytes < 4) return invalid_argument("gradient bucket size must be at least 4 bytes, got " + std::to_string(bucket_bytes));
  std::unique_ptr<GradientBuckets> g(new GradientBuckets(comm));
  g->shapes_ = shapes;
  const int64_t cap = bucket_bytes / 4;
  for (size_t k = shapes.size(); k-- > 0;) {
    int64_t n = 1;
    for (int64_t d : shapes[k]) n *= d;
    if (g->buckets_.empty() || (g->buckets_.back().elements > 0 && g->buckets_.back().elements + n > cap))
      g->buckets_.emplace_back();
    g->buckets_.back().params.push_back(k);
    g->buckets_.back().elements += n;
    g->total_elements_ += n;
  }
  for (Bucket& b : g->buckets_) b.buf.resize(static_cast<size_t>(b.elements));
  return g;
}

Status GradientBuckets::all_reduce(std::vector<Tensor>& grads, double weight) {
  if (grads.size() != shapes_.size())
    return invalid_argument("gradient all-reduce: " + std::to_string(grads.size()) + " gradients, expected " +
                            std::to_string(shapes_.size()));
  for (size_t i = 0; i < grads.size(); ++i)
    if (grads[i].dtype() != DType::kFloat32 || grads[i].shape() != shapes_[i])
      return invalid_argument("gradient all-reduce: gradient " + std::to_string(i) + " is " + grads[i].describe() +
                              ", expected float32 " + shape_to_string(shapes_[i]));
  const float w = static_cast<float>(weight);
  std::vector<std::unique_ptr<CommRequest>> pending;
  Status first_error = Status::ok();
  for (Bucket& b : buckets_) {
    float* dst = b.buf.data();
    for (size_t k : b.params) {
      const float* src = grads[k].data_as<float>();
      const int64_t n = grads[k].numel();
      for (int64_t i = 0; i < n; ++i) dst[i] = src[i] * w;
      dst += n;
    }
    auto r = comm_.all_reduce_async(b.buf.data(), b.buf.data(), b.elements, DType::kFloat32, ReduceOp::kSum);
    if (!r.is_ok()) { first_error = r.status(); break; }
    pending.push_back(std::move(*r));
  }
  // Wait for every started operation (their buffers must outlive them), even after an error.
  for (auto& r : pending) {
    Status s = r->wait();
    if (first_error.is_ok() && !s.is_ok()) first_error = s;
  }
  TSR_RETURN_IF_ERROR(first_error);
  for (Bucket& b : buckets_) {
    const float* src = b.buf.data();
    for (size_t k : b.params) {
      const int64_t n = grads[k].numel();
      std::memcpy(grads[k].data_as<float>(), src, static_cast<size_t>(n) * 4);
      src += n;
    }
  }
  return Status::ok();
}

uint64_t GradientBuckets::ring_bytes_exact() const {
  uint64_t s = 0;
  for (const Bucket& b : buckets_) s += ring_all_reduce_bytes(b.elements, 4, comm_.size(), comm_.rank());
  return s;
}

double GradientBuckets::ring_bytes_formula() const {
  const int n = comm_.size();
  return 2.0 * (n - 1) / n * static_cast<double>(gradient_bytes());
}

}  // namespace tessera::train
