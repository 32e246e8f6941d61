#include "train/data_parallel.h"

#include <algorithm>
#include <cmath>
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

std::vector<std::vector<size_t>> reverse_buckets(const std::vector<int64_t>& elements, int64_t cap) {
  std::vector<std::vector<size_t>> out;
  int64_t filled = 0;
  for (size_t k = elements.size(); k-- > 0;) {
    if (out.empty() || (filled > 0 && filled + elements[k] > cap)) { out.emplace_back(); filled = 0; }
    out.back().push_back(k);
    filled += elements[k];
  }
  return out;
}

Result<std::unique_ptr<GradientBuckets>> GradientBuckets::create(Communicator& comm, const std::vector<Shape>& shapes,
                                                                 int64_t bucket_bytes) {
  if (bucket_bytes < 4) return invalid_argument("gradient bucket size must be at least 4 bytes, got " + std::to_string(bucket_bytes));
  std::unique_ptr<GradientBuckets> g(new GradientBuckets(comm));
  g->shapes_ = shapes;
  std::vector<int64_t> numel;
  for (const Shape& s : shapes) {
    int64_t n = 1;
    for (int64_t d : s) n *= d;
    numel.push_back(n);
    g->total_elements_ += n;
  }
  for (std::vector<size_t>& ps : reverse_buckets(numel, bucket_bytes / 4)) {
    g->buckets_.emplace_back();
    for (size_t k : ps) g->buckets_.back().elements += numel[k];
    g->buckets_.back().params = std::move(ps);
  }
  g->bucket_of_.resize(shapes.size());
  g->offset_of_.resize(shapes.size());
  for (size_t b = 0; b < g->buckets_.size(); ++b) {
    Bucket& bk = g->buckets_[b];
    bk.buf.resize(static_cast<size_t>(bk.elements));
    int64_t off = 0;
    for (size_t k : bk.params) {
      g->bucket_of_[k] = b;
      g->offset_of_[k] = off;
      int64_t n = 1;
      for (int64_t d : shapes[k]) n *= d;
      off += n;
    }
  }
  g->added_.assign(shapes.size(), false);
  return g;
}

Status GradientBuckets::all_reduce(std::vector<Tensor>& grads, double weight) {
  begin(weight);
  Status s = finish(grads);
  started_early_ = 0;
  return s;
}

void GradientBuckets::begin(double weight) {
  weight_ = static_cast<float>(weight);
  std::fill(added_.begin(), added_.end(), false);
  for (Bucket& b : buckets_) b.filled = 0;
  pending_.clear();
  next_ = 0;
  started_early_ = 0;
  error_ = Status::ok();
}

void GradientBuckets::add(size_t i, const Tensor& grad) {
  if (!error_.is_ok() || i >= shapes_.size() || added_[i]) return;
  if (grad.dtype() != DType::kFloat32 || grad.shape() != shapes_[i]) {
    error_ = invalid_argument("gradient all-reduce: gradient " + std::to_string(i) + " is " + grad.describe() +
                              ", expected float32 " + shape_to_string(shapes_[i]));
    return;
  }
  Bucket& b = buckets_[bucket_of_[i]];
  float* dst = b.buf.data() + offset_of_[i];
  const float* src = grad.data_as<float>();
  for (int64_t k = 0; k < grad.numel(); ++k) dst[k] = src[k] * weight_;
  added_[i] = true;
  ++b.filled;
  const size_t before = next_;
  start_ready();
  started_early_ += next_ - before;
}

void GradientBuckets::start_ready() {
  while (error_.is_ok() && next_ < buckets_.size() && buckets_[next_].filled == buckets_[next_].params.size()) {
    Bucket& b = buckets_[next_];
    auto r = comm_.all_reduce_async(b.buf.data(), b.buf.data(), b.elements, DType::kFloat32, ReduceOp::kSum);
    if (!r.is_ok()) { error_ = r.status(); return; }
    pending_.push_back(std::move(*r));
    ++next_;
  }
}

Status GradientBuckets::finish(std::vector<Tensor>& grads) {
  if (grads.size() != shapes_.size() && error_.is_ok())
    error_ = invalid_argument("gradient all-reduce: " + std::to_string(grads.size()) + " gradients, expected " +
                              std::to_string(shapes_.size()));
  const size_t early = started_early_;
  for (size_t i = 0; i < grads.size() && error_.is_ok(); ++i) add(i, grads[i]);
  started_early_ = early;
  // Wait for every started operation (their buffers must outlive them), even after an error.
  Status first = error_;
  for (auto& r : pending_) {
    Status s = r->wait();
    if (first.is_ok() && !s.is_ok()) first = s;
  }
  pending_.clear();
  TSR_RETURN_IF_ERROR(first);
  if (next_ != buckets_.size()) return internal_error("gradient all-reduce: not every bucket started");
  for (size_t i = 0; i < grads.size(); ++i)
    std::memcpy(grads[i].data_as<float>(), buckets_[bucket_of_[i]].buf.data() + offset_of_[i], static_cast<size_t>(grads[i].numel()) * 4);
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

Result<std::unique_ptr<ZeroStage1>> ZeroStage1::create(Communicator& comm, Communicator& ctrl, const std::vector<Param>& params,
                                                       const OptimizerConfig& opt) {
  std::unique_ptr<ZeroStage1> z(new ZeroStage1(comm, ctrl));
  z->opt_ = opt;
  for (const Param& p : params) {
    if (p.value.dtype() != DType::kFloat32) return invalid_argument("ZeRO: parameter '" + p.name + "' is not float32");
    z->param_offset_.push_back(z->total_);
    z->total_ += p.value.numel();
  }
  const int n = comm.size(), r = comm.rank();
  z->chunk_ = (z->total_ + n - 1) / n;
  z->flat_.assign(static_cast<size_t>(z->chunk_) * n, 0.0f);
  z->mine_.assign(static_cast<size_t>(z->chunk_), 0.0f);
  const int64_t s0 = r * z->chunk_, s1 = std::min(z->total_, s0 + z->chunk_);
  for (size_t i = 0; i < params.size(); ++i) {
    const int64_t a = std::max(s0, z->param_offset_[i]), b = std::min(s1, z->param_offset_[i] + params[i].value.numel());
    if (a >= b) continue;
    Piece pc{i, a - z->param_offset_[i], b - a, a - s0};
    Param sp;
    sp.name = params[i].name;
    TSR_ASSIGN_OR_RETURN(sp.value, Tensor::allocate(DType::kFloat32, {pc.length}));
    for (const auto& [name, st] : params[i].state) {  // resume: this shard's slice of the state
      if (st.numel() != params[i].value.numel() || st.dtype() != DType::kFloat32)
        return invalid_argument("ZeRO: optimizer state '" + params[i].name + "/" + name + "' does not match the parameter");
      TSR_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(DType::kFloat32, {pc.length}));
      std::memcpy(t.data_as<float>(), st.data_as<float>() + pc.offset, static_cast<size_t>(pc.length) * 4);
      sp.state.push_back({name, std::move(t)});
    }
    z->pieces_.push_back(pc);
    z->shard_.push_back(std::move(sp));
  }
  return z;
}

Status ZeroStage1::step(const std::vector<Tensor>& grads, double weight, std::vector<Param>& params, double lr, int64_t step,
                        double clip_norm) {
  if (grads.size() != params.size() || params.size() != param_offset_.size())
    return invalid_argument("ZeRO: " + std::to_string(grads.size()) + " gradients, " + std::to_string(params.size()) +
                            " parameters, expected " + std::to_string(param_offset_.size()));
  for (size_t i = 0; i < grads.size(); ++i)
    if (grads[i].dtype() != DType::kFloat32 || grads[i].shape() != params[i].value.shape())
      return invalid_argument("ZeRO: gradient " + grads[i].describe() + " does not match parameter '" + params[i].name + "' " +
                              params[i].value.describe());
  // Pack the weighted gradients (zero padding), reduce-scatter: mine_ = summed gradient of
  // this rank's shard.
  const float w = static_cast<float>(weight);
  std::fill(flat_.begin(), flat_.end(), 0.0f);
  for (size_t i = 0; i < grads.size(); ++i) {
    const float* g = grads[i].data_as<float>();
    float* d = flat_.data() + param_offset_[i];
    for (int64_t k = 0; k < grads[i].numel(); ++k) d[k] = g[k] * w;
  }
  {
    TSR_ASSIGN_OR_RETURN(auto rq, comm_.reduce_scatter_async(flat_.data(), mine_.data(), chunk_, DType::kFloat32, ReduceOp::kSum));
    TSR_RETURN_IF_ERROR(rq->wait());
  }
  if (clip_norm > 0) {  // clip_grad_global_norm over the shards: sum of squares summed over ranks
    double ss = 0;
    for (float v : mine_) ss += static_cast<double>(v) * v;  // the padding is zero
    TSR_RETURN_IF_ERROR(ctrl_.all_reduce(&ss, &ss, 1, DType::kFloat64, ReduceOp::kSum));
    const double norm = std::sqrt(ss);
    if (norm > clip_norm) {
      const double sc = clip_norm / (norm + 1e-6);
      for (float& v : mine_) v = static_cast<float>(v * sc);
    }
  }
  // The optimizer on this shard: each piece a 1-D parameter with its own state.
  std::vector<Tensor> piece_grads;
  for (size_t k = 0; k < pieces_.size(); ++k) {
    const Piece& pc = pieces_[k];
    std::memcpy(shard_[k].value.data_as<float>(), params[pc.param].value.data_as<float>() + pc.offset, static_cast<size_t>(pc.length) * 4);
    TSR_ASSIGN_OR_RETURN(Tensor g, Tensor::allocate(DType::kFloat32, {pc.length}));
    std::memcpy(g.data_as<float>(), mine_.data() + pc.shard_offset, static_cast<size_t>(pc.length) * 4);
    piece_grads.push_back(std::move(g));
  }
  TSR_RETURN_IF_ERROR(optimizer_step(opt_, shard_, piece_grads, lr, step));
  // All-gather the updated shards into every rank's parameters.
  std::fill(mine_.begin(), mine_.end(), 0.0f);
  for (size_t k = 0; k < pieces_.size(); ++k)
    std::memcpy(mine_.data() + pieces_[k].shard_offset, shard_[k].value.data_as<float>(), static_cast<size_t>(pieces_[k].length) * 4);
  {
    TSR_ASSIGN_OR_RETURN(auto rq, comm_.all_gather_async(mine_.data(), flat_.data(), chunk_, DType::kFloat32));
    TSR_RETURN_IF_ERROR(rq->wait());
  }
  for (size_t i = 0; i < params.size(); ++i)
    std::memcpy(params[i].value.data_as<float>(), flat_.data() + param_offset_[i], static_cast<size_t>(params[i].value.numel()) * 4);
  return Status::ok();
}

Status ZeroStage1::gather_state(std::vector<Param>& params) {
  std::vector<std::string> names;
  if (opt_.kind == "adamw") names = {"exp_avg", "exp_avg_sq"};
  else if (opt_.momentum > 0) names = {"momentum_buffer"};
  std::vector<float> mine(static_cast<size_t>(chunk_)), all(static_cast<size_t>(chunk_) * comm_.size());
  for (const std::string& name : names) {
    // Ranks whose shard has not stepped yet (no state) contribute zeros; every rank takes part.
    std::fill(mine.begin(), mine.end(), 0.0f);
    bool have = false;
    for (size_t k = 0; k < pieces_.size(); ++k)
      for (const auto& [sn, st] : shard_[k].state)
        if (sn == name) {
          std::memcpy(mine.data() + pieces_[k].shard_offset, st.data_as<float>(), static_cast<size_t>(pieces_[k].length) * 4);
          have = true;
        }
    double any = have ? 1 : 0;
    TSR_RETURN_IF_ERROR(ctrl_.all_reduce(&any, &any, 1, DType::kFloat64, ReduceOp::kMax));
    TSR_RETURN_IF_ERROR(ctrl_.all_gather(mine.data(), all.data(), chunk_, DType::kFloat32));
    if (any == 0) continue;  // before the first step: no state yet, as in single-process training
    for (size_t i = 0; i < params.size(); ++i) {
      Tensor* dst = nullptr;
      for (auto& [sn, st] : params[i].state)
        if (sn == name) dst = &st;
      if (!dst) {
        TSR_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(DType::kFloat32, params[i].value.shape()));
        params[i].state.push_back({name, std::move(t)});
        dst = &params[i].state.back().second;
      }
      std::memcpy(dst->data_as<float>(), all.data() + param_offset_[i], static_cast<size_t>(params[i].value.numel()) * 4);
    }
  }
  return Status::ok();
}

}  // namespace tessera::train
