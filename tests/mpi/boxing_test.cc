// Boxing (train/boxing.h) under mpirun (-np 2 and -np 4; linked into tessera_comm_tests): the placement -> collective
// table, and for every collective node, in float64 with uneven split sizes:
//   - forward: the node's output against the result computed here from the global tensor
//     (every rank can evaluate every rank's contribution: element values are a function of
//     the rank and the index), exactly;
//   - gradient: the node's gradient rule (autodiff's backward node, its transpose) passes
//     the dot-product test <A x, w> = <x, A^T w> with the global inner products of the
//     placements (Broadcast: the local product, the same on every rank; Split and Partial,
//     and a Partial cotangent: the sum of the local products over ranks), within 1e-12
//     relative. A wrong transpose (identity for all-reduce's f, a slice for reduce-scatter)
//     changes the right side by a factor of the world size or more.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>

#include "train/autodiff.h"
#include "train/boxing.h"
#include "train/comm/comm.h"
#include "train/data_parallel.h"
#include "train/interpreter.h"

namespace tessera::train {
namespace {

// Linked into tessera_comm_tests (its main starts MPI): a communicator of our own, split
// from a second world handle, for the tests of this file.
std::unique_ptr<Communicator> g_world_handle, g_comm;
Communicator* g_world = nullptr;

// ---- the table ----
TEST(BoxingTable, OneCollectivePerPlacementPair) {
  struct Case {
    Placement from, to;
    Collective op;
    int axis, to_axis;
  };
  const Case cases[] = {
      {Placement::partial(), Placement::broadcast(), Collective::kAllReduce, 0, 0},
      {Placement::partial(), Placement::split(1), Collective::kReduceScatter, 1, 0},
      {Placement::split(0), Placement::broadcast(), Collective::kAllGather, 0, 0},
      {Placement::split(0), Placement::split(1), Collective::kAllToAll, 0, 1},
      {Placement::broadcast(), Placement::split(1), Collective::kSlice, 1, 0},
      {Placement::split(1), Placement::split(1), Collective::kNone, 0, 0},
      {Placement::broadcast(), Placement::broadcast(), Collective::kNone, 0, 0},
      {Placement::partial(), Placement::partial(), Collective::kNone, 0, 0},
  };
  for (const Case& c : cases) {
    auto s = plan_boxing(c.from, c.to);
    ASSERT_TRUE(s.is_ok()) << c.from.describe() << " -> " << c.to.describe() << ": " << s.status().message();
    EXPECT_EQ(s->op, c.op) << c.from.describe() << " -> " << c.to.describe();
    if (c.op != Collective::kNone && c.op != Collective::kAllReduce) {
      EXPECT_EQ(s->axis, c.axis);
    }
    if (c.op == Collective::kAllToAll) {
      EXPECT_EQ(s->to_axis, c.to_axis);
    }
  }
  // Into Partial, and Partial(max): no collective.
  EXPECT_FALSE(plan_boxing(Placement::broadcast(), Placement::partial()).is_ok());
  EXPECT_FALSE(plan_boxing(Placement::split(0), Placement::partial()).is_ok());
  EXPECT_FALSE(plan_boxing(Placement::partial(PartialReduce::kMax), Placement::broadcast()).is_ok());
}

TEST(BoxingTable, OneMeshDimAtATime) {
  // A 2-D mesh (dp, tp): [S(0), P] -> [S(0), B] is one all-reduce on mesh dim 1;
  // [B, S(1)] -> [S(0), B] a slice on dim 0, then an all-gather on dim 1.
  auto a = plan_boxing(std::vector<Placement>{Placement::split(0), Placement::partial()},
                       std::vector<Placement>{Placement::split(0), Placement::broadcast()});
  ASSERT_TRUE(a.is_ok());
  ASSERT_EQ(a->size(), 1u);
  EXPECT_EQ((*a)[0].mesh_dim, 1);
  EXPECT_EQ((*a)[0].op, Collective::kAllReduce);
  auto b = plan_boxing(std::vector<Placement>{Placement::broadcast(), Placement::split(1)},
                       std::vector<Placement>{Placement::split(0), Placement::broadcast()});
  ASSERT_TRUE(b.is_ok());
  ASSERT_EQ(b->size(), 2u);
  EXPECT_EQ((*b)[0].mesh_dim, 0);
  EXPECT_EQ((*b)[0].op, Collective::kSlice);
  EXPECT_EQ((*b)[1].mesh_dim, 1);
  EXPECT_EQ((*b)[1].op, Collective::kAllGather);
  EXPECT_FALSE(plan_boxing(std::vector<Placement>{Placement::broadcast()}, std::vector<Placement>{}).is_ok());
  // The transposes.
  EXPECT_EQ(transpose_collective(Collective::kAllReduce), Collective::kNone);
  EXPECT_EQ(transpose_collective(Collective::kCopyToParallel), Collective::kAllReduce);
  EXPECT_EQ(transpose_collective(Collective::kAllGather), Collective::kSlice);
  EXPECT_EQ(transpose_collective(Collective::kSlice), Collective::kAllGather);
  EXPECT_EQ(transpose_collective(Collective::kReduceScatter), Collective::kAllGather);
  EXPECT_EQ(transpose_collective(Collective::kAllToAll), Collective::kAllToAll);
}

// ---- numerics ----

// Element (i, j) of a [rows, cols] tensor made by `who` (a rank, or -1 for a Broadcast
// tensor every rank holds) for stream `s` (inputs and cotangents differ).
double elem(int who, int s, int64_t i, int64_t j) { return std::sin(1.0 + 0.37 * i + 0.91 * j + 1.3 * (who + 1) + 2.1 * s); }

// The block [rows, cols] at (r0, c0) of the global tensor of (who, s).
Tensor make(int who, int s, int64_t rows, int64_t cols, int64_t r0 = 0, int64_t c0 = 0) {
  Tensor t = Tensor::allocate(DType::kFloat64, {rows, cols}).value();
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) t.data_as<double>()[i * cols + j] = elem(who, s, r0 + i, c0 + j);
  return t;
}

double dot(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape(), b.shape());
  double s = 0;
  for (int64_t k = 0; k < std::min(a.numel(), b.numel()); ++k) s += a.data_as<double>()[k] * b.data_as<double>()[k];
  return s;
}

double sum_ranks(double v) {
  EXPECT_TRUE(g_world->all_reduce(&v, &v, 1, DType::kFloat64, ReduceOp::kSum).is_ok());
  return v;
}

struct NodeRun {
  Tensor y, dx;
};

// g (its inputs declared) plus one node `op` named `name` (domain kTrainOpDomain, attrs)
// reading every input of g and making the float64 output "y", then append_backward of y
// for the input `wrt`: an interpreter that fetches {y, dy/dwrt} from the inputs and the
// cotangent fed under *seed. A failure is a test failure and gives nullptr.
std::unique_ptr<Interpreter> with_backward(Graph g, const std::string& op, const std::string& name, std::vector<Attribute> attrs,
                                           const std::string& wrt, std::string* seed) {
  Node n;
  n.op_type = op;
  n.domain = kTrainOpDomain;
  n.name = name;
  n.inputs = g.inputs;
  n.attributes = std::move(attrs);
  Value yv;
  yv.name = "y";
  yv.dtype = DType::kFloat64;
  n.outputs = {g.add_value(yv)};
  g.nodes.push_back(n);
  g.outputs = {n.outputs[0]};
  auto info = append_backward(g, "y", {wrt});
  EXPECT_TRUE(info.is_ok()) << info.status().message();
  if (!info.is_ok()) return nullptr;
  *seed = info->seed;
  auto it = Interpreter::create(std::make_shared<Graph>(g), {"y", info->grads[0]});
  EXPECT_TRUE(it.is_ok()) << it.status().message();
  if (!it.is_ok()) return nullptr;
  return std::move(*it);
}

// One node `op` (attrs) on x, its backward from append_backward, cotangent w.
NodeRun run_node(const std::string& op, std::vector<Attribute> attrs, const Tensor& x, const Tensor& w) {
  Graph g;
  Value xv;
  xv.name = "x";
  xv.dtype = DType::kFloat64;
  g.inputs.push_back(g.add_value(xv));
  std::string seed;
  auto it = with_backward(std::move(g), op, op, std::move(attrs), "x", &seed);
  if (!it) return {};
  auto out = it->run({{"x", x}, {seed, w}});
  EXPECT_TRUE(out.is_ok()) << out.status().message();
  if (!out.is_ok()) return {};
  return {(*out)[0], (*out)[1]};
}

Attribute ia(const std::string& n, int64_t v) {
  Attribute a;
  a.name = n;
  a.type = AttrType::kInt;
  a.i = v;
  return a;
}

void expect_near_rel(double a, double b, const std::string& what) {
  EXPECT_NEAR(a, b, 1e-12 * (std::fabs(a) + std::fabs(b) + 1)) << what;
}

void expect_equal(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  for (int64_t k = 0; k < got.numel(); ++k) ASSERT_NEAR(got.data_as<double>()[k], want.data_as<double>()[k], 1e-13) << what << " element " << k;
}

class BoxingNumerics : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto w = mpi_world();
    ASSERT_TRUE(w.is_ok()) << w.status().message();
    g_world_handle = std::move(*w);
    auto c = g_world_handle->split(0, g_world_handle->rank());
    ASSERT_TRUE(c.is_ok()) << c.status().message();
    g_comm = std::move(*c);
    g_world = g_comm.get();
  }
  static void TearDownTestSuite() {
    g_world = nullptr;
    g_comm.reset();
    g_world_handle.reset();
  }
  void SetUp() override {
    ASSERT_NE(g_world, nullptr);
    n_ = g_world->size();
    me_ = g_world->rank();
    set_mesh_communicator(0, g_world);
  }
  void TearDown() override { set_mesh_communicator(0, nullptr); }
  int n_ = 1, me_ = 0;
};

// Partial [3, 5] -> Broadcast: y = sum_r x_r; backward identity (Megatron's g).
TEST_F(BoxingNumerics, AllReduceAndItsTransposeIdentity) {
  Tensor x = make(me_, 0, 3, 5), w = make(-1, 1, 3, 5);
  NodeRun r = run_node("AllReduce", {ia("mesh_dim", 0)}, x, w);
  Tensor want = make(0, 0, 3, 5);
  for (int q = 1; q < n_; ++q) {
    Tensor xq = make(q, 0, 3, 5);
    for (int64_t k = 0; k < want.numel(); ++k) want.data_as<double>()[k] += xq.data_as<double>()[k];
  }
  expect_equal(r.y, want, "AllReduce forward");
  expect_near_rel(dot(r.y, w), sum_ranks(dot(x, r.dx)), "<sum x, w> = sum_r <x_r, dx_r>");
}

// Broadcast -> (rank-local use): identity forward; backward all-reduce (Megatron's f).
TEST_F(BoxingNumerics, CopyToParallelAndItsTransposeAllReduce) {
  Tensor x = make(-1, 0, 4, 3), w = make(me_, 1, 4, 3);  // a Partial cotangent: per rank
  NodeRun r = run_node("CopyToParallel", {ia("mesh_dim", 0)}, x, w);
  expect_equal(r.y, x, "CopyToParallel forward");
  expect_near_rel(sum_ranks(dot(r.y, w)), dot(x, r.dx), "sum_r <x, w_r> = <x, dx>");
}

// Split(1) of [3, 5] (uneven) -> Broadcast; backward: the local slice.
TEST_F(BoxingNumerics, AllGatherAndItsTransposeSlice) {
  auto [c0, c1] = split_rows(5, n_, me_);
  Tensor x = make(-1, 0, 3, c1 - c0, 0, c0), w = make(-1, 1, 3, 5);
  NodeRun r = run_node("AllGather", {ia("mesh_dim", 0), ia("axis", 1)}, x, w);
  expect_equal(r.y, make(-1, 0, 3, 5), "AllGather forward");
  expect_equal(r.dx, make(-1, 1, 3, c1 - c0, 0, c0), "AllGather backward = this rank's slice of w");
  expect_near_rel(dot(r.y, w), sum_ranks(dot(x, r.dx)), "<G, w> = sum_r <x_r, dx_r>");
}

// Broadcast [3, 5] -> Split(-1) (a negative axis); backward: all-gather.
TEST_F(BoxingNumerics, ShardSliceAndItsTransposeAllGather) {
  auto [c0, c1] = split_rows(5, n_, me_);
  Tensor x = make(-1, 0, 3, 5), w = make(-1, 1, 3, c1 - c0, 0, c0);
  NodeRun r = run_node("ShardSlice", {ia("mesh_dim", 0), ia("axis", -1)}, x, w);
  expect_equal(r.y, make(-1, 0, 3, c1 - c0, 0, c0), "ShardSlice forward");
  expect_equal(r.dx, make(-1, 1, 3, 5), "ShardSlice backward = every rank's w, gathered");
  expect_near_rel(sum_ranks(dot(r.y, w)), dot(x, r.dx), "sum_r <x_r, w_r> = <x, dx>");
}

// Partial [3, 5] -> Split(1) (uneven); backward: all-gather.
TEST_F(BoxingNumerics, ReduceScatterAndItsTransposeAllGather) {
  auto [c0, c1] = split_rows(5, n_, me_);
  Tensor x = make(me_, 0, 3, 5), w = make(-1, 1, 3, c1 - c0, 0, c0);
  NodeRun r = run_node("ReduceScatter", {ia("mesh_dim", 0), ia("axis", 1)}, x, w);
  Tensor want = Tensor::allocate(DType::kFloat64, {3, c1 - c0}).value();
  for (int q = 0; q < n_; ++q) {
    Tensor xq = make(q, 0, 3, c1 - c0, 0, c0);
    for (int64_t k = 0; k < want.numel(); ++k) want.data_as<double>()[k] += xq.data_as<double>()[k];
  }
  expect_equal(r.y, want, "ReduceScatter forward");
  expect_near_rel(sum_ranks(dot(r.y, w)), sum_ranks(dot(x, r.dx)), "sum_r <y_r, w_r> = sum_r <x_r, dx_r>");
}

// Split(0) of [5, 7] -> Split(1) (both uneven); backward: the all-to-all back.
TEST_F(BoxingNumerics, AllToAllAndItsTransposeAllToAll) {
  auto [r0, r1] = split_rows(5, n_, me_);
  auto [c0, c1] = split_rows(7, n_, me_);
  Tensor x = make(-1, 0, r1 - r0, 7, r0, 0), w = make(-1, 1, 5, c1 - c0, 0, c0);
  NodeRun r = run_node("AllToAll", {ia("mesh_dim", 0), ia("axis", 0), ia("to_axis", 1)}, x, w);
  expect_equal(r.y, make(-1, 0, 5, c1 - c0, 0, c0), "AllToAll forward");
  expect_equal(r.dx, make(-1, 1, r1 - r0, 7, r0, 0), "AllToAll backward");
  expect_near_rel(sum_ranks(dot(r.y, w)), sum_ranks(dot(x, r.dx)), "sum_r <y_r, w_r> = sum_r <x_r, dx_r>");
}

// Vocab-parallel embedding: table [7, 3] split on its rows (uneven), ids [5] replicated
// (one negative, counted from the end): the sum over ranks of the outputs is the global
// Gather; the gradient passes the dot-product test with Split and Partial pairings.
TEST_F(BoxingNumerics, VocabParallelGatherAndItsScatterAddGradient) {
  const int64_t vocab = 7, h = 3;
  auto [v0, v1] = split_rows(vocab, n_, me_);
  Tensor table = make(-1, 0, v1 - v0, h, v0, 0);
  Tensor ids = Tensor::allocate(DType::kInt64, {5}).value();
  const int64_t idv[5] = {0, 6, 3, -1, 3};
  for (int i = 0; i < 5; ++i) ids.data_as<int64_t>()[i] = idv[i];
  Graph g;
  Value tv;
  tv.name = "table";
  tv.dtype = DType::kFloat64;
  g.inputs.push_back(g.add_value(tv));
  Value iv;
  iv.name = "ids";
  iv.dtype = DType::kInt64;
  g.inputs.push_back(g.add_value(iv));
  std::string seed;
  auto it = with_backward(std::move(g), "VocabParallelGather", "embedding", {ia("mesh_dim", 0), ia("vocab", vocab)}, "table", &seed);
  ASSERT_TRUE(it != nullptr);
  Tensor w = make(-1, 1, 5, h);  // the cotangent of a Partial value: Broadcast
  auto out = it->run({{"table", table}, {"ids", ids}, {seed, w}});
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  const Tensor& y = (*out)[0];
  Tensor sum = y.clone().value();
  ASSERT_TRUE(g_world->all_reduce(sum.data(), sum.data(), sum.numel(), DType::kFloat64, ReduceOp::kSum).is_ok());
  Tensor full = make(-1, 0, vocab, h);
  Tensor want = Tensor::allocate(DType::kFloat64, {5, h}).value();
  for (int i = 0; i < 5; ++i)
    for (int64_t k = 0; k < h; ++k) want.data_as<double>()[i * h + k] = full.data_as<double>()[((idv[i] + vocab) % vocab) * h + k];
  expect_equal(sum, want, "sum over ranks of VocabParallelGather = Gather of the whole table");
  expect_near_rel(sum_ranks(dot(y, w)), sum_ranks(dot(table, (*out)[1])), "sum_r <y_r, w> = sum_r <T_r, dT_r>");
}

}  // namespace
}  // namespace tessera::train
