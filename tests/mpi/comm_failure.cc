// A rank that stops mid-run: `comm_failure MODE TIMEOUT_S`, under mpirun. Every rank
// all-reduces a few times; then rank 1 either hangs (MODE hang: it stops itself with
// SIGSTOP, as a process stuck in a kernel or a deadlock would look to its peers) or dies
// (MODE die: _exit(9)). The other ranks' next all-reduce must fail within the timeout with
// an error naming rank 1; they print it and end the job with MPI_Abort (exit code 3).
// tests/mpi/failure_test.sh checks the exit code, the time and the message.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "train/comm/comm.h"

using namespace tessera;
using namespace tessera::train;

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: comm_failure hang|die TIMEOUT_S\n");
    return 2;
  }
  const std::string mode = argv[1];
  CommOptions o;
  o.timeout_s = std::atof(argv[2]);
  auto world = mpi_world(o);
  if (!world.is_ok()) {
    std::fprintf(stderr, "comm_failure: %s\n", world.status().to_string().c_str());
    return 1;
  }
  Communicator& c = *world.value();
  std::vector<float> g(100000, 1.f);
  for (int step = 0; step < 5; ++step) {
    if (step == 3 && c.rank() == 1) {
      std::fprintf(stderr, "comm_failure: rank 1 %s at step 3\n", mode == "hang" ? "hangs" : "dies");
      std::fflush(stderr);
      if (mode == "hang") raise(SIGSTOP);
      _exit(9);
    }
    Status s = c.all_reduce(g.data(), g.data(), static_cast<int64_t>(g.size()), DType::kFloat32, ReduceOp::kAvg);
    if (!s.is_ok()) {
      std::fprintf(stderr, "comm_failure: rank %d step %d: %s\n", c.rank(), step, s.to_string().c_str());
      std::fflush(stderr);
      mpi_abort(3);
    }
  }
  std::fprintf(stderr, "comm_failure: rank %d finished all steps (the failure was not seen)\n", c.rank());
  world.value().reset();
  mpi_finalize();
  return 0;
}
