// The communicator of a single process (world size 1: every collective is a copy), and the
// entry points of the MPI and NCCL communicators when Tessera is built without them.
#include <cstdlib>

#include "train/comm/comm_common.h"

namespace tessera::train {

namespace {

class LocalComm final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string kind() const override { return "local"; }
  Status all_reduce(const void* send, void* recv, int64_t count, DType dtype, ReduceOp) override {
    return copy(send, recv, count, dtype, "all_reduce");
  }
  Status reduce_scatter(const void* send, void* recv, int64_t count, DType dtype, ReduceOp) override {
    return copy(send, recv, count, dtype, "reduce_scatter");
  }
  Status all_gather(const void* send, void* recv, int64_t count, DType dtype) override {
    return copy(send, recv, count, dtype, "all_gather");
  }
  Status broadcast(void* buf, int64_t count, DType dtype, int root) override {
    if (root != 0) return invalid_argument("broadcast: root " + std::to_string(root) + " is not a rank (world size 1)");
    return comm_internal::check_buffer(buf, count, dtype, "broadcast");
  }
  Status all_to_all(const void* send, void* recv, int64_t count, DType dtype) override {
    return copy(send, recv, count, dtype, "all_to_all");
  }
  Status send(const void*, int64_t, DType, int peer) override {
    return invalid_argument("send: peer " + std::to_string(peer) + " is not another rank (world size 1)");
  }
  Status recv(void*, int64_t, DType, int peer) override {
    return invalid_argument("recv: peer " + std::to_string(peer) + " is not another rank (world size 1)");
  }
  Status barrier() override { return Status::ok(); }
  Result<std::unique_ptr<CommRequest>> all_reduce_async(const void* send, void* recv, int64_t count, DType dtype,
                                                        ReduceOp op) override {
    return done(all_reduce(send, recv, count, dtype, op));
  }
  Result<std::unique_ptr<CommRequest>> reduce_scatter_async(const void* send, void* recv, int64_t count, DType dtype,
                                                            ReduceOp op) override {
    return done(reduce_scatter(send, recv, count, dtype, op));
  }
  Result<std::unique_ptr<CommRequest>> all_gather_async(const void* send, void* recv, int64_t count, DType dtype) override {
    return done(all_gather(send, recv, count, dtype));
  }
  Result<std::unique_ptr<Communicator>> split(int color, int) override {
    if (color < 0) return invalid_argument("split: color must be >= 0");
    return std::unique_ptr<Communicator>(new LocalComm());
  }

 private:
  struct Done final : CommRequest {
    Status wait() override { return Status::ok(); }
  };
  static Result<std::unique_ptr<CommRequest>> done(Status s) {
    TSR_RETURN_IF_ERROR(s);
    return std::unique_ptr<CommRequest>(new Done());
  }
  static Status copy(const void* send, void* recv, int64_t count, DType dtype, const char* what) {
    TSR_RETURN_IF_ERROR(comm_internal::check_buffer(send, count, dtype, what));
    TSR_RETURN_IF_ERROR(comm_internal::check_buffer(recv, count, dtype, what));
    if (count && send != recv) std::memmove(recv, send, static_cast<size_t>(count) * comm_dtype_size(dtype));
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<Communicator> local_communicator() { return std::unique_ptr<Communicator>(new LocalComm()); }

#ifndef TESSERA_WITH_MPI
bool have_mpi() { return false; }
Result<std::unique_ptr<Communicator>> mpi_world(const CommOptions&) {
  return unimplemented("this Tessera was built without MPI (install libopenmpi-dev and rebuild)");
}
void mpi_finalize() {}
void mpi_abort(int code) { std::_Exit(code); }
#endif

#ifndef TESSERA_WITH_NCCL
bool have_nccl() { return false; }
Result<std::unique_ptr<Communicator>> nccl_communicator(Communicator&, int, const CommOptions&) {
  return unimplemented("this Tessera was built without NCCL (CUDA with nccl.h and libnccl)");
}
#endif

}  // namespace tessera::train
