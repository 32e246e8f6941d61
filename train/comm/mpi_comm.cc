// The MPI communicator: collectives on host buffers as ring algorithms over MPI's
// non-blocking point-to-point calls (Patarasuk & Yuan 2009: reduce-scatter and all-gather
// in N-1 steps of one chunk each; all-reduce = reduce-scatter + all-gather), so that
//  - every wait has a deadline: a rank that died or hangs is found by pinging the others,
//    and named in a kUnavailable error, instead of a wait that never ends;
//  - the bytes this rank sends are counted as they are handed to MPI (CommStats).
// Each communicator runs its operations on a worker thread of its own (so that *_async
// calls overlap with the caller's compute). MPI runs in MPI_THREAD_SERIALIZED mode: every
// MPI call, from any worker, is made under one process-wide mutex.
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "train/comm/comm_common.h"

namespace tessera::train {

namespace {

using comm_internal::check_buffer;
using comm_internal::chunk_offsets;
using comm_internal::TaskRequest;
using comm_internal::Worker;
using Clock = std::chrono::steady_clock;

constexpr int kDataTag = 1;
constexpr int kPingTag = 2;
constexpr int kPongTag = 3;
/// How long the ranks that did not answer a ping are waited for, when an operation timed out.
constexpr double kPingSeconds = 3.0;

std::mutex& mpi_mutex() {
  static std::mutex m;
  return m;
}
bool g_initialized_here = false;
/// The one byte of every ping and pong (a buffer that outlives the non-blocking sends).
const char kPingByte = 0;

/// Every live communicator's ping channel, so that a rank waiting in any of its
/// communicators answers pings on all of them.
std::mutex g_ping_mu;
std::set<MPI_Comm*>& ping_comms() {
  static std::set<MPI_Comm*> s;
  return s;
}

std::string mpi_error(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, text, &len);
  return std::string(text, static_cast<size_t>(len));
}

/// Answers pings that arrived on any communicator (caller holds the MPI mutex).
void serve_pings_locked() {
  std::lock_guard<std::mutex> lock(g_ping_mu);
  for (MPI_Comm* c : ping_comms()) {
    for (;;) {
      int flag = 0;
      MPI_Status st;
      if (MPI_Iprobe(MPI_ANY_SOURCE, kPingTag, *c, &flag, &st) != MPI_SUCCESS || !flag) break;
      char b = 0;
      MPI_Recv(&b, 1, MPI_CHAR, st.MPI_SOURCE, kPingTag, *c, MPI_STATUS_IGNORE);
      MPI_Request r;
      if (MPI_Isend(&kPingByte, 1, MPI_CHAR, st.MPI_SOURCE, kPongTag, *c, &r) == MPI_SUCCESS) MPI_Request_free(&r);
    }
  }
}

class MpiComm final : public Communicator {
 public:
  MpiComm(MPI_Comm comm, MPI_Comm ping, double timeout_s) : comm_(comm), ping_(ping), timeout_s_(timeout_s) {
    std::lock_guard<std::mutex> lock(mpi_mutex());
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(ping_, MPI_ERRORS_RETURN);
    std::lock_guard<std::mutex> pl(g_ping_mu);
    ping_comms().insert(&ping_);
  }
  ~MpiComm() override {
    worker_.reset();  // finishes what was started
    std::lock_guard<std::mutex> lock(mpi_mutex());
    {
      std::lock_guard<std::mutex> pl(g_ping_mu);
      ping_comms().erase(&ping_);
    }
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) {
      if (comm_ != MPI_COMM_WORLD) MPI_Comm_free(&comm_);
      MPI_Comm_free(&ping_);
    }
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string kind() const override { return "mpi"; }

  Status all_reduce(const void* send, void* recv, int64_t count, DType dtype, ReduceOp op) override {
    TSR_ASSIGN_OR_RETURN(auto r, all_reduce_async(send, recv, count, dtype, op));
    return r->wait();
  }
  Status reduce_scatter(const void* send, void* recv, int64_t count, DType dtype, ReduceOp op) override {
    TSR_ASSIGN_OR_RETURN(auto r, reduce_scatter_async(send, recv, count, dtype, op));
    return r->wait();
  }
  Status all_gather(const void* send, void* recv, int64_t count, DType dtype) override {
    TSR_ASSIGN_OR_RETURN(auto r, all_gather_async(send, recv, count, dtype));
    return r->wait();
  }

  Result<std::unique_ptr<CommRequest>> all_reduce_async(const void* send, void* recv, int64_t count, DType dtype,
                                                        ReduceOp op) override {
    TSR_RETURN_IF_ERROR(check_buffer(send, count, dtype, "all_reduce send"));
    TSR_RETURN_IF_ERROR(check_buffer(recv, count, dtype, "all_reduce recv"));
    if (op == ReduceOp::kAvg && dtype != DType::kFloat32 && dtype != DType::kFloat64)
      return invalid_argument("all_reduce: an average needs float32 or float64");
    return submit([=]() -> Status {
      const size_t es = comm_dtype_size(dtype);
      if (send != recv) std::memcpy(recv, send, static_cast<size_t>(count) * es);
      const std::vector<int64_t> off = chunk_offsets(count, size_);
      TSR_RETURN_IF_ERROR(ring_reduce_scatter(static_cast<uint8_t*>(recv), off, dtype, op, &stats_.all_reduce, "all_reduce"));
      const int mine = rank_;
      if (op == ReduceOp::kAvg)
        TSR_RETURN_IF_ERROR(comm_internal::divide(static_cast<uint8_t*>(recv) + off[mine] * es, off[mine + 1] - off[mine],
                                                  dtype, size_));
      return ring_all_gather(static_cast<uint8_t*>(recv), off, dtype, &stats_.all_reduce, "all_reduce");
    });
  }

  Result<std::unique_ptr<CommRequest>> reduce_scatter_async(const void* send, void* recv, int64_t count, DType dtype,
                                                            ReduceOp op) override {
    TSR_RETURN_IF_ERROR(check_buffer(send, count * size_, dtype, "reduce_scatter send"));
    TSR_RETURN_IF_ERROR(check_buffer(recv, count, dtype, "reduce_scatter recv"));
    if (op == ReduceOp::kAvg && dtype != DType::kFloat32 && dtype != DType::kFloat64)
      return invalid_argument("reduce_scatter: an average needs float32 or float64");
    return submit([=]() -> Status {
      const size_t es = comm_dtype_size(dtype);
      std::vector<uint8_t> work(static_cast<size_t>(count * size_) * es);
      if (!work.empty()) std::memcpy(work.data(), send, work.size());
      std::vector<int64_t> off(static_cast<size_t>(size_) + 1);
      for (int r = 0; r <= size_; ++r) off[r] = count * r;
      TSR_RETURN_IF_ERROR(ring_reduce_scatter(work.data(), off, dtype, op, &stats_.reduce_scatter, "reduce_scatter"));
      if (count) std::memcpy(recv, work.data() + off[rank_] * es, static_cast<size_t>(count) * es);
      return op == ReduceOp::kAvg ? comm_internal::divide(recv, count, dtype, size_) : Status::ok();
    });
  }

  Result<std::unique_ptr<CommRequest>> all_gather_async(const void* send, void* recv, int64_t count, DType dtype) override {
    TSR_RETURN_IF_ERROR(check_buffer(send, count, dtype, "all_gather send"));
    TSR_RETURN_IF_ERROR(check_buffer(recv, count * size_, dtype, "all_gather recv"));
    return submit([=]() -> Status {
      const size_t es = comm_dtype_size(dtype);
      auto* out = static_cast<uint8_t*>(recv);
      if (count && out + rank_ * count * es != send) std::memmove(out + rank_ * count * es, send, static_cast<size_t>(count) * es);
      std::vector<int64_t> off(static_cast<size_t>(size_) + 1);
      for (int r = 0; r <= size_; ++r) off[r] = count * r;
      return ring_all_gather(out, off, dtype, &stats_.all_gather, "all_gather");
    });
  }

  Status broadcast(void* buf, int64_t count, DType dtype, int root) override {
    TSR_RETURN_IF_ERROR(check_buffer(buf, count, dtype, "broadcast"));
    if (root < 0 || root >= size_) return invalid_argument("broadcast: root " + std::to_string(root) + " is not a rank");
    return run([=]() -> Status {
      const int bytes = checked_bytes(count, dtype);
      if (bytes < 0) return invalid_argument("broadcast: more than 2 GiB in one call");
      std::vector<MPI_Request> reqs;
      if (rank_ == root) {
        for (int r = 0; r < size_; ++r)
          if (r != root) {
            TSR_RETURN_IF_ERROR(isend(buf, bytes, r, &reqs, "broadcast"));
            stats_.broadcast += static_cast<uint64_t>(bytes);
          }
      } else {
        TSR_RETURN_IF_ERROR(irecv(buf, bytes, root, &reqs, "broadcast"));
      }
      return wait_all(reqs, "broadcast", rank_ == root ? -1 : root);
    });
  }

  Status all_to_all(const void* send, void* recv, int64_t count, DType dtype) override {
    TSR_RETURN_IF_ERROR(check_buffer(send, count * size_, dtype, "all_to_all send"));
    TSR_RETURN_IF_ERROR(check_buffer(recv, count * size_, dtype, "all_to_all recv"));
    return run([=]() -> Status {
      const int bytes = checked_bytes(count, dtype);
      if (bytes < 0) return invalid_argument("all_to_all: more than 2 GiB per chunk");
      auto* in = static_cast<const uint8_t*>(send);
      auto* out = static_cast<uint8_t*>(recv);
      if (bytes) std::memcpy(out + static_cast<size_t>(rank_) * bytes, in + static_cast<size_t>(rank_) * bytes, bytes);
      for (int k = 1; k < size_; ++k) {  // pairwise exchange: step k pairs r with r + k and r - k
        const int to = (rank_ + k) % size_, from = (rank_ - k + size_) % size_;
        std::vector<MPI_Request> reqs;
        TSR_RETURN_IF_ERROR(irecv(out + static_cast<size_t>(from) * bytes, bytes, from, &reqs, "all_to_all"));
        TSR_RETURN_IF_ERROR(isend(in + static_cast<size_t>(to) * bytes, bytes, to, &reqs, "all_to_all"));
        stats_.all_to_all += static_cast<uint64_t>(bytes);
        TSR_RETURN_IF_ERROR(wait_all(reqs, "all_to_all", from));
      }
      return Status::ok();
    });
  }

  Status send(const void* buf, int64_t count, DType dtype, int peer) override {
    TSR_RETURN_IF_ERROR(check_buffer(buf, count, dtype, "send"));
    if (peer < 0 || peer >= size_ || peer == rank_) return invalid_argument("send: peer " + std::to_string(peer) + " is not another rank");
    return run([=]() -> Status {
      const int bytes = checked_bytes(count, dtype);
      if (bytes < 0) return invalid_argument("send: more than 2 GiB in one call");
      std::vector<MPI_Request> reqs;
      TSR_RETURN_IF_ERROR(isend(buf, bytes, peer, &reqs, "send"));
      stats_.send += static_cast<uint64_t>(bytes);
      return wait_all(reqs, "send", peer);
    });
  }
  Status recv(void* buf, int64_t count, DType dtype, int peer) override {
    TSR_RETURN_IF_ERROR(check_buffer(buf, count, dtype, "recv"));
    if (peer < 0 || peer >= size_ || peer == rank_) return invalid_argument("recv: peer " + std::to_string(peer) + " is not another rank");
    return run([=]() -> Status {
      const int bytes = checked_bytes(count, dtype);
      if (bytes < 0) return invalid_argument("recv: more than 2 GiB in one call");
      std::vector<MPI_Request> reqs;
      TSR_RETURN_IF_ERROR(irecv(buf, bytes, peer, &reqs, "recv"));
      return wait_all(reqs, "recv", peer);
    });
  }

  Status barrier() override {
    return run([=]() -> Status {
      std::vector<MPI_Request> reqs(1);
      {
        std::lock_guard<std::mutex> lock(mpi_mutex());
        const int e = MPI_Ibarrier(comm_, &reqs[0]);
        if (e != MPI_SUCCESS) return unavailable("barrier: " + mpi_error(e));
      }
      return wait_all(reqs, "barrier", -1);
    });
  }

  Result<std::unique_ptr<Communicator>> split(int color, int key) override {
    if (color < 0) return invalid_argument("split: color must be >= 0");
    MPI_Comm sub = MPI_COMM_NULL, sub_ping = MPI_COMM_NULL;
    TSR_RETURN_IF_ERROR(run([&]() -> Status {
      std::lock_guard<std::mutex> lock(mpi_mutex());
      int e = MPI_Comm_split(comm_, color, key, &sub);
      if (e == MPI_SUCCESS) e = MPI_Comm_dup(sub, &sub_ping);
      return e == MPI_SUCCESS ? Status::ok() : unavailable("split: " + mpi_error(e));
    }));
    return std::unique_ptr<Communicator>(new MpiComm(sub, sub_ping, timeout_s_));
  }

 private:
  Result<std::unique_ptr<CommRequest>> submit(std::function<Status()> fn) {
    if (failed_) return unavailable(failure_);
    auto t = worker_->submit([this, fn]() -> Status {
      if (failed_) return unavailable(failure_);
      Status s = fn();
      if (s.code() == StatusCode::kUnavailable && !failed_) {
        failure_ = s.message();
        failed_ = true;
      }
      return s;
    });
    return std::unique_ptr<CommRequest>(new TaskRequest(std::move(t)));
  }
  Status run(std::function<Status()> fn) {
    TSR_ASSIGN_OR_RETURN(auto r, submit(std::move(fn)));
    return r->wait();
  }

  int checked_bytes(int64_t count, DType dtype) const {
    const int64_t b = count * static_cast<int64_t>(comm_dtype_size(dtype));
    return b > INT32_MAX ? -1 : static_cast<int>(b);
  }
  Status isend(const void* p, int bytes, int peer, std::vector<MPI_Request>* reqs, const char* what) {
    MPI_Request r;
    std::lock_guard<std::mutex> lock(mpi_mutex());
    const int e = MPI_Isend(p, bytes, MPI_BYTE, peer, kDataTag, comm_, &r);
    if (e != MPI_SUCCESS) return unavailable(std::string(what) + ": send to rank " + std::to_string(peer) + ": " + mpi_error(e));
    reqs->push_back(r);
    return Status::ok();
  }
  Status irecv(void* p, int bytes, int peer, std::vector<MPI_Request>* reqs, const char* what) {
    MPI_Request r;
    std::lock_guard<std::mutex> lock(mpi_mutex());
    const int e = MPI_Irecv(p, bytes, MPI_BYTE, peer, kDataTag, comm_, &r);
    if (e != MPI_SUCCESS) return unavailable(std::string(what) + ": receive from rank " + std::to_string(peer) + ": " + mpi_error(e));
    reqs->push_back(r);
    return Status::ok();
  }

  /// Waits for `reqs` until the deadline, answering pings meanwhile. On timeout, names the
  /// ranks that do not answer a ping (else `peer`, the rank this step waited for).
  Status wait_all(std::vector<MPI_Request>& reqs, const char* what, int peer) {
    const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s_);
    for (int spins = 0;; ++spins) {
      {
        std::lock_guard<std::mutex> lock(mpi_mutex());
        int done = 0;
        const int e = MPI_Testall(static_cast<int>(reqs.size()), reqs.data(), &done, MPI_STATUSES_IGNORE);
        if (e != MPI_SUCCESS) return unavailable(std::string(what) + ": " + mpi_error(e));
        if (done) return Status::ok();
        serve_pings_locked();
      }
      if (Clock::now() > deadline) break;
      // Spin briefly (a ring step usually completes in microseconds), then yield the core:
      // ranks often share cores (mpirun --oversubscribe).
      if (spins > 200) std::this_thread::sleep_for(std::chrono::microseconds(spins > 20000 ? 1000 : 50));
      else std::this_thread::yield();
    }
    {
      std::lock_guard<std::mutex> lock(mpi_mutex());
      for (MPI_Request& r : reqs)
        if (r != MPI_REQUEST_NULL) {
          MPI_Cancel(&r);
          MPI_Request_free(&r);
        }
    }
    return unavailable(std::string(what) + " on rank " + std::to_string(rank_) + ": no progress within " +
                       comm_internal::seconds_text(timeout_s_) + " s; " + find_stopped(peer));
  }

  /// Pings every other rank and waits kPingSeconds for the answers.
  std::string find_stopped(int peer) {
    std::vector<char> answered(static_cast<size_t>(size_), 0);
    {
      std::lock_guard<std::mutex> lock(mpi_mutex());
      for (int r = 0; r < size_; ++r) {
        if (r == rank_) continue;
        MPI_Request q;
        if (MPI_Isend(&kPingByte, 1, MPI_CHAR, r, kPingTag, ping_, &q) == MPI_SUCCESS) MPI_Request_free(&q);
      }
    }
    answered[rank_] = 1;
    const auto until = Clock::now() + std::chrono::duration<double>(kPingSeconds);
    while (Clock::now() < until) {
      {
        std::lock_guard<std::mutex> lock(mpi_mutex());
        serve_pings_locked();
        for (;;) {
          int flag = 0;
          MPI_Status st;
          if (MPI_Iprobe(MPI_ANY_SOURCE, kPongTag, ping_, &flag, &st) != MPI_SUCCESS || !flag) break;
          char b;
          MPI_Recv(&b, 1, MPI_CHAR, st.MPI_SOURCE, kPongTag, ping_, MPI_STATUS_IGNORE);
          answered[st.MPI_SOURCE] = 1;
        }
      }
      if (std::all_of(answered.begin(), answered.end(), [](char a) { return a != 0; })) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    std::string silent;
    for (int r = 0; r < size_; ++r)
      if (!answered[r]) silent += (silent.empty() ? "" : ", ") + std::to_string(r);
    if (!silent.empty())
      return "rank(s) " + silent + " of this communicator did not answer a ping within " +
             std::to_string(static_cast<int>(kPingSeconds)) + " s (dead or hung)";
    // Every rank alive: either they disagree on the operations, or the timeout is shorter
    // than the time the peer takes to get there (ranks start and run at different speeds).
    const std::string too_short =
        timeout_s_ < kPingSeconds ? " or the timeout, " + comm_internal::seconds_text(timeout_s_) + " s, is too short for it to get there" : "";
    return peer >= 0 ? "every rank answers pings; rank " + std::to_string(peer) +
                           " did not take part in this operation (ranks disagree on the operations?" + too_short + ")"
                     : "every rank answers pings; some rank did not take part in this operation" +
                           (too_short.empty() ? std::string() : " (" + too_short.substr(4) + ")");
  }

  /// In-place ring reduce-scatter over chunks [off[c], off[c+1]) of `buf` (elements): after
  /// it, chunk rank() of buf holds the reduction over all ranks. Step s: send chunk
  /// (r - s - 1) mod N to rank r + 1; receive chunk (r - s - 2) mod N from rank r - 1 and
  /// reduce it into ours.
  Status ring_reduce_scatter(uint8_t* buf, const std::vector<int64_t>& off, DType dtype, ReduceOp op, uint64_t* sent,
                             const char* what) {
    const int n = size_;
    if (n == 1) return Status::ok();
    const size_t es = comm_dtype_size(dtype);
    const int right = (rank_ + 1) % n, left = (rank_ - 1 + n) % n;
    int64_t max_chunk = 0;
    for (int c = 0; c < n; ++c) max_chunk = std::max(max_chunk, off[c + 1] - off[c]);
    if (max_chunk * static_cast<int64_t>(es) > INT32_MAX) return invalid_argument(std::string(what) + ": chunks over 2 GiB");
    std::vector<uint8_t> tmp(static_cast<size_t>(max_chunk) * es);
    for (int s = 0; s < n - 1; ++s) {
      const int cs = ((rank_ - s - 1) % n + n) % n, cr = ((rank_ - s - 2) % n + n) % n;
      const int sbytes = static_cast<int>((off[cs + 1] - off[cs]) * static_cast<int64_t>(es));
      const int rbytes = static_cast<int>((off[cr + 1] - off[cr]) * static_cast<int64_t>(es));
      std::vector<MPI_Request> reqs;
      TSR_RETURN_IF_ERROR(irecv(tmp.data(), rbytes, left, &reqs, what));
      TSR_RETURN_IF_ERROR(isend(buf + off[cs] * static_cast<int64_t>(es), sbytes, right, &reqs, what));
      *sent += static_cast<uint64_t>(sbytes);
      TSR_RETURN_IF_ERROR(wait_all(reqs, what, left));
      TSR_RETURN_IF_ERROR(comm_internal::reduce_into(buf + off[cr] * static_cast<int64_t>(es), tmp.data(),
                                                     off[cr + 1] - off[cr], dtype, op));
    }
    return Status::ok();
  }

  /// In-place ring all-gather: chunk rank() of `buf` is this rank's; after it every chunk
  /// is its owner's. Step s: send chunk (r - s) mod N right, receive chunk (r - s - 1) mod N
  /// from the left straight into place.
  Status ring_all_gather(uint8_t* buf, const std::vector<int64_t>& off, DType dtype, uint64_t* sent, const char* what) {
    const int n = size_;
    if (n == 1) return Status::ok();
    const int64_t es = static_cast<int64_t>(comm_dtype_size(dtype));
    const int right = (rank_ + 1) % n, left = (rank_ - 1 + n) % n;
    for (int s = 0; s < n - 1; ++s) {
      const int cs = ((rank_ - s) % n + n) % n, cr = ((rank_ - s - 1) % n + n) % n;
      const int64_t sb = (off[cs + 1] - off[cs]) * es, rb = (off[cr + 1] - off[cr]) * es;
      if (sb > INT32_MAX || rb > INT32_MAX) return invalid_argument(std::string(what) + ": chunks over 2 GiB");
      std::vector<MPI_Request> reqs;
      TSR_RETURN_IF_ERROR(irecv(buf + off[cr] * es, static_cast<int>(rb), left, &reqs, what));
      TSR_RETURN_IF_ERROR(isend(buf + off[cs] * es, static_cast<int>(sb), right, &reqs, what));
      *sent += static_cast<uint64_t>(sb);
      TSR_RETURN_IF_ERROR(wait_all(reqs, what, left));
    }
    return Status::ok();
  }

  MPI_Comm comm_, ping_;
  int rank_ = 0, size_ = 1;
  double timeout_s_;
  std::atomic<bool> failed_{false};
  std::string failure_;  // written once, before failed_ is set
  // Last member: destroyed (joined) first, while the rest is still alive.
  std::unique_ptr<Worker> worker_ = std::make_unique<Worker>();
};

}  // namespace

bool have_mpi() { return true; }

Result<std::unique_ptr<Communicator>> mpi_world(const CommOptions& options) {
  if (!(options.timeout_s > 0)) return invalid_argument("communicator timeout must be > 0 seconds");
  MPI_Comm ping = MPI_COMM_NULL;
  {
    std::lock_guard<std::mutex> lock(mpi_mutex());
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited) {
      int provided = 0;
      const int e = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
      if (e != MPI_SUCCESS) return unavailable("MPI_Init_thread failed: " + mpi_error(e));
      if (provided < MPI_THREAD_SERIALIZED) {
        MPI_Finalize();
        return unavailable("this MPI library does not offer MPI_THREAD_SERIALIZED");
      }
      g_initialized_here = true;
    }
    const int e = MPI_Comm_dup(MPI_COMM_WORLD, &ping);
    if (e != MPI_SUCCESS) return unavailable("MPI_Comm_dup failed: " + mpi_error(e));
  }
  return std::unique_ptr<Communicator>(new MpiComm(MPI_COMM_WORLD, ping, options.timeout_s));
}

void mpi_finalize() {
  std::lock_guard<std::mutex> lock(mpi_mutex());
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (g_initialized_here && !finalized) MPI_Finalize();
}

void mpi_abort(int code) {
  // No lock: another thread may hold it while waiting; MPI_Abort must still get through.
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

}  // namespace tessera::train
