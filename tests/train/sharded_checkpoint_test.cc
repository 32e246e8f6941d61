// Sharded checkpoints (train/sharded_checkpoint.h): the block decomposition of flat ranges
// tiles them exactly; a checkpoint sharded at N ranks (FSDP's dim-0 layout and ZeRO-1's
// flat layout), written and read back as a .tsr file, assembles to the original weights and
// optimizer state; chunks that miss or repeat an element are reported naming the parameter.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>

#include "tessera/tsr_file.h"
#include "graph_builder.h"
#include "train/sharded_checkpoint.h"

namespace tessera::train {
namespace {

using testing::Builder;
using testing::random_tensor;

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// Flat (row-major) index of element `e` (row-major inside the block) of block b.
int64_t flat_of(const Shape& shape, const Block& b, int64_t e) {
  std::vector<int64_t> idx(b.extent.size());
  for (size_t d = b.extent.size(); d-- > 0;) { idx[d] = e % b.extent[d]; e /= b.extent[d]; }
  int64_t f = 0;
  for (size_t d = 0; d < shape.size(); ++d) f = f * shape[d] + b.offset[d] + idx[d];
  return f;
}

TEST(ShardedCheckpoint, FlatRangeBlocksTileTheRangeInOrder) {
  for (const Shape& shape : std::vector<Shape>{{7}, {4, 5}, {3, 1, 4}, {2, 3, 2, 3}, {1, 6}, {5, 1}}) {
    const int64_t n = numel(shape);
    for (int64_t b = 0; b <= n; ++b)
      for (int64_t e = b; e <= n; ++e) {
        std::vector<Block> blocks = flat_range_blocks(shape, b, e);
        EXPECT_LE(blocks.size(), b < e ? 2 * shape.size() - 1 : 0) << shape_to_string(shape) << " [" << b << ", " << e << ")";
        int64_t next = b;  // blocks come in order and each is contiguous in the flat index
        for (const Block& k : blocks) {
          ASSERT_EQ(k.offset.size(), shape.size());
          for (int64_t i = 0; i < numel(k.extent); ++i) ASSERT_EQ(flat_of(shape, k, i), next++) << shape_to_string(shape);
        }
        EXPECT_EQ(next, e) << shape_to_string(shape) << " [" << b << ", " << e << ")";
      }
  }
}

TEST(ShardedCheckpoint, LayoutsCoverEveryParameterOnce) {
  const std::vector<Shape> shapes = {{8, 16}, {16}, {3}, {16, 3}, {1}};
  for (int ranks : {1, 2, 3, 4, 5}) {
    for (const ShardLayout& l : {dim0_layout(shapes, ranks), flat_layout(shapes, ranks)}) {
      ASSERT_EQ(l.size(), static_cast<size_t>(ranks));
      std::vector<std::vector<int>> seen(shapes.size());
      for (size_t i = 0; i < shapes.size(); ++i) seen[i].assign(static_cast<size_t>(numel(shapes[i])), 0);
      for (const auto& pieces : l)
        for (const ShardPiece& p : pieces)
          for (int64_t k = p.begin; k < p.end; ++k) ++seen[p.param][k];
      for (const auto& s : seen)
        for (int c : s) EXPECT_EQ(c, 1) << ranks << " ranks";
    }
  }
}

struct Fixture {
  std::shared_ptr<Model> model;
  Tensor w, b, w_m, b_m;
};

// x[N,5] @ w[5,3] + b[3], with AdamW state for w and b.
Fixture make_model() {
  std::mt19937 gen(3);
  Fixture f;
  f.w = random_tensor(DType::kFloat32, {5, 3}, gen);
  f.b = random_tensor(DType::kFloat32, {3}, gen);
  f.w_m = random_tensor(DType::kFloat32, {5, 3}, gen);
  f.b_m = random_tensor(DType::kFloat32, {3}, gen);
  Builder bd;
  const int x = bd.input("x", DType::kFloat32);
  const int w = bd.init("w", f.w.clone().value()), b = bd.init("b", f.b.clone().value());
  const int y = bd.node("MatMul", {x, w}, {}, 1, "", DType::kFloat32)[0];
  bd.output(bd.node("Add", {y, b}, {}, 1, "", DType::kFloat32)[0]);
  f.model = std::make_shared<Model>();
  f.model->graph = bd.g;
  f.model->meta.opset_imports = {{"", 17}};
  auto ts = std::make_shared<TrainingState>();
  ts->optimizer = "adamw";
  ts->step = 4;
  ts->states = {{"w", "exp_avg", std::make_shared<const Tensor>(f.w_m.clone().value())},
                {"b", "exp_avg", std::make_shared<const Tensor>(f.b_m.clone().value())}};
  f.model->training = ts;
  return f;
}

void expect_equal(const Tensor& a, const Tensor& b, const std::string& what) {
  ASSERT_EQ(a.shape(), b.shape()) << what;
  for (int64_t i = 0; i < a.numel(); ++i) ASSERT_EQ(a.data_as<float>()[i], b.data_as<float>()[i]) << what << " element " << i;
}

// Shards, writes, reads back: the model as a sharded checkpoint file holds it.
std::shared_ptr<Model> round_trip(const Fixture& f, const ShardLayout& l, int stage) {
  Model m = *f.model;
  EXPECT_TRUE(shard_checkpoint(m, {"w", "b"}, l, stage).is_ok());
  const std::string path = ::testing::TempDir() + "sharded_ckpt_test.tsr";
  Status s = write_tsr_file(m, path);
  EXPECT_TRUE(s.is_ok()) << s.message();
  auto r = read_tsr_file(path);
  EXPECT_TRUE(r.is_ok()) << r.status().message();
  std::remove(path.c_str());
  return r.is_ok() ? *r : nullptr;
}

TEST(ShardedCheckpoint, RoundTripAtSeveralWorldSizesAndLayouts) {
  Fixture f = make_model();
  const std::vector<Shape> shapes = {{5, 3}, {3}};
  for (int ranks : {1, 2, 3, 4}) {
    for (int stage : {1, 3}) {
      const ShardLayout l = stage == 1 ? flat_layout(shapes, ranks) : dim0_layout(shapes, ranks);
      auto m = round_trip(f, l, stage);
      ASSERT_TRUE(m);
      EXPECT_FALSE(m->chunks.empty());
      EXPECT_EQ(m->shardings.size(), 2u);
      EXPECT_FALSE(m->graph.values[m->graph.find_value("w")].initializer) << "the weight lives in the chunks only";
      EXPECT_NE(sharding_hash(*m), 0u);
      Status s = assemble_sharded_checkpoint(*m);
      ASSERT_TRUE(s.is_ok()) << s.message();
      EXPECT_TRUE(m->chunks.empty());
      EXPECT_EQ(m->graph.inputs.size(), 1u);
      expect_equal(*m->graph.values[m->graph.find_value("w")].initializer, f.w, "w");
      expect_equal(*m->graph.values[m->graph.find_value("b")].initializer, f.b, "b");
      ASSERT_TRUE(m->training);
      EXPECT_EQ(m->training->step, 4);
      int found = 0;
      for (const OptimizerStateTensor& st : m->training->states) {
        if (st.value == "w" && st.name == "exp_avg") { expect_equal(*st.data, f.w_m, "w/exp_avg"); ++found; }
        if (st.value == "b" && st.name == "exp_avg") { expect_equal(*st.data, f.b_m, "b/exp_avg"); ++found; }
      }
      EXPECT_EQ(found, 2) << ranks << " ranks, stage " << stage;
    }
  }
}

/// The fixture's model already carrying a tensor-parallel mesh "tp" of 2 with w split along
/// dim 1 on it (the mesh and sharding a ZeRO checkpoint must keep).
Fixture make_model_with_tp_mesh() {
  Fixture f = make_model();
  DeviceMesh tp;
  tp.name = "tp";
  tp.shape = {2};
  tp.dim_names = {"tp"};
  tp.roles = {MeshDimRole::kTensor};
  f.model->meshes = {tp};
  f.model->shardings = {{"w", 0, {Placement::split(1)}, {5, 3}}};
  return f;
}

TEST(ShardedCheckpoint, KeepsTheModelsOtherMeshesAndShardings) {
  Fixture f = make_model_with_tp_mesh();
  auto m = round_trip(f, dim0_layout({{5, 3}, {3}}, 3), 3);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->meshes.size(), 2u);
  EXPECT_EQ(m->shardings.size(), 3u);
  Status s = assemble_sharded_checkpoint(*m);
  ASSERT_TRUE(s.is_ok()) << s.message();
  ASSERT_EQ(m->meshes.size(), 1u);
  EXPECT_EQ(m->meshes[0].name, "tp");
  ASSERT_EQ(m->shardings.size(), 1u);
  EXPECT_EQ(m->shardings[0].value, "w");
  EXPECT_EQ(m->shardings[0].mesh, 0u);
  EXPECT_TRUE(m->shardings[0].placements[0] == Placement::split(1));
  expect_equal(*m->graph.values[m->graph.find_value("w")].initializer, f.w, "w");
}

// The checkpoint's tessera.zero_mesh property names the mesh to drop at assembly: one that
// is not a number, or names the tensor-parallel mesh, used to be read as mesh 0 (atoll) and
// drop the tp mesh's shardings without a word.
TEST(ShardedCheckpoint, ZeroMeshPropertyMustNameTheZeroMesh) {
  Fixture f = make_model_with_tp_mesh();
  const struct {
    const char* value;
    const char* expect;
  } cases[] = {{"x", "'x' names no mesh"}, {"1x", "'1x' names no mesh"}, {"", "'' names no mesh"}, {"-1", "'-1' names no mesh"},
               {"99999999999999999999", "names no mesh"}, {"0", "names mesh 'tp', not the ZeRO mesh"}};
  for (const auto& k : cases) {
    auto m = round_trip(f, dim0_layout({{5, 3}, {3}}, 2), 3);
    ASSERT_TRUE(m);
    ASSERT_EQ(m->meta.properties["tessera.zero_mesh"], "1");
    m->meta.properties["tessera.zero_mesh"] = k.value;
    Status s = assemble_sharded_checkpoint(*m);
    ASSERT_FALSE(s.is_ok()) << "'" << k.value << "'";
    EXPECT_NE(s.message().find(k.expect), std::string::npos) << s.message();
  }
}

// A global shape far larger than the chunks (2^34 elements, a 64 GiB tensor, under the
// 1 TiB limit) is refused from the chunks' element count, before the tensor is allocated.
TEST(ShardedCheckpoint, HugeGlobalShapeWithFewChunksIsRefusedBeforeAllocating) {
  Fixture f = make_model();
  auto m = round_trip(f, dim0_layout({{5, 3}, {3}}, 2), 3);
  ASSERT_TRUE(m);
  const Shape huge = {int64_t{1} << 17, int64_t{1} << 17};
  for (TensorSharding& t : m->shardings)
    if (t.value == "w") t.global_shape = huge;
  Value& w = m->graph.values[m->graph.find_value("w")];
  w.shape = {Dim{huge[0], ""}, Dim{huge[1], ""}};
  Status s = assemble_sharded_checkpoint(*m);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("parameter 'w' [131072,131072]: its chunks hold 15 of its 17179869184 elements (the checkpoint is incomplete)"),
            std::string::npos)
      << s.message();
}

TEST(ShardedCheckpoint, MissingOrRepeatedChunksNameTheParameter) {
  Fixture f = make_model();
  const ShardLayout l = dim0_layout({{5, 3}, {3}}, 2);
  {  // rank 1's rows of w (rows 3..4) are missing
    auto m = round_trip(f, l, 3);
    ASSERT_TRUE(m);
    std::vector<WeightChunk> kept;
    for (const WeightChunk& c : m->chunks)
      if (!(c.value == "w" && c.state.empty() && c.global_offset[0] == 3)) kept.push_back(c);
    ASSERT_EQ(kept.size() + 1, m->chunks.size());
    m->chunks = kept;
    Status s = assemble_sharded_checkpoint(*m);
    ASSERT_FALSE(s.is_ok());
    EXPECT_NE(s.message().find("parameter 'w'"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("do not cover element [3,0]"), std::string::npos) << s.message();
  }
  {  // every chunk of b is gone
    auto m = round_trip(f, l, 3);
    ASSERT_TRUE(m);
    std::vector<WeightChunk> kept;
    for (const WeightChunk& c : m->chunks)
      if (c.value != "b") kept.push_back(c);
    m->chunks = kept;
    Status s = assemble_sharded_checkpoint(*m);
    ASSERT_FALSE(s.is_ok());
    EXPECT_NE(s.message().find("parameter 'b'"), std::string::npos) << s.message();
  }
  {  // a chunk twice
    auto m = round_trip(f, l, 3);
    ASSERT_TRUE(m);
    m->chunks.push_back(m->chunks.front());
    Status s = assemble_sharded_checkpoint(*m);
    ASSERT_FALSE(s.is_ok());
    EXPECT_NE(s.message().find("more than one chunk"), std::string::npos) << s.message();
  }
}

}  // namespace
}  // namespace tessera::train
