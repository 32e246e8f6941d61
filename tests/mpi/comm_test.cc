// The MPI communicator under mpirun (-np 2 and -np 4): every collective against the result
// computed here from what each rank contributes (rank r's element i is a function of r and
// i that every rank can evaluate; the values are small multiples of 1/4, so float sums are
// exact and the comparison is exact), the bytes sent against the ring algorithms' volume,
// asynchronous operations overlapping, and communicators split per mesh dim.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <numeric>
#include <cstdlib>
#include <string>
#include <thread>

#include "train/comm/comm.h"
#include "train/mesh.h"

namespace tessera::train {
namespace {

Communicator* g_world = nullptr;

/// Rank r's i-th value: exact in float32 (a multiple of 1/4 below 2^20).
double value(int r, int64_t i) { return 0.25 * static_cast<double>((r + 1) * 7 + (i % 1013) * (r % 3 + 1)); }

template <typename T>
std::vector<T> contribution(int r, int64_t n) {
  std::vector<T> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<T>(std::is_integral<T>::value ? (r + 1) * 3 + i % 17 : value(r, i));
  return v;
}

template <typename T>
T reduce_all(int size, int64_t i, ReduceOp op, const std::vector<std::vector<T>>& all) {
  T acc = all[0][i];
  for (int r = 1; r < size; ++r) {
    const T x = all[r][i];
    switch (op) {
      case ReduceOp::kSum:
      case ReduceOp::kAvg: acc = static_cast<T>(acc + x); break;
      case ReduceOp::kProd: acc = static_cast<T>(acc * x); break;
      case ReduceOp::kMax: acc = std::max(acc, x); break;
      case ReduceOp::kMin: acc = std::min(acc, x); break;
    }
  }
  if (op == ReduceOp::kAvg) acc = static_cast<T>(acc / static_cast<T>(size));
  return acc;
}

template <typename T>
DType dtype_of() {
  if (std::is_same<T, float>::value) return DType::kFloat32;
  if (std::is_same<T, double>::value) return DType::kFloat64;
  return DType::kInt64;
}

template <typename T>
void check_all_reduce(Communicator& c, int64_t n, ReduceOp op) {
  std::vector<std::vector<T>> all;
  for (int r = 0; r < c.size(); ++r) all.push_back(contribution<T>(r, n));
  std::vector<T> mine = all[c.rank()], out(static_cast<size_t>(n), T(-1));
  ASSERT_TRUE(c.all_reduce(mine.data(), out.data(), n, dtype_of<T>(), op).is_ok());
  int bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    const T want = reduce_all(c.size(), i, op, all);
    if (!(out[i] == want) && ++bad <= 3) ADD_FAILURE() << "n " << n << " op " << int(op) << " [" << i << "]: " << out[i] << " != " << want;
  }
  EXPECT_EQ(bad, 0);
  // In place gives the same.
  ASSERT_TRUE(c.all_reduce(mine.data(), mine.data(), n, dtype_of<T>(), op).is_ok());
  EXPECT_TRUE(n == 0 || std::memcmp(mine.data(), out.data(), n * sizeof(T)) == 0);
}

TEST(MpiComm, AllReduceEveryOpAndSize) {
  Communicator& c = *g_world;
  for (int64_t n : {0, 1, 3, 7, 1000, 100003}) {
    for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMax, ReduceOp::kMin, ReduceOp::kAvg}) {
      check_all_reduce<float>(c, n, op);
      check_all_reduce<double>(c, n, op);
    }
    check_all_reduce<int64_t>(c, n, ReduceOp::kSum);
    check_all_reduce<int64_t>(c, n, ReduceOp::kMax);
  }
  check_all_reduce<double>(c, 37, ReduceOp::kProd);
}

/// Ring all-reduce of B bytes, B a multiple of N elements: each rank sends 2 (N-1)/N B.
TEST(MpiComm, AllReduceSendsTheRingVolume) {
  Communicator& c = *g_world;
  const int64_t n = 12 * 1024 * c.size();
  std::vector<float> v = contribution<float>(c.rank(), n);
  c.reset_stats();
  ASSERT_TRUE(c.all_reduce(v.data(), v.data(), n, DType::kFloat32, ReduceOp::kSum).is_ok());
  const uint64_t bytes = static_cast<uint64_t>(n) * 4;
  EXPECT_EQ(c.stats().all_reduce, 2 * (c.size() - 1) * bytes / c.size());
  EXPECT_EQ(c.stats().total(), c.stats().all_reduce);
  c.reset_stats();
  std::vector<float> part(static_cast<size_t>(n / c.size()));
  ASSERT_TRUE(c.reduce_scatter(v.data(), part.data(), n / c.size(), DType::kFloat32, ReduceOp::kSum).is_ok());
  ASSERT_TRUE(c.all_gather(part.data(), v.data(), n / c.size(), DType::kFloat32).is_ok());
  EXPECT_EQ(c.stats().reduce_scatter, (c.size() - 1) * bytes / c.size());
  EXPECT_EQ(c.stats().all_gather, (c.size() - 1) * bytes / c.size());
}

TEST(MpiComm, ReduceScatterAndAllGather) {
  Communicator& c = *g_world;
  for (int64_t count : {0, 1, 5, 4099}) {
    const int64_t n = count * c.size();
    std::vector<std::vector<double>> all;
    for (int r = 0; r < c.size(); ++r) all.push_back(contribution<double>(r, n));
    std::vector<double> part(static_cast<size_t>(count), -1);
    ASSERT_TRUE(c.reduce_scatter(all[c.rank()].data(), part.data(), count, DType::kFloat64, ReduceOp::kSum).is_ok());
    for (int64_t i = 0; i < count; ++i)
      ASSERT_EQ(part[i], reduce_all(c.size(), c.rank() * count + i, ReduceOp::kSum, all)) << "count " << count << " i " << i;
    std::vector<double> gathered(static_cast<size_t>(n), -1);
    std::vector<double> mine = contribution<double>(c.rank(), count);
    ASSERT_TRUE(c.all_gather(mine.data(), gathered.data(), count, DType::kFloat64).is_ok());
    for (int r = 0; r < c.size(); ++r)
      for (int64_t i = 0; i < count; ++i) ASSERT_EQ(gathered[r * count + i], value(r, i)) << "rank " << r << " i " << i;
  }
}

TEST(MpiComm, BroadcastAllToAllSendRecvBarrier) {
  Communicator& c = *g_world;
  const int n = c.size(), me = c.rank();
  for (int root = 0; root < n; ++root) {
    std::vector<float> buf = me == root ? contribution<float>(root, 777) : std::vector<float>(777, -1.f);
    ASSERT_TRUE(c.broadcast(buf.data(), 777, DType::kFloat32, root).is_ok());
    EXPECT_EQ(buf, contribution<float>(root, 777)) << "root " << root;
  }
  // all_to_all: chunk q of rank r is value(r, q * 10 + i); rank q receives it as chunk r.
  const int64_t k = 10;
  std::vector<double> send(static_cast<size_t>(k * n)), recv(static_cast<size_t>(k * n), -1);
  for (int q = 0; q < n; ++q)
    for (int64_t i = 0; i < k; ++i) send[q * k + i] = value(me, q * k + i);
  ASSERT_TRUE(c.all_to_all(send.data(), recv.data(), k, DType::kFloat64).is_ok());
  for (int r = 0; r < n; ++r)
    for (int64_t i = 0; i < k; ++i) ASSERT_EQ(recv[r * k + i], value(r, me * k + i)) << "from rank " << r;
  // Pipeline-style: each rank sends to the next and receives from the previous (even ranks
  // send first, so that the blocking calls pair up).
  if (n > 1) {
    std::vector<float> out = contribution<float>(me, 5000), in(5000, -1.f);
    const int next = (me + 1) % n, prev = (me + n - 1) % n;
    if (me % 2 == 0) {
      ASSERT_TRUE(c.send(out.data(), 5000, DType::kFloat32, next).is_ok());
      ASSERT_TRUE(c.recv(in.data(), 5000, DType::kFloat32, prev).is_ok());
    } else {
      ASSERT_TRUE(c.recv(in.data(), 5000, DType::kFloat32, prev).is_ok());
      ASSERT_TRUE(c.send(out.data(), 5000, DType::kFloat32, next).is_ok());
    }
    EXPECT_EQ(in, contribution<float>(prev, 5000));
  }
  EXPECT_TRUE(c.barrier().is_ok());
}

/// Three all-reduces in flight while this thread computes; each result is right.
TEST(MpiComm, AsyncOperationsOverlapAndKeepTheirOrder) {
  Communicator& c = *g_world;
  std::vector<std::vector<float>> bufs;
  std::vector<std::unique_ptr<CommRequest>> reqs;
  for (int b = 0; b < 3; ++b) {
    bufs.push_back(contribution<float>(c.rank() + b, 20000 + b));
    auto r = c.all_reduce_async(bufs.back().data(), bufs.back().data(), 20000 + b, DType::kFloat32, ReduceOp::kSum);
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    reqs.push_back(std::move(r).value());
  }
  double busy = 0;  // the "backward pass" meanwhile
  for (int i = 0; i < 200000; ++i) busy += std::sqrt(static_cast<double>(i));
  EXPECT_GT(busy, 0);
  for (int b = 0; b < 3; ++b) {
    ASSERT_TRUE(reqs[b]->wait().is_ok());
    for (int64_t i = 0; i < 20000 + b; ++i) {
      double want = 0;
      for (int r = 0; r < c.size(); ++r) want += value(r + b, i);
      ASSERT_EQ(bufs[b][i], static_cast<float>(want)) << "buffer " << b << " i " << i;
    }
  }
}

/// A 2-D mesh (rows x 2 columns when the world size is even): one communicator per mesh
/// dim, each all-reducing over its own ranks.
TEST(MpiComm, SplitPerMeshDim) {
  Communicator& c = *g_world;
  const int cols = c.size() % 2 == 0 ? 2 : 1;
  auto row = c.split(c.rank() / cols, c.rank());
  auto col = c.split(c.rank() % cols, c.rank());
  ASSERT_TRUE(row.is_ok() && col.is_ok());
  EXPECT_EQ(row.value()->size(), cols);
  EXPECT_EQ(col.value()->size(), c.size() / cols);
  EXPECT_EQ(row.value()->rank(), c.rank() % cols);
  double x = c.rank() + 1, sum_row = 0, sum_col = 0;
  ASSERT_TRUE(row.value()->all_reduce(&x, &sum_row, 1, DType::kFloat64, ReduceOp::kSum).is_ok());
  ASSERT_TRUE(col.value()->all_reduce(&x, &sum_col, 1, DType::kFloat64, ReduceOp::kSum).is_ok());
  double want_row = 0, want_col = 0;
  for (int r = 0; r < c.size(); ++r) {
    if (r / cols == c.rank() / cols) want_row += r + 1;
    if (r % cols == c.rank() % cols) want_col += r + 1;
  }
  EXPECT_EQ(sum_row, want_row);
  EXPECT_EQ(sum_col, want_col);
}

TEST(Mesh, ParseParallel) {
  auto s = parse_parallel("tp=2,dp=3");
  ASSERT_TRUE(s.is_ok()) << s.status().to_string();
  EXPECT_EQ(s->dp, 3);
  EXPECT_EQ(s->tp, 2);
  EXPECT_EQ(s->pp, 1);
  EXPECT_EQ(s->world_size(), 6);
  EXPECT_EQ(s->describe(), "dp=3,tp=2,pp=1");
  for (const char* bad : {"", "dp=0", "dp=2,dp=2", "xx=2", "dp", "dp=2,", "dp=1e3", "tp=-1", "pp=99999999999"}) {
    auto b = parse_parallel(bad);
    EXPECT_FALSE(b.is_ok()) << bad;
    EXPECT_NE(b.status().message().find(std::string("'") + bad + "'"), std::string::npos) << b.status().message();
  }
}

// Every factorization of the world into (pp, dp, tp): the coordinates follow rank =
// (pp * D + dp) * T + tp, and each mesh-dim communicator holds exactly the ranks that share
// the other two coordinates, ordered along its own.
TEST(Mesh, CommunicatorPerMeshDim) {
  Communicator& w = *g_world;
  const int n = w.size();
  for (int tp = 1; tp <= n; ++tp)
    for (int dp = 1; dp * tp <= n; ++dp) {
      if (n % (tp * dp) != 0) continue;
      ParallelSpec spec;
      spec.tp = tp;
      spec.dp = dp;
      spec.pp = n / (tp * dp);
      auto m = make_mesh(w, spec);
      ASSERT_TRUE(m.is_ok()) << spec.describe() << ": " << m.status().to_string();
      EXPECT_EQ((m->pp_index * dp + m->dp_index) * tp + m->tp_index, w.rank()) << spec.describe();
      EXPECT_EQ(m->tp->size(), tp);
      EXPECT_EQ(m->dp->size(), dp);
      EXPECT_EQ(m->pp->size(), spec.pp);
      EXPECT_EQ(m->tp->rank(), m->tp_index);
      EXPECT_EQ(m->dp->rank(), m->dp_index);
      EXPECT_EQ(m->pp->rank(), m->pp_index);
      // Sum of (world rank + 1) over each group against the sum of its members' ranks.
      double x = w.rank() + 1, got[3] = {0, 0, 0};
      Communicator* comms[3] = {m->tp.get(), m->dp.get(), m->pp.get()};
      for (int d = 0; d < 3; ++d) ASSERT_TRUE(comms[d]->all_reduce(&x, &got[d], 1, DType::kFloat64, ReduceOp::kSum).is_ok());
      double want[3] = {0, 0, 0};
      for (int r = 0; r < n; ++r) {
        const int rt = r % tp, rd = (r / tp) % dp, rp = r / (tp * dp);
        if (rd == m->dp_index && rp == m->pp_index) want[0] += r + 1;
        if (rt == m->tp_index && rp == m->pp_index) want[1] += r + 1;
        if (rt == m->tp_index && rd == m->dp_index) want[2] += r + 1;
      }
      for (int d = 0; d < 3; ++d) EXPECT_EQ(got[d], want[d]) << spec.describe() << " dim " << d;
    }
  ParallelSpec wrong;
  wrong.dp = n + 1;
  auto bad = make_mesh(w, wrong);
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("mpirun -np " + std::to_string(n + 1)), std::string::npos) << bad.status().message();
}

TEST(MpiComm, BadArgumentsAreErrorsNotHangs) {
  Communicator& c = *g_world;
  float x = 1;
  EXPECT_EQ(c.all_reduce(&x, &x, -1, DType::kFloat32, ReduceOp::kSum).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(c.all_reduce(&x, &x, 1, DType::kString, ReduceOp::kSum).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(c.all_reduce(nullptr, &x, 1, DType::kFloat32, ReduceOp::kSum).code(), StatusCode::kInvalidArgument);
  int64_t i = 3;
  EXPECT_EQ(c.all_reduce(&i, &i, 1, DType::kInt64, ReduceOp::kAvg).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(c.broadcast(&x, 1, DType::kFloat32, c.size()).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(c.send(&x, 1, DType::kFloat32, c.rank()).code(), StatusCode::kInvalidArgument);
  // Still usable afterwards.
  EXPECT_TRUE(c.barrier().is_ok());
}

}  // namespace
}  // namespace tessera::train

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  tessera::train::CommOptions o;
  o.timeout_s = 60;
  auto world = tessera::train::mpi_world(o);
  if (!world.is_ok()) {
    fprintf(stderr, "comm_test: %s\n", world.status().to_string().c_str());
    return 1;
  }
  tessera::train::g_world = world.value().get();
  // `--world-size N`: the size mpirun was asked for (a binary started without mpirun, or
  // linked against another MPI than mpirun's, would see a world of 1 and test nothing).
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--world-size" && std::atoi(argv[i + 1]) != world.value()->size()) {
      fprintf(stderr, "comm_test: the world has %d ranks; %s were expected\n", world.value()->size(), argv[i + 1]);
      return 1;
    }
  if (world.value()->rank() == 0) printf("comm_test: world size %d\n", world.value()->size());
  // Only rank 0 prints gtest's report; every rank's failures still fail its exit code.
  if (world.value()->rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int rc = RUN_ALL_TESTS();
  world.value().reset();
  tessera::train::mpi_finalize();
  return rc;
}
