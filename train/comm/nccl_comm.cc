// The NCCL communicator: collectives on CUDA device buffers through NCCL, queued on one
// CUDA stream of the communicator's own. Rank 0's ncclUniqueId reaches the other ranks
// through the communicator it is made over (MPI). Every operation is waited for with a
// deadline: cudaStreamQuery and ncclCommGetAsyncError are polled, and on timeout the NCCL
// communicator is aborted (ncclCommAbort) and the operation fails with kUnavailable.
// CommStats count the ring volumes of the sizes (NCCL picks its own algorithms and does not
// report the bytes it sends).
#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
#include <string>
#include <thread>

#include "train/comm/comm_common.h"

namespace tessera::train {

namespace {

using Clock = std::chrono::steady_clock;

Result<ncclDataType_t> nccl_type(DType d) {
  switch (d) {
    case DType::kFloat32: return ncclFloat32;
    case DType::kFloat64: return ncclFloat64;
    case DType::kInt64: return ncclInt64;
    case DType::kInt32: return ncclInt32;
    case DType::kUInt8: return ncclUint8;
    default: return invalid_argument(std::string("NCCL communicator: dtype ") + dtype_name(d) + " is not supported");
  }
}

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return ncclSum;
    case ReduceOp::kMax: return ncclMax;
    case ReduceOp::kMin: return ncclMin;
    case ReduceOp::kProd: return ncclProd;
    case ReduceOp::kAvg: return ncclAvg;
  }
  return ncclSum;
}

Status nccl_check(ncclResult_t r, const std::string& what) {
  if (r == ncclSuccess) return Status::ok();
  return unavailable("NCCL: " + what + ": " + ncclGetErrorString(r));
}
Status cuda_check(cudaError_t e, const std::string& what) {
  if (e == cudaSuccess) return Status::ok();
  return unavailable("CUDA: " + what + ": " + cudaGetErrorString(e));
}

class NcclComm;

/// Waits for the work queued on the stream up to `event`.
class NcclRequest final : public CommRequest {
 public:
  NcclRequest(NcclComm* c, cudaEvent_t e, std::string what) : c_(c), event_(e), what_(std::move(what)) {}
  ~NcclRequest() override {
    if (event_) cudaEventDestroy(event_);
  }
  Status wait() override;

 private:
  NcclComm* c_;
  cudaEvent_t event_;
  std::string what_;
};

class NcclComm final : public Communicator {
 public:
  NcclComm(ncclComm_t comm, cudaStream_t stream, int device, double timeout_s)
      : comm_(comm), stream_(stream), device_(device), timeout_s_(timeout_s) {
    ncclCommUserRank(comm_, &rank_);
    ncclCommCount(comm_, &size_);
  }
  ~NcclComm() override {
    if (!aborted_) {
      cudaStreamSynchronize(stream_);
      ncclCommDestroy(comm_);
    }
    cudaStreamDestroy(stream_);
    if (barrier_buf_) cudaFree(barrier_buf_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string kind() const override { return "nccl"; }

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
    TSR_RETURN_IF_ERROR(ready());
    TSR_ASSIGN_OR_RETURN(ncclDataType_t t, nccl_type(dtype));
    TSR_RETURN_IF_ERROR(comm_internal::check_buffer(send, count, dtype, "all_reduce"));
    TSR_RETURN_IF_ERROR(comm_internal::check_buffer(recv, count, dtype, "all_reduce"));
    TSR_RETURN_IF_ERROR(nccl_check(ncclAllReduce(send, recv, static_cast<size_t>(count), t, nccl_op(op), comm_, stream_),
                                   "all_reduce"));
    stats_.all_reduce += ring_bytes(count, dtype) * 2;
    return request("all_reduce");
  }
  Result<std::unique_ptr<CommRequest>> reduce_scatter_async(const void* send, void* recv, int64_t count, DType dtype,
                                                            ReduceOp op) override {
    TSR_RETURN_IF_ERROR(ready());
    TSR_ASSIGN_OR_RETURN(ncclDataType_t t, nccl_type(dtype));
    TSR_RETURN_IF_ERROR(comm_internal::check_buffer(send, count * size_, dtype, "reduce_scatter"));
    TSR_RETURN_IF_ERROR(comm_internal::check_buffer(recv, count, dtype, "reduce_scatter"));
    TSR_RETURN_IF_ERROR(nccl_check(ncclReduceScatter(send, recv, static_cast<size_t>(count), t, nccl_op(op), comm_, stream_),
                                   "reduce_scatter"));
    stats_.reduce_scatter += ring_bytes(count * size_, dtype);
    return request("reduce_scatter");
  }
  Result<std::unique_ptr<CommRequest>> all_gather_async(const void* send, void* recv, int64_t count, DType dtype) override {
    TSR_RETURN_IF_ERROR(ready());
    TSR_ASSIGN_OR_RETURN(ncclDataType_t t, nccl_type(dtype));
    TSR_RETURN_IF_ERROR(comm_internal::check_buffer(send, count, dtype, "all_gather"));
    TSR_RETURN_IF_ERROR(comm_internal::check_buffer(recv, count * size_, dtype, "all_gather"));
    TSR_RETURN_IF_ERROR(nccl_check(ncclAllGather(send, recv, static_cast<size_t>(count), t, comm_, stream_), "all_gather"));
    stats_.all_gather += ring_bytes(count * size_, dtype);
    return request("all_gather");
  }
  Status broadcast(void* buf, int64_t count, DType dtype, int root) override {
    TSR_RETURN_IF_ERROR(ready());
    TSR_ASSIGN_OR_RETURN(ncclDataType_t t, nccl_type(dtype));
    TSR_RETURN_IF_ERROR(comm_internal::check_buffer(buf, count, dtype, "broadcast"));
    if (root < 0 || root >= size_) return invalid_argument("broadcast: root " + std::to_string(root) + " is not a rank");
    TSR_RETURN_IF_ERROR(nccl_check(ncclBroadcast(buf, buf, static_cast<size_t>(count), t, root, comm_, stream_), "broadcast"));
    if (rank_ == root) stats_.broadcast += static_cast<uint64_t>(count) * comm_dtype_size(dtype);
    TSR_ASSIGN_OR_RETURN(auto r, request("broadcast"));
    return r->wait();
  }
  Status all_to_all(const void* send, void* recv, int64_t count, DType dtype) override {
    TSR_RETURN_IF_ERROR(ready());
    TSR_ASSIGN_OR_RETURN(ncclDataType_t t, nccl_type(dtype));
    TSR_RETURN_IF_ERROR(comm_internal::check_buffer(send, count * size_, dtype, "all_to_all"));
    TSR_RETURN_IF_ERROR(comm_internal::check_buffer(recv, count * size_, dtype, "all_to_all"));
    const size_t bytes = static_cast<size_t>(count) * comm_dtype_size(dtype);
    TSR_RETURN_IF_ERROR(nccl_check(ncclGroupStart(), "all_to_all"));
    for (int r = 0; r < size_; ++r) {
      TSR_RETURN_IF_ERROR(nccl_check(ncclSend(static_cast<const uint8_t*>(send) + r * bytes, static_cast<size_t>(count), t, r,
                                              comm_, stream_), "all_to_all send"));
      TSR_RETURN_IF_ERROR(nccl_check(ncclRecv(static_cast<uint8_t*>(recv) + r * bytes, static_cast<size_t>(count), t, r,
                                              comm_, stream_), "all_to_all recv"));
    }
    TSR_RETURN_IF_ERROR(nccl_check(ncclGroupEnd(), "all_to_all"));
    stats_.all_to_all += bytes * static_cast<uint64_t>(size_ - 1);
    TSR_ASSIGN_OR_RETURN(auto r, request("all_to_all"));
    return r->wait();
  }
  Status send(const void* buf, int64_t count, DType dtype, int peer) override {
    TSR_RETURN_IF_ERROR(ready());
    TSR_ASSIGN_OR_RETURN(ncclDataType_t t, nccl_type(dtype));
    if (peer < 0 || peer >= size_ || peer == rank_) return invalid_argument("send: peer " + std::to_string(peer) + " is not another rank");
    TSR_RETURN_IF_ERROR(nccl_check(ncclSend(buf, static_cast<size_t>(count), t, peer, comm_, stream_), "send"));
    stats_.send += static_cast<uint64_t>(count) * comm_dtype_size(dtype);
    TSR_ASSIGN_OR_RETURN(auto r, request("send"));
    return r->wait();
  }
  Status recv(void* buf, int64_t count, DType dtype, int peer) override {
    TSR_RETURN_IF_ERROR(ready());
    TSR_ASSIGN_OR_RETURN(ncclDataType_t t, nccl_type(dtype));
    if (peer < 0 || peer >= size_ || peer == rank_) return invalid_argument("recv: peer " + std::to_string(peer) + " is not another rank");
    TSR_RETURN_IF_ERROR(nccl_check(ncclRecv(buf, static_cast<size_t>(count), t, peer, comm_, stream_), "recv"));
    TSR_ASSIGN_OR_RETURN(auto r, request("recv"));
    return r->wait();
  }
  Status barrier() override {
    TSR_RETURN_IF_ERROR(ready());
    if (!barrier_buf_) TSR_RETURN_IF_ERROR(cuda_check(cudaMalloc(&barrier_buf_, sizeof(float)), "barrier buffer"));
    TSR_RETURN_IF_ERROR(nccl_check(ncclAllReduce(barrier_buf_, barrier_buf_, 1, ncclFloat32, ncclSum, comm_, stream_), "barrier"));
    TSR_ASSIGN_OR_RETURN(auto r, request("barrier"));
    return r->wait();
  }
  Result<std::unique_ptr<Communicator>> split(int color, int key) override {
    TSR_RETURN_IF_ERROR(ready());
    if (color < 0) return invalid_argument("split: color must be >= 0");
    ncclComm_t sub = nullptr;
    TSR_RETURN_IF_ERROR(nccl_check(ncclCommSplit(comm_, color, key, &sub, nullptr), "split"));
    cudaStream_t s = nullptr;
    TSR_RETURN_IF_ERROR(cuda_check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "stream"));
    return std::unique_ptr<Communicator>(new NcclComm(sub, s, device_, timeout_s_));
  }

  /// Polls until `event` completes; on timeout or an asynchronous NCCL error, aborts.
  Status wait_event(cudaEvent_t event, const std::string& what) {
    const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s_);
    for (int spins = 0;; ++spins) {
      const cudaError_t q = cudaEventQuery(event);
      if (q == cudaSuccess) return Status::ok();
      if (q != cudaErrorNotReady) return cuda_check(q, what);
      ncclResult_t async = ncclSuccess;
      ncclCommGetAsyncError(comm_, &async);
      if (async != ncclSuccess && async != ncclInProgress) {
        abort();
        return nccl_check(async, what + " on rank " + std::to_string(rank_));
      }
      if (Clock::now() > deadline) {
        abort();
        return unavailable(what + " on rank " + std::to_string(rank_) + ": no progress within " +
                           comm_internal::seconds_text(timeout_s_) +
                           " s (a rank died or hangs; the NCCL communicator was aborted)");
      }
      if (spins > 1000) std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }

 private:
  Status ready() const {
    return aborted_ ? unavailable("NCCL communicator on rank " + std::to_string(rank_) + " was aborted after an earlier failure")
                    : Status::ok();
  }
  uint64_t ring_bytes(int64_t total_count, DType dtype) const {
    return static_cast<uint64_t>(total_count) * comm_dtype_size(dtype) * static_cast<uint64_t>(size_ - 1) /
           static_cast<uint64_t>(size_);
  }
  Result<std::unique_ptr<CommRequest>> request(const std::string& what) {
    cudaEvent_t e = nullptr;
    TSR_RETURN_IF_ERROR(cuda_check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "event"));
    TSR_RETURN_IF_ERROR(cuda_check(cudaEventRecord(e, stream_), "event"));
    return std::unique_ptr<CommRequest>(new NcclRequest(this, e, what));
  }
  void abort() {
    if (!aborted_) ncclCommAbort(comm_);
    aborted_ = true;
  }

  ncclComm_t comm_;
  cudaStream_t stream_;
  int device_;
  double timeout_s_;
  int rank_ = 0, size_ = 1;
  bool aborted_ = false;
  void* barrier_buf_ = nullptr;
};

Status NcclRequest::wait() { return c_->wait_event(event_, what_); }

}  // namespace

bool have_nccl() { return true; }

Result<std::unique_ptr<Communicator>> nccl_communicator(Communicator& over, int device, const CommOptions& options) {
  if (!(options.timeout_s > 0)) return invalid_argument("communicator timeout must be > 0 seconds");
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    cudaGetLastError();
    return unavailable("NCCL communicator: no CUDA device was found");
  }
  if (device < 0 || device >= count)
    return invalid_argument("NCCL communicator: device " + std::to_string(device) + " is not in 0.." + std::to_string(count - 1));
  TSR_RETURN_IF_ERROR(cuda_check(cudaSetDevice(device), "set device"));
  ncclUniqueId id;
  if (over.rank() == 0) TSR_RETURN_IF_ERROR(nccl_check(ncclGetUniqueId(&id), "unique id"));
  TSR_RETURN_IF_ERROR(over.broadcast(&id, sizeof(id), DType::kUInt8, 0));
  ncclComm_t comm = nullptr;
  TSR_RETURN_IF_ERROR(nccl_check(ncclCommInitRank(&comm, over.size(), id, over.rank()), "init rank"));
  cudaStream_t s = nullptr;
  TSR_RETURN_IF_ERROR(cuda_check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "stream"));
  return std::unique_ptr<Communicator>(new NcclComm(comm, s, device, options.timeout_s));
}

}  // namespace tessera::train
