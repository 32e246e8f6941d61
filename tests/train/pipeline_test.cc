// Pipeline parallelism without MPI: the GPipe and 1F1B schedules (train/pipeline.h) run on
// a simulator of blocking (rendezvous) send/recv between neighbouring stages, and the cut
// of converter/pipeline_stages.h on hand-built graphs.
#include <gtest/gtest.h>

#include <algorithm>
#include <tuple>

#include "converter/pipeline_stages.h"
#include "graph_builder.h"
#include "train/pipeline.h"

namespace tessera::train {
namespace {

using testing::Builder;

// One message of a stage's program: (send?, peer stage, forward activation?, micro-batch).
using Msg = std::tuple<bool, int, bool, int>;

std::vector<Msg> messages(PipelineSchedule s, int P, int stage, int M, int* peak) {
  std::vector<Msg> out;
  int held = 0;
  *peak = 0;
  for (const PipelineAction& a : pipeline_schedule(s, P, stage, M)) {
    switch (a.kind) {
      case PipelineAction::kForward: *peak = std::max(*peak, ++held); break;
      case PipelineAction::kBackward: --held; break;
      case PipelineAction::kRecvForward: if (stage > 0) out.emplace_back(false, stage - 1, true, a.micro_batch); break;
      case PipelineAction::kSendForward: if (stage + 1 < P) out.emplace_back(true, stage + 1, true, a.micro_batch); break;
      case PipelineAction::kRecvBackward: if (stage + 1 < P) out.emplace_back(false, stage + 1, false, a.micro_batch); break;
      case PipelineAction::kSendBackward: if (stage > 0) out.emplace_back(true, stage - 1, false, a.micro_batch); break;
    }
  }
  return out;
}

// Runs every stage's program with sends that wait for their receiver (the worst case of
// MPI): true when all finish, false on a deadlock. Matched messages must be the same one.
bool runs_to_completion(PipelineSchedule s, int P, int M) {
  std::vector<std::vector<Msg>> prog(P);
  int peak = 0;
  for (int k = 0; k < P; ++k) prog[k] = messages(s, P, k, M, &peak);
  std::vector<size_t> pc(P, 0);
  for (;;) {
    bool done = true, moved = false;
    for (int k = 0; k < P; ++k) {
      if (pc[k] == prog[k].size()) continue;
      done = false;
      const auto [send, peer, fwd, mb] = prog[k][pc[k]];
      if (pc[peer] == prog[peer].size()) continue;
      const auto [send2, peer2, fwd2, mb2] = prog[peer][pc[peer]];
      if (peer2 != k || send2 == send) continue;
      EXPECT_EQ(fwd, fwd2) << "stage " << k << " and " << peer << " pair different messages";
      EXPECT_EQ(mb, mb2) << "stage " << k << " and " << peer << " pair different micro-batches";
      ++pc[k];
      ++pc[peer];
      moved = true;
    }
    if (done) return true;
    if (!moved) return false;
  }
}

TEST(PipelineSchedule, EveryMicroBatchOnceForwardThenBackward) {
  for (auto s : {PipelineSchedule::kGPipe, PipelineSchedule::kOneFOneB})
    for (int P = 1; P <= 5; ++P)
      for (int stage = 0; stage < P; ++stage)
        for (int M = 1; M <= 8; ++M) {
          std::vector<int> f(M, 0), b(M, 0);
          for (const PipelineAction& a : pipeline_schedule(s, P, stage, M)) {
            if (a.kind == PipelineAction::kForward) ++f[a.micro_batch];
            if (a.kind == PipelineAction::kBackward) {
              EXPECT_EQ(f[a.micro_batch], 1) << "backward before forward";
              ++b[a.micro_batch];
            }
          }
          for (int i = 0; i < M; ++i) EXPECT_TRUE(f[i] == 1 && b[i] == 1) << "P " << P << " stage " << stage << " M " << M;
        }
}

TEST(PipelineSchedule, NoDeadlockWithBlockingSends) {
  for (auto s : {PipelineSchedule::kGPipe, PipelineSchedule::kOneFOneB})
    for (int P = 1; P <= 6; ++P)
      for (int M = 1; M <= 9; ++M) EXPECT_TRUE(runs_to_completion(s, P, M)) << "P " << P << " M " << M;
}

TEST(PipelineSchedule, PeakMicroBatchesHeld) {
  for (int P = 1; P <= 5; ++P)
    for (int stage = 0; stage < P; ++stage)
      for (int M = 1; M <= 8; ++M) {
        int peak = 0;
        messages(PipelineSchedule::kGPipe, P, stage, M, &peak);
        EXPECT_EQ(peak, M) << "GPipe holds every micro-batch";
        messages(PipelineSchedule::kOneFOneB, P, stage, M, &peak);
        EXPECT_EQ(peak, std::min(P - stage, M)) << "1F1B: P " << P << " stage " << stage << " M " << M;
      }
}

TEST(PipelineSchedule, Parse) {
  EXPECT_TRUE(parse_schedule("gpipe").is_ok());
  EXPECT_TRUE(parse_schedule("1f1b").is_ok());
  auto bad = parse_schedule("zb");
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("'zb'"), std::string::npos);
}

// x -> [MatMul w_i, Add b_i] x layers, with a residual from layer 0's output to the last.
Builder mlp(int layers, std::vector<int64_t> widths) {
  Builder b;
  std::mt19937 gen(1);
  int h = b.input("x", DType::kFloat32);
  int first = -1;
  for (int i = 0; i < layers; ++i) {
    const int w = b.init("w" + std::to_string(i), testing::random_tensor(DType::kFloat32, {8, widths[i]}, gen));
    const int bias = b.init("b" + std::to_string(i), testing::random_tensor(DType::kFloat32, {widths[i]}, gen));
    h = b.op("Add", {b.op("MatMul", {h, w}), bias});
    if (i == 0) first = h;
    if (i == layers - 1 && layers > 2) h = b.op("Add", {h, first});
  }
  b.output(h);
  return b;
}

TEST(PipelineCut, BalancesParameterBytesAndRelaysSkips) {
  Builder b = mlp(4, {8, 8, 8, 8});  // four equal layers
  auto cut = cut_pipeline(b.g, 2);
  ASSERT_TRUE(cut.is_ok()) << cut.status().message();
  ASSERT_EQ(cut->param_bytes.size(), 2u);
  EXPECT_EQ(cut->param_bytes[0], cut->param_bytes[1]);
  EXPECT_EQ(cut->param_bytes[0], 2 * (8 * 8 + 8) * 4);
  // The residual from layer 0 to the last layer crosses the cut with layer 1's output.
  EXPECT_EQ(cut->boundary[1].size(), 2u);
  // Four stages: the residual crosses every cut (relayed by the middle stages).
  auto cut4 = cut_pipeline(b.g, 4);
  ASSERT_TRUE(cut4.is_ok()) << cut4.status().message();
  const int res = b.g.nodes[1].outputs[0];
  for (int k = 1; k < 4; ++k)
    EXPECT_NE(std::find(cut4->boundary[k].begin(), cut4->boundary[k].end(), res), cut4->boundary[k].end()) << "cut " << k;
  // Stages are contiguous and ordered.
  for (size_t i = 1; i < cut4->node_stage.size(); ++i) EXPECT_GE(cut4->node_stage[i], cut4->node_stage[i - 1]);
  EXPECT_EQ(cut4->node_stage.back(), 3);
}

TEST(PipelineCut, TheHeavyWeightGetsAStageOfItsOwn) {
  Builder b = mlp(3, {64, 8, 8});  // w0 [8, 64] holds most of the bytes (shapes do not matter here)
  auto cut = cut_pipeline(b.g, 2);
  ASSERT_TRUE(cut.is_ok()) << cut.status().message();
  // The best cut is right after w0's MatMul: stage 0 = w0 alone (8 * 64 * 4 bytes), stage 1 =
  // b0, w1, b1, w2, b2.
  EXPECT_EQ(cut->param_bytes[0], 8 * 64 * 4);
  EXPECT_EQ(cut->param_bytes[1], (64 + 8 * 8 + 8 + 8 * 8 + 8) * 4);
  EXPECT_EQ(cut->node_stage[0], 0);
  EXPECT_EQ(cut->node_stage[1], 1);
}

TEST(PipelineCut, TooSmallAndTiedWeightsAreErrors) {
  Builder b = mlp(1, {8});
  auto cut = cut_pipeline(b.g, 5);
  ASSERT_FALSE(cut.is_ok());
  EXPECT_NE(cut.status().message().find("cannot be cut into 5 stages"), std::string::npos) << cut.status().message();
  EXPECT_FALSE(cut_pipeline(b.g, 0).is_ok());
  // A weight read by the first and the last node can only be in one stage.
  Builder t;
  std::mt19937 gen(2);
  int x = t.input("x", DType::kFloat32);
  int w = t.init("w", testing::random_tensor(DType::kFloat32, {8, 8}, gen));
  int v = t.init("v", testing::random_tensor(DType::kFloat32, {8, 8}, gen));
  int h = t.op("MatMul", {t.op("MatMul", {t.op("MatMul", {x, w}), v}), w});
  t.output(h);
  auto tied = cut_pipeline(t.g, 2);
  ASSERT_FALSE(tied.is_ok());
  EXPECT_NE(tied.status().message().find("cannot be cut into 2 stages"), std::string::npos) << tied.status().message();
}

// A subgraph's outer-scope read is a read by its node: h0 = x w0; h = h0 w1; z = h w2;
// y = If(cond) whose branches read h0 from the enclosing graph (no input edge); out = z + y.
// Cut into 3 stages (one weight each: {0}, {1}, {2, 3, 4}), the If in the last stage needs
// h0: it crosses both cuts. The cut used to look at node inputs alone and did not send h0
// past the second one.
TEST(PipelineCut, SubgraphOuterScopeReadsCrossTheCut) {
  Builder b;
  std::mt19937 gen(3);
  int x = b.input("x", DType::kFloat32);
  int cond = b.input("cond", DType::kBool);
  int w0 = b.init("w0", testing::random_tensor(DType::kFloat32, {8, 8}, gen));
  int w1 = b.init("w1", testing::random_tensor(DType::kFloat32, {8, 8}, gen));
  int w2 = b.init("w2", testing::random_tensor(DType::kFloat32, {8, 8}, gen));
  int h0 = b.op("MatMul", {x, w0});
  int z = b.op("MatMul", {b.op("MatMul", {h0, w1}), w2});
  const int h = h0;
  auto branch = [&](const std::string& op) {
    auto sg = std::make_shared<Graph>();
    Value outer;
    outer.name = b.name(h);
    outer.outer_scope = true;
    const int in = sg->add_value(outer);
    Value out;
    out.name = op + "_out";
    out.dtype = DType::kFloat32;
    const int o = sg->add_value(out);
    Node n;
    n.op_type = op;
    n.inputs = {in};
    n.outputs = {o};
    sg->nodes.push_back(n);
    sg->outputs = {o};
    sg->reindex();
    Attribute a;
    a.name = op == "Identity" ? "then_branch" : "else_branch";
    a.type = AttrType::kGraph;
    a.g = sg;
    return a;
  };
  int y = b.op("If", {cond}, {branch("Identity"), branch("Neg")});
  b.output(b.op("Add", {z, y}));
  auto cut = cut_pipeline(b.g, 3);
  ASSERT_TRUE(cut.is_ok()) << cut.status().message();
  ASSERT_EQ(cut->node_stage, (std::vector<int>{0, 1, 2, 2, 2}));
  EXPECT_NE(std::find(cut->boundary[2].begin(), cut->boundary[2].end(), h), cut->boundary[2].end())
      << "the If's outer-scope read of '" << b.name(h) << "' does not cross the cut:\n" << cut->describe(b.g);
  // A weight read inside the branches (not as an input) ties the If to the weight's stage.
  Builder t = b;
  t.g.nodes[3].attributes[0].g->values[0].name = t.name(w0);
  t.g.nodes[3].attributes[1].g->values[0].name = t.name(w0);
  auto tied = cut_pipeline(t.g, 3);
  EXPECT_FALSE(tied.is_ok()) << "w0 is read by the first node and, through the If's branches, by the third";
}

TEST(PipelineCut, FromTheFile) {
  Builder b = mlp(4, {8, 8, 8, 8});
  auto none = pipeline_cut_from_graph(b.g, 2);
  ASSERT_TRUE(none.is_ok());
  EXPECT_EQ(none->stages, 0);
  auto cut = cut_pipeline(b.g, 2);
  ASSERT_TRUE(cut.is_ok());
  apply_pipeline_cut(b.g, *cut);
  auto back = pipeline_cut_from_graph(b.g, 2);
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  EXPECT_EQ(back->node_stage, cut->node_stage);
  EXPECT_EQ(back->boundary, cut->boundary);
  auto other = pipeline_cut_from_graph(b.g, 3);
  ASSERT_FALSE(other.is_ok());
  EXPECT_NE(other.status().message().find("cut into 2 pipeline stages"), std::string::npos) << other.status().message();
  // A value flowing backwards: the last node put in stage 0.
  b.g.nodes.back().pipeline_stage = 0;
  auto bad = pipeline_cut_from_graph(b.g, 2);
  ASSERT_FALSE(bad.is_ok());
}

}  // namespace
}  // namespace tessera::train
