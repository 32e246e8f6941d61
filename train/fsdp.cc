#include "train/fsdp.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "train/data_parallel.h"

namespace tessera::train {

namespace {
int64_t numel_of_shape(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}
}  // namespace

int64_t ShardedDataParallel::row_size(size_t i) const {
  const Shape& s = shapes_[i];
  if (s.empty()) return 1;
  int64_t n = 1;
  for (size_t d = 1; d < s.size(); ++d) n *= s[d];
  return n;
}

int64_t ShardedDataParallel::rows_of(size_t i, int r) const {
  if (shapes_[i].empty()) return r == 0 ? 1 : 0;
  auto [a, b] = split_rows(shapes_[i][0], comm_.size(), r);
  return b - a;
}

uint64_t ShardedDataParallel::gather_bytes(size_t i) const {
  return static_cast<uint64_t>(comm_.size() - 1) * static_cast<uint64_t>(rows_of(i, 0) * row_size(i)) * 4;
}

Result<std::unique_ptr<ShardedDataParallel>> ShardedDataParallel::create(Communicator& comm, Communicator& ctrl,
                                                                         std::vector<Param>& params, const OptimizerConfig& opt,
                                                                         int stage, int64_t bucket_bytes) {
  if (stage != 2 && stage != 3) return invalid_argument("ZeRO stage " + std::to_string(stage) + ": ShardedDataParallel does stages 2 and 3");
  if (bucket_bytes < 4) return invalid_argument("gradient bucket size must be at least 4 bytes, got " + std::to_string(bucket_bytes));
  std::unique_ptr<ShardedDataParallel> z(new ShardedDataParallel(comm, ctrl));
  z->opt_ = opt;
  z->stage_ = stage;
  const int n = comm.size(), me = comm.rank();
  for (const Param& p : params) {
    if (p.value.dtype() != DType::kFloat32) return invalid_argument("ZeRO: parameter '" + p.name + "' is not float32");
    z->shapes_.push_back(p.value.shape());
    z->names_.push_back(p.name);
    z->total_ += p.value.numel();
  }
  z->layout_ = dim0_layout(z->shapes_, n);
  std::vector<int64_t> numel;
  for (const Param& p : params) numel.push_back(p.value.numel());
  for (std::vector<size_t>& ps : reverse_buckets(numel, bucket_bytes / 4)) {
    z->buckets_.emplace_back();
    z->buckets_.back().params = std::move(ps);
  }
  z->bucket_of_.resize(params.size());
  z->offset_of_.assign(params.size(), std::vector<int64_t>(static_cast<size_t>(n), 0));
  for (size_t b = 0; b < z->buckets_.size(); ++b) {
    Bucket& bk = z->buckets_[b];
    std::vector<int64_t> off(static_cast<size_t>(n), 0);
    for (size_t k : bk.params) {
      z->bucket_of_[k] = b;
      for (int r = 0; r < n; ++r) {
        z->offset_of_[k][r] = off[r];
        off[r] += z->rows_of(k, r) * z->row_size(k);
      }
    }
    bk.chunk = off[0];  // rank 0 has the most rows of every parameter
    bk.mine.assign(static_cast<size_t>(bk.chunk), 0.0f);
  }
  // This rank's rows of every parameter, and of its optimizer state (resume).
  z->shard_.resize(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    const int64_t rows = z->rows_of(i, me), row = z->row_size(i);
    int64_t first = 0;
    if (!z->shapes_[i].empty()) first = split_rows(z->shapes_[i][0], n, me).first;
    Shape s = z->shapes_[i];
    if (!s.empty()) s[0] = rows;
    Param& sp = z->shard_[i];
    sp.name = params[i].name;
    TSR_ASSIGN_OR_RETURN(sp.value, Tensor::allocate(DType::kFloat32, s));
    std::memcpy(sp.value.data_as<float>(), params[i].value.data_as<float>() + first * row, static_cast<size_t>(rows * row) * 4);
    for (const auto& [name, st] : params[i].state) {
      if (st.dtype() != DType::kFloat32 || st.shape() != params[i].value.shape())
        return invalid_argument("ZeRO: optimizer state '" + params[i].name + "/" + name + "' does not match the parameter");
      TSR_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(DType::kFloat32, s));
      std::memcpy(t.data_as<float>(), st.data_as<float>() + first * row, static_cast<size_t>(rows * row) * 4);
      sp.state.push_back({name, std::move(t)});
    }
    params[i].state.clear();  // the rank keeps only its rows of the state
  }
  z->added_.assign(params.size(), false);
  z->held_.assign(params.size(), 0);
  if (stage == 3) z->release_values(params);
  ShardedDataParallel* self = z.get();
  z->source_.names = z->names_;
  z->source_.acquire = [self](size_t k) -> Result<Tensor> {
    Tensor full;
    if (self->prefetch_.req && self->prefetch_.param == k) {  // started by prefetch(k)
      TSR_RETURN_IF_ERROR(self->finish_prefetch(&full));
      ++self->prefetched_;
      self->held_[k] = full.nbytes();  // counted in live_ since prefetch(k)
      return full;
    }
    TSR_RETURN_IF_ERROR(self->finish_prefetch(nullptr));  // another one (not expected): keep the order
    TSR_RETURN_IF_ERROR(self->gather_rows(self->comm_, k, &self->shard_[k].value, full));
    ++self->blocking_;
    self->held_[k] = full.nbytes();
    self->live_ += full.nbytes();
    self->peak_ = std::max(self->peak_, self->live_);
    return full;
  };
  // The next parameter's all-gather runs on the communicator's thread while the nodes
  // before its first use compute (FSDP's forward and backward prefetch).
  z->source_.prefetch = [self](size_t k) {
    if (self->prefetch_.req || !self->prefetch_error_.is_ok()) return;
    Prefetch& p = self->prefetch_;
    const int64_t c = self->rows_of(k, 0) * self->row_size(k);
    p.param = k;
    p.send.assign(static_cast<size_t>(c), 0.0f);
    const Tensor& mine = self->shard_[k].value;
    if (mine.numel() > 0) std::memcpy(p.send.data(), mine.data(), mine.nbytes());
    p.all.assign(static_cast<size_t>(c) * self->comm_.size(), 0.0f);
    auto r = self->comm_.all_gather_async(p.send.data(), p.all.data(), c, DType::kFloat32);
    if (!r.is_ok()) { self->prefetch_error_ = r.status(); return; }
    p.req = std::move(*r);
    p.bytes = 4 * static_cast<uint64_t>(numel_of_shape(self->shapes_[k]));
    self->live_ += p.bytes;
    self->peak_ = std::max(self->peak_, self->live_);
  };
  z->source_.release = [self](size_t k) {
    self->live_ -= self->held_[k];
    self->held_[k] = 0;
  };
  return z;
}

Status ShardedDataParallel::finish_prefetch(Tensor* out) {
  Status err = prefetch_error_;
  prefetch_error_ = Status::ok();
  if (!prefetch_.req) return err;
  Prefetch& p = prefetch_;
  Status s = p.req->wait();
  p.req.reset();
  if (!out) live_ -= p.bytes;  // discarded
  if (s.is_ok() && out) {
    const size_t k = p.param;
    const int64_t c = rows_of(k, 0) * row_size(k), row = row_size(k);
    TSR_ASSIGN_OR_RETURN(*out, Tensor::allocate(DType::kFloat32, shapes_[k]));
    int64_t at = 0;
    for (int r = 0; r < comm_.size(); ++r) {
      const int64_t e = rows_of(k, r) * row;
      if (e > 0) std::memcpy(out->data_as<float>() + at, p.all.data() + r * c, static_cast<size_t>(e) * 4);
      at += e;
    }
  }
  std::vector<float>().swap(p.send);
  std::vector<float>().swap(p.all);
  return s.is_ok() ? err : s;
}

void ShardedDataParallel::release_values(std::vector<Param>& params) const {
  for (Param& p : params) {
    if (stage_ == 3) p.value = Tensor();
    p.state.clear();
  }
}

void ShardedDataParallel::begin(double weight) {
  if (prefetch_.req) (void)finish_prefetch(nullptr);  // left by a failed pass
  weight_ = static_cast<float>(weight);
  std::fill(added_.begin(), added_.end(), false);
  for (Bucket& b : buckets_) b.filled = 0;
  pending_.clear();
  next_ = 0;
  waited_ = 0;
  started_early_ = 0;
  error_ = Status::ok();
}

void ShardedDataParallel::add(size_t i, const Tensor& grad) {
  if (!error_.is_ok() || i >= shapes_.size() || added_[i]) return;
  if (grad.dtype() != DType::kFloat32 || grad.shape() != shapes_[i]) {
    error_ = invalid_argument("ZeRO: the gradient of '" + names_[i] + "' is " + grad.describe() + ", expected float32 " +
                              shape_to_string(shapes_[i]));
    return;
  }
  Bucket& b = buckets_[bucket_of_[i]];
  const int n = comm_.size();
  if (b.buf.empty()) {  // the bucket's packed gradients, freed when its reduce-scatter is done
    b.buf.assign(static_cast<size_t>(b.chunk) * n, 0.0f);
    buf_live_ += b.buf.size() * 4;
    buf_peak_ = std::max(buf_peak_, buf_live_);
  }
  const int64_t row = row_size(i);
  const float* src = grad.data_as<float>();
  int64_t at = 0;
  for (int r = 0; r < n; ++r) {  // rank r's rows go to its chunk
    const int64_t e = rows_of(i, r) * row;
    float* dst = b.buf.data() + r * b.chunk + offset_of_[i][r];
    for (int64_t k = 0; k < e; ++k) dst[k] = src[at + k] * weight_;
    at += e;
  }
  added_[i] = true;
  ++b.filled;
  const size_t before = next_;
  start_ready();
  started_early_ += next_ - before;
}

void ShardedDataParallel::start_ready() {
  while (error_.is_ok() && next_ < buckets_.size() && buckets_[next_].filled == buckets_[next_].params.size()) {
    Bucket& b = buckets_[next_];
    auto r = comm_.reduce_scatter_async(b.buf.data(), b.mine.data(), b.chunk, DType::kFloat32, ReduceOp::kSum);
    if (!r.is_ok()) { error_ = r.status(); return; }
    pending_.push_back(std::move(*r));
    ++next_;
    // Keep at most kInFlight reduce-scatters (and their full-size buffers) alive: operations
    // complete in order, so the oldest is usually done by now.
    constexpr size_t kInFlight = 2;
    while (next_ - waited_ > kInFlight) retire(waited_++);
  }
}

void ShardedDataParallel::retire(size_t j) {
  Status s = pending_[j]->wait();
  if (error_.is_ok() && !s.is_ok()) error_ = s;
  buf_live_ -= buckets_[j].buf.size() * 4;
  std::vector<float>().swap(buckets_[j].buf);
}

Status ShardedDataParallel::finish(bool zeros) {
  const size_t early = started_early_;
  for (size_t i = 0; i < shapes_.size() && error_.is_ok(); ++i) {
    if (added_[i]) continue;
    if (!zeros) {
      error_ = invalid_argument("ZeRO: no gradient of '" + names_[i] + "' was added");
      break;
    }
    Tensor z = Tensor::allocate(DType::kFloat32, shapes_[i]).value();
    std::memset(z.data(), 0, z.nbytes());
    add(i, z);
  }
  started_early_ = early;
  while (waited_ < pending_.size()) retire(waited_++);  // every started one, even after an error (buffers)
  pending_.clear();
  for (Bucket& b : buckets_) {  // packed but never started (after an error)
    buf_live_ -= b.buf.size() * 4;
    std::vector<float>().swap(b.buf);
  }
  TSR_RETURN_IF_ERROR(error_);
  if (next_ != buckets_.size()) return internal_error("ZeRO: not every gradient bucket started");
  return Status::ok();
}

Status ShardedDataParallel::step(std::vector<Param>& params, double lr, int64_t step, double clip_norm) {
  const int me = comm_.rank(), n = comm_.size();
  if (params.size() != shapes_.size())
    return invalid_argument("ZeRO: " + std::to_string(params.size()) + " parameters, expected " + std::to_string(shapes_.size()));
  if (clip_norm > 0) {  // clip_grad_global_norm over the shards (padding is zero)
    double ss = 0;
    for (const Bucket& b : buckets_)
      for (float v : b.mine) ss += static_cast<double>(v) * v;
    TSR_RETURN_IF_ERROR(ctrl_.all_reduce(&ss, &ss, 1, DType::kFloat64, ReduceOp::kSum));
    const double norm = std::sqrt(ss);
    if (norm > clip_norm) {
      const double sc = clip_norm / (norm + 1e-6);
      for (Bucket& b : buckets_)
        for (float& v : b.mine) v = static_cast<float>(v * sc);
    }
  }
  // The optimizer on this rank's rows: the parameters it owns rows of, each with its state.
  std::vector<Param> mine;
  std::vector<Tensor> grads;
  std::vector<size_t> which;
  for (size_t i = 0; i < shapes_.size(); ++i) {
    const int64_t e = rows_of(i, me) * row_size(i);
    if (e == 0) continue;
    TSR_ASSIGN_OR_RETURN(Tensor g, Tensor::allocate(DType::kFloat32, shard_[i].value.shape()));
    std::memcpy(g.data_as<float>(), buckets_[bucket_of_[i]].mine.data() + offset_of_[i][me], static_cast<size_t>(e) * 4);
    grads.push_back(std::move(g));
    mine.push_back(std::move(shard_[i]));
    which.push_back(i);
  }
  Status s = optimizer_step(opt_, mine, grads, lr, step);
  for (size_t k = 0; k < which.size(); ++k) shard_[which[k]] = std::move(mine[k]);
  TSR_RETURN_IF_ERROR(s);
  if (stage_ == 3) return Status::ok();
  // Stage 2: all-gather the updated rows into every rank's full parameters.
  for (Bucket& b : buckets_) {
    std::fill(b.mine.begin(), b.mine.end(), 0.0f);
    for (size_t i : b.params)
      if (shard_[i].value.numel() > 0)
        std::memcpy(b.mine.data() + offset_of_[i][me], shard_[i].value.data_as<float>(), shard_[i].value.nbytes());
    std::vector<float> all(static_cast<size_t>(b.chunk) * n);
    TSR_RETURN_IF_ERROR(comm_.all_gather(b.mine.data(), all.data(), b.chunk, DType::kFloat32));
    for (size_t i : b.params) {
      int64_t at = 0;
      for (int r = 0; r < n; ++r) {
        const int64_t e = rows_of(i, r) * row_size(i);
        if (e > 0) std::memcpy(params[i].value.data_as<float>() + at, all.data() + r * b.chunk + offset_of_[i][r], static_cast<size_t>(e) * 4);
        at += e;
      }
    }
  }
  return Status::ok();
}

Status ShardedDataParallel::gather_rows(Communicator& c, size_t i, const Tensor* rows, Tensor& out, int root) const {
  const int n = c.size();
  const int64_t chunk = rows_of(i, 0) * row_size(i), row = row_size(i);
  if (root >= 0) {  // point to point: every rank's rows to `root` alone
    const int me = c.rank();
    if (me != root) {
      const int64_t e = rows_of(i, me) * row;
      if (e == 0) return Status::ok();
      if (rows && rows->numel() == e) return c.send(rows->data(), e, DType::kFloat32, root);
      std::vector<float> zeros(static_cast<size_t>(e), 0.0f);
      return c.send(zeros.data(), e, DType::kFloat32, root);
    }
    TSR_ASSIGN_OR_RETURN(out, Tensor::allocate(DType::kFloat32, shapes_[i]));
    int64_t at = 0;
    for (int r = 0; r < n; ++r) {
      const int64_t e = rows_of(i, r) * row;
      float* dst = out.data_as<float>() + at;
      if (e > 0 && r == me) {
        if (rows && rows->numel() == e) std::memcpy(dst, rows->data(), static_cast<size_t>(e) * 4);
        else std::memset(dst, 0, static_cast<size_t>(e) * 4);
      } else if (e > 0) {
        TSR_RETURN_IF_ERROR(c.recv(dst, e, DType::kFloat32, r));
      }
      at += e;
    }
    return Status::ok();
  }
  std::vector<float> send(static_cast<size_t>(chunk), 0.0f), all(static_cast<size_t>(chunk) * n);
  if (rows && rows->numel() > 0) std::memcpy(send.data(), rows->data_as<float>(), rows->nbytes());
  TSR_RETURN_IF_ERROR(c.all_gather(send.data(), all.data(), chunk, DType::kFloat32));
  TSR_ASSIGN_OR_RETURN(out, Tensor::allocate(DType::kFloat32, shapes_[i]));
  int64_t at = 0;
  for (int r = 0; r < n; ++r) {
    const int64_t e = rows_of(i, r) * row;
    if (e > 0) std::memcpy(out.data_as<float>() + at, all.data() + r * chunk, static_cast<size_t>(e) * 4);
    at += e;
  }
  return Status::ok();
}

Status ShardedDataParallel::gather(std::vector<Param>& params, bool values, int root) {
  std::vector<std::string> names;
  if (opt_.kind == "adamw") names = {"exp_avg", "exp_avg_sq"};
  else if (opt_.momentum > 0) names = {"momentum_buffer"};
  auto state_of = [&](size_t i, const std::string& name) -> const Tensor* {
    for (const auto& [sn, t] : shard_[i].state)
      if (sn == name) return &t;
    return nullptr;
  };
  // Which states exist anywhere: before the first step no rank has state (as in
  // single-process training); a rank with no rows of a parameter has none of it.
  std::vector<double> any(params.size() * names.size(), 0.0);
  for (size_t i = 0; i < params.size(); ++i)
    for (size_t k = 0; k < names.size(); ++k) any[i * names.size() + k] = state_of(i, names[k]) ? 1 : 0;
  if (!any.empty()) TSR_RETURN_IF_ERROR(ctrl_.all_reduce(any.data(), any.data(), static_cast<int64_t>(any.size()), DType::kFloat64, ReduceOp::kMax));
  const bool here = root < 0 || ctrl_.rank() == root;  // this rank receives the full tensors
  for (size_t i = 0; i < params.size(); ++i) {
    if (values && !params[i].value.defined()) {
      Tensor full;
      TSR_RETURN_IF_ERROR(gather_rows(ctrl_, i, &shard_[i].value, full, root));
      if (here) params[i].value = std::move(full);
    }
    for (size_t k = 0; k < names.size(); ++k) {
      const std::string& name = names[k];
      if (any[i * names.size() + k] == 0) continue;
      Tensor full;
      TSR_RETURN_IF_ERROR(gather_rows(ctrl_, i, state_of(i, name), full, root));
      if (!here) continue;
      bool set = false;
      for (auto& [sn, t] : params[i].state)
        if (sn == name) { t = full; set = true; }
      if (!set) params[i].state.push_back({name, std::move(full)});
    }
  }
  return Status::ok();
}

uint64_t ShardedDataParallel::ring_bytes_exact(const std::vector<int>& acquisitions) const {
  const uint64_t n1 = static_cast<uint64_t>(comm_.size() - 1);
  uint64_t s = 0;
  for (const Bucket& b : buckets_) s += (stage_ == 2 ? 2 : 1) * n1 * static_cast<uint64_t>(b.chunk) * 4;
  if (stage_ == 3)
    for (size_t i = 0; i < shapes_.size() && i < acquisitions.size(); ++i) s += static_cast<uint64_t>(acquisitions[i]) * gather_bytes(i);
  return s;
}

}  // namespace tessera::train
