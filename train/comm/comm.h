// Communicators for distributed training: one interface for the collectives that data,
// ZeRO/FSDP, tensor and pipeline parallelism need, with an MPI implementation for host
// (CPU) buffers (train/comm/mpi_comm.cc) and an NCCL implementation for CUDA device buffers
// (train/comm/nccl_comm.cc). MPI (mpirun, or Slurm's srun through MPI) launches the ranks;
// NCCL's unique id travels over MPI.
//
// Semantics are those of the MPI standard and NCCL's collectives (all-reduce, reduce-scatter,
// all-gather, broadcast, all-to-all, send/recv, barrier). Buffers are dense arrays of
// `count` elements of `dtype` (float32, float64, int64, or uint8 for raw bytes); reduce-
// scatter and all-gather use the "rank-major" layout: the full buffer is size() chunks of
// `count` elements, chunk r belonging to rank r.
//
// Failure: every operation has a deadline (CommOptions::timeout_s, 60 s by default). A rank
// that dies or hangs makes the others' operations fail with kUnavailable naming it (the
// ranks that do not answer a ping within a few seconds), instead of hanging forever.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessera/dtype.h"
#include "tessera/status.h"

namespace tessera::train {

/// How values combine in a reduction (the .tsr schema's ReduceOp; kAvg divides the sum by
/// the communicator's size).
enum class ReduceOp { kSum, kMax, kMin, kProd, kAvg };

/// Bytes this rank handed to the transport as sender, per kind of operation, since the
/// communicator was made (or reset_stats). For the MPI communicator these are the bytes of
/// the point-to-point messages its ring algorithms actually send: an all-reduce of B bytes
/// over N ranks sends 2(N-1)/N * B per rank (reduce-scatter then all-gather, each
/// (N-1)/N * B), as in Patarasuk & Yuan, "Bandwidth optimal all-reduce algorithms for
/// clusters of workstations" (2009). For NCCL, which chooses its own algorithms, they are
/// the same ring volumes computed from the sizes (NCCL does not report what it sends).
struct CommStats {
  uint64_t all_reduce = 0, reduce_scatter = 0, all_gather = 0, broadcast = 0, all_to_all = 0, send = 0;
  uint64_t total() const { return all_reduce + reduce_scatter + all_gather + broadcast + all_to_all + send; }
};

struct CommOptions {
  /// Seconds an operation may wait for its peers before the communicator looks for the rank
  /// that stopped and fails with kUnavailable.
  double timeout_s = 60;
};

/// An operation started by an *_async call; wait() blocks until it is done (or failed).
class CommRequest {
 public:
  virtual ~CommRequest() = default;
  /// Errors: those of the operation (kUnavailable on a dead or hung peer, kInvalidArgument).
  virtual Status wait() = 0;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  /// This process's rank in [0, size()) and the number of ranks.
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// "mpi" or "nccl".
  virtual std::string kind() const = 0;

  /// recv[i] = op over ranks of send[i], i < count; send may equal recv (in place).
  /// Errors: kInvalidArgument (dtype, null buffer), kUnavailable (a peer stopped).
  virtual Status all_reduce(const void* send, void* recv, int64_t count, DType dtype, ReduceOp op) = 0;
  /// send holds size() chunks of `count` elements; recv[i] = op over ranks of chunk rank() of
  /// their send, i < count.
  virtual Status reduce_scatter(const void* send, void* recv, int64_t count, DType dtype, ReduceOp op) = 0;
  /// recv holds size() chunks of `count` elements: chunk r is rank r's send.
  virtual Status all_gather(const void* send, void* recv, int64_t count, DType dtype) = 0;
  /// buf (count elements) of rank `root` is copied to every rank's buf.
  virtual Status broadcast(void* buf, int64_t count, DType dtype, int root) = 0;
  /// send and recv hold size() chunks of `count` elements: recv chunk r on rank q is send
  /// chunk q of rank r.
  virtual Status all_to_all(const void* send, void* recv, int64_t count, DType dtype) = 0;
  /// Point-to-point (pipeline stages): a send must be matched by a recv of the same size on
  /// `peer`.
  virtual Status send(const void* buf, int64_t count, DType dtype, int peer) = 0;
  virtual Status recv(void* buf, int64_t count, DType dtype, int peer) = 0;
  /// Returns when every rank has entered it.
  virtual Status barrier() = 0;

  /// Starts an all-reduce / reduce-scatter / all-gather that runs while the caller goes on
  /// (computing the next gradients); the buffers must stay untouched until wait() returns.
  /// Operations of one communicator complete in the order they were started, and every
  /// rank must start the same operations in the same order.
  virtual Result<std::unique_ptr<CommRequest>> all_reduce_async(const void* send, void* recv, int64_t count, DType dtype,
                                                                ReduceOp op) = 0;
  virtual Result<std::unique_ptr<CommRequest>> reduce_scatter_async(const void* send, void* recv, int64_t count,
                                                                    DType dtype, ReduceOp op) = 0;
  virtual Result<std::unique_ptr<CommRequest>> all_gather_async(const void* send, void* recv, int64_t count,
                                                                DType dtype) = 0;

  /// A communicator over the ranks with the same `color`, ordered by `key` then by rank
  /// (MPI_Comm_split): one per mesh dim. Every rank of this communicator must call it.
  virtual Result<std::unique_ptr<Communicator>> split(int color, int key) = 0;

  const CommStats& stats() const { return stats_; }
  void reset_stats() { stats_ = CommStats{}; }

 protected:
  CommStats stats_;
};

/// The communicator of a process alone (rank 0 of 1): collectives copy, send/recv fail.
std::unique_ptr<Communicator> local_communicator();

/// Initializes MPI (once per process; MPI_THREAD_SERIALIZED, since one worker thread per
/// communicator makes every MPI call) and returns the world communicator. Errors:
/// kUnimplemented when Tessera was built without MPI; kUnavailable when MPI fails to start.
Result<std::unique_ptr<Communicator>> mpi_world(const CommOptions& options = {});
/// Calls MPI_Finalize if mpi_world initialized MPI (all communicators must be gone).
void mpi_finalize();
/// Ends every rank at once (MPI_Abort) with exit code `code`: after a fatal error on one
/// rank, so that the others do not wait for it.
[[noreturn]] void mpi_abort(int code);
/// True when Tessera was built with MPI.
bool have_mpi();

/// The NCCL communicator over the same ranks as `over` (an MPI communicator): rank 0 makes
/// the unique id and broadcasts it over `over`. Buffers passed to it are CUDA device
/// pointers; operations are queued on one CUDA stream of its own and complete before the
/// call returns (the *_async ones: before wait() returns). `device`: the CUDA device of this
/// rank. Errors: kUnimplemented when built without NCCL; kUnavailable when there is no CUDA
/// device or NCCL fails.
Result<std::unique_ptr<Communicator>> nccl_communicator(Communicator& over, int device, const CommOptions& options = {});
/// True when Tessera was built with NCCL.
bool have_nccl();

/// Size in bytes of one element of the dtypes communicators take (float32, float64,
/// int64, int32, uint8); 0 for others.
size_t comm_dtype_size(DType dtype);

}  // namespace tessera::train
