// The .tsr format: round trip of every graph feature, zero-copy loading, and rejection of
// hand-crafted hostile files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <functional>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "schema/tessera_generated.h"
#include "tessera/session.h"
#include "tessera/tsr_file.h"

namespace tessera {
namespace {

std::shared_ptr<const Tensor> float_tensor(const Shape& s, float start) {
  Tensor t = Tensor::allocate(DType::kFloat32, s).value();
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = start + static_cast<float>(i) * 0.5f;
  return std::make_shared<const Tensor>(std::move(t));
}

/// y = Identity(If(cond) then: x + W else: x), z = x + W; with attributes of every kind.
Model make_model() {
  Model m;
  m.meta.ir_version = 8;
  m.meta.producer_name = "test";
  m.meta.opset_imports = {{"", 17}};
  m.meta.properties["k"] = "v";
  Graph& g = m.graph;
  g.name = "main";
  Value x;
  x.name = "x";
  x.dtype = DType::kFloat32;
  x.has_shape = true;
  x.shape = {{-1, "batch"}, {3, ""}};
  g.inputs.push_back(g.add_value(x));
  Value w;
  w.name = "W";
  w.dtype = DType::kFloat32;
  w.has_shape = true;
  w.shape = {{3, ""}};
  w.initializer = float_tensor({3}, 1.0f);
  w.trainable = true;
  int wid = g.add_value(w);
  Value c;
  c.name = "cond";
  c.dtype = DType::kBool;
  c.has_shape = true;
  c.shape = {};
  g.inputs.push_back(g.add_value(c));

  auto then_g = std::make_shared<Graph>();
  then_g->name = "then";
  Value ox;
  ox.name = "x";
  ox.outer_scope = true;
  Value ow = ox;
  ow.name = "W";
  int tx = then_g->add_value(ox), tw = then_g->add_value(ow);
  Value ts;
  ts.name = "then_sum";
  int tsid = then_g->add_value(ts);
  Node add;
  add.name = "then_add";
  add.op_type = "Add";
  add.opset = 17;
  add.inputs = {tx, tw};
  add.outputs = {tsid};
  then_g->nodes.push_back(add);
  then_g->outputs = {tsid};

  auto else_g = std::make_shared<Graph>();
  else_g->name = "else";
  int ex = else_g->add_value(ox);
  Value eo;
  eo.name = "else_out";
  int eoid = else_g->add_value(eo);
  Node id;
  id.name = "else_id";
  id.op_type = "Identity";
  id.opset = 17;
  id.inputs = {ex};
  id.outputs = {eoid};
  else_g->nodes.push_back(id);
  else_g->outputs = {eoid};

  Value ifo;
  ifo.name = "if_out";
  int ifoid = g.add_value(ifo);
  Node ifn;
  ifn.name = "branch";
  ifn.op_type = "If";
  ifn.opset = 17;
  ifn.inputs = {g.find_value("cond")};
  ifn.outputs = {ifoid};
  Attribute ta, ea;
  ta.name = "then_branch";
  ta.type = AttrType::kGraph;
  ta.g = then_g;
  ea.name = "else_branch";
  ea.type = AttrType::kGraph;
  ea.g = else_g;
  ifn.attributes = {ta, ea};
  ifn.pipeline_stage = 2;
  g.nodes.push_back(ifn);

  Value y;
  y.name = "y";
  y.dtype = DType::kFloat32;
  int yid = g.add_value(y);
  Node idn;
  idn.name = "out";
  idn.op_type = "Identity";
  idn.opset = 17;
  idn.inputs = {ifoid};
  idn.outputs = {yid};
  // Attributes of every kind, to check they survive (Identity ignores them).
  Attribute a;
  a.name = "f"; a.type = AttrType::kFloat; a.f = 2.5f; idn.attributes.push_back(a);
  a = {}; a.name = "i"; a.type = AttrType::kInt; a.i = -7; idn.attributes.push_back(a);
  a = {}; a.name = "s"; a.type = AttrType::kString; a.s = std::string("bin\0ary", 7); idn.attributes.push_back(a);
  a = {}; a.name = "fs"; a.type = AttrType::kFloats; a.floats = {1.f, -2.f}; idn.attributes.push_back(a);
  a = {}; a.name = "is"; a.type = AttrType::kInts; a.ints = {1, 2, 3}; idn.attributes.push_back(a);
  a = {}; a.name = "ss"; a.type = AttrType::kStrings; a.strings = {"a", "bc"}; idn.attributes.push_back(a);
  a = {}; a.name = "t"; a.type = AttrType::kTensor; a.t = float_tensor({2, 2}, -1.f); idn.attributes.push_back(a);
  g.nodes.push_back(idn);

  Value z;
  z.name = "z";
  z.dtype = DType::kFloat32;
  int zid = g.add_value(z);
  Node add2 = add;
  add2.name = "z_add";
  add2.inputs = {g.find_value("x"), wid};
  add2.outputs = {zid};
  g.nodes.push_back(add2);
  g.outputs = {yid, zid};
  return m;
}

TEST(TsrFormat, RoundTripKeepsEveryField) {
  Model m = make_model();
  auto bytes = serialize_tsr(m);
  ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  const std::vector<uint8_t>& b = bytes.value();
  EXPECT_EQ(std::memcmp(b.data() + 8, "TSR1", 4), 0);
  auto r = read_tsr_buffer(b.data(), b.size(), nullptr);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  const Model& m2 = *r.value();
  EXPECT_EQ(m2.format_version, kTsrFormatVersion);
  EXPECT_EQ(m2.meta.ir_version, 8);
  EXPECT_EQ(m2.meta.producer_name, "test");
  EXPECT_EQ(m2.meta.properties.at("k"), "v");
  ASSERT_EQ(m2.meta.opset_imports.size(), 1u);
  const Graph& g = m2.graph;
  ASSERT_EQ(g.values.size(), m.graph.values.size());
  for (size_t i = 0; i < g.values.size(); ++i) {
    EXPECT_EQ(g.values[i].name, m.graph.values[i].name);
    EXPECT_EQ(g.values[i].dtype, m.graph.values[i].dtype);
    EXPECT_EQ(g.values[i].trainable, m.graph.values[i].trainable);
    ASSERT_EQ(g.values[i].shape.size(), m.graph.values[i].shape.size());
    for (size_t d = 0; d < g.values[i].shape.size(); ++d) {
      EXPECT_EQ(g.values[i].shape[d].value, m.graph.values[i].shape[d].value);
      EXPECT_EQ(g.values[i].shape[d].symbol, m.graph.values[i].shape[d].symbol);
    }
  }
  const Value& w = g.values[g.find_value("W")];
  ASSERT_TRUE(w.initializer);
  EXPECT_EQ(std::vector<float>(w.initializer->data_as<float>(), w.initializer->data_as<float>() + 3),
            (std::vector<float>{1.f, 1.5f, 2.f}));
  // Zero copy: the weights point into the buffer, 64-byte aligned relative to its start.
  auto p = reinterpret_cast<uintptr_t>(w.initializer->data());
  EXPECT_GE(p, reinterpret_cast<uintptr_t>(b.data()));
  EXPECT_LT(p, reinterpret_cast<uintptr_t>(b.data() + b.size()));
  EXPECT_EQ((p - reinterpret_cast<uintptr_t>(b.data())) % 64, 0u);
  EXPECT_EQ((p - reinterpret_cast<uintptr_t>(b.data())) / 4096 * 4096, (p - reinterpret_cast<uintptr_t>(b.data())) & ~uintptr_t{4095});

  ASSERT_EQ(g.nodes.size(), 3u);
  EXPECT_EQ(g.nodes[0].pipeline_stage, 2);
  const Attribute* then_a = g.nodes[0].find_attr("then_branch");
  ASSERT_TRUE(then_a && then_a->g);
  EXPECT_EQ(then_a->g->nodes[0].op_type, "Add");
  EXPECT_TRUE(then_a->g->values[0].outer_scope);
  const Node& idn = g.nodes[1];
  EXPECT_EQ(idn.attr_f("f", 0), 2.5f);
  EXPECT_EQ(idn.attr_i("i", 0), -7);
  EXPECT_EQ(idn.attr_s("s", ""), std::string("bin\0ary", 7));
  EXPECT_EQ(idn.attr_floats("fs"), (std::vector<float>{1.f, -2.f}));
  EXPECT_EQ(idn.attr_ints("is"), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(idn.find_attr("ss")->strings, (std::vector<std::string>{"a", "bc"}));
  const Attribute* t = idn.find_attr("t");
  ASSERT_TRUE(t && t->t);
  EXPECT_EQ(t->t->shape(), (Shape{2, 2}));
  EXPECT_EQ(t->t->data_as<float>()[3], 0.5f);

  // Serializing the loaded model again gives the same bytes.
  auto again = serialize_tsr(m2);
  ASSERT_TRUE(again.is_ok());
  EXPECT_EQ(again.value(), b);
}

/// make_model() plus a 2x2 (data, tensor) mesh, W placed Broadcast on the data dim and
/// Split(0) on the tensor dim, and two chunks: W[1:3] and the exp_avg state's W[0:1].
Model make_sharded_model() {
  Model m = make_model();
  DeviceMesh mesh;
  mesh.name = "dp_tp";
  mesh.shape = {2, 2};
  mesh.dim_names = {"dp", "tp"};
  mesh.roles = {MeshDimRole::kData, MeshDimRole::kTensor};
  m.meshes.push_back(mesh);
  TensorSharding t;
  t.value = "W";
  t.placements = {Placement::broadcast(), Placement::split(0)};
  t.global_shape = {3};
  m.shardings.push_back(t);
  TensorSharding y;
  y.value = "y";
  y.placements = {Placement::partial(PartialReduce::kSum), Placement::broadcast()};
  y.global_shape = {2, 3};
  m.shardings.push_back(y);
  m.chunks.push_back({"W", "", {1}, float_tensor({2}, 7.0f)});
  m.chunks.push_back({"W", "exp_avg", {0}, float_tensor({1}, -1.0f)});
  return m;
}

TEST(TsrFormat, RoundTripKeepsShardingMetadata) {
  Model m = make_sharded_model();
  auto bytes = serialize_tsr(m);
  ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  auto r = read_tsr_buffer(bytes->data(), bytes->size(), nullptr);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  const Model& m2 = *r.value();
  ASSERT_EQ(m2.meshes.size(), 1u);
  EXPECT_EQ(m2.meshes[0].name, "dp_tp");
  EXPECT_EQ(m2.meshes[0].shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(m2.meshes[0].dim_names, (std::vector<std::string>{"dp", "tp"}));
  ASSERT_EQ(m2.meshes[0].roles.size(), 2u);
  EXPECT_EQ(m2.meshes[0].roles[1], MeshDimRole::kTensor);
  ASSERT_EQ(m2.shardings.size(), 2u);
  EXPECT_EQ(m2.shardings[0].value, "W");
  ASSERT_EQ(m2.shardings[0].placements.size(), 2u);
  EXPECT_EQ(m2.shardings[0].placements[0].describe(), "B");
  EXPECT_EQ(m2.shardings[0].placements[1].describe(), "S(0)");
  EXPECT_EQ(m2.shardings[1].placements[0].describe(), "P(sum)");
  EXPECT_EQ(m2.shardings[1].global_shape, (std::vector<int64_t>{2, 3}));
  ASSERT_EQ(m2.chunks.size(), 2u);
  EXPECT_EQ(m2.chunks[0].value, "W");
  EXPECT_EQ(m2.chunks[0].state, "");
  EXPECT_EQ(m2.chunks[0].global_offset, (std::vector<int64_t>{1}));
  ASSERT_EQ(m2.chunks[0].data->shape(), (Shape{2}));
  EXPECT_EQ(m2.chunks[0].data->data_as<float>()[1], 7.5f);
  EXPECT_EQ(m2.chunks[1].state, "exp_avg");
  EXPECT_EQ(m2.chunks[1].data->data_as<float>()[0], -1.0f);
  EXPECT_EQ(m2.extras.weight_chunks, 2u);
  auto again = serialize_tsr(m2);
  ASSERT_TRUE(again.is_ok());
  EXPECT_EQ(again.value(), bytes.value());
}

// A mesh without dim names or roles (both optional in DeviceMesh) is written as empty lists;
// it used to be refused when read back ("0 dim names for 2 dims").
TEST(TsrFormat, MeshWithoutNamesOrRolesRoundTrips) {
  Model m = make_sharded_model();
  m.meshes[0].dim_names.clear();
  m.meshes[0].roles.clear();
  auto bytes = serialize_tsr(m);
  ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  auto r = read_tsr_buffer(bytes->data(), bytes->size(), nullptr);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r.value()->meshes[0].shape, (std::vector<int64_t>{2, 2}));
  EXPECT_TRUE(r.value()->meshes[0].dim_names.empty());
  EXPECT_TRUE(r.value()->meshes[0].roles.empty());
}

TEST(TsrFormat, WeightsOnlyInChunksAreNotComplete) {
  Model m = make_sharded_model();
  EXPECT_TRUE(check_weights_complete(m, "m").is_ok());  // W has its initializer and chunks
  const int w = m.graph.find_value("W");
  ASSERT_GE(w, 0);
  m.graph.values[w].initializer.reset();  // a sharded checkpoint: W only in chunks
  m.graph.values[w].trainable = false;
  m.chunks.push_back({"W", "", {0}, float_tensor({1}, 3.0f)});
  Status s = check_weights_complete(m, "ckpt.tsr");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.to_string();
  EXPECT_NE(s.message().find("ckpt.tsr: weight 'W' is stored only as pre-sharded chunks (3 chunks"), std::string::npos)
      << s.message();
  // Session::create refuses such a model unless asked to describe it only. (A sharded
  // checkpoint makes the weight a graph input of its global shape, as here.)
  m.graph.inputs.push_back(w);
  auto model = std::make_shared<Model>(m);
  auto refused = Session::create(model);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("weight 'W' is stored only as pre-sharded chunks"), std::string::npos)
      << refused.status().message();
  SessionOptions describe;
  describe.allow_partial_weights = true;
  auto described = Session::create(model, describe);
  ASSERT_TRUE(described.is_ok()) << described.status().to_string();
  EXPECT_EQ(described.value()->inputs().size(), model->graph.inputs.size());
}

TEST(TsrFormat, RejectsBadShardingMetadata) {
  struct Case {
    const char* what;
    std::function<void(Model&)> spoil;
    const char* expect;
  };
  const std::vector<Case> cases = {
      {"chunk past the end of its tensor", [](Model& m) { m.chunks[0].global_offset = {2}; }, "outside dim 0"},
      {"chunk of a rank other than its tensor's", [](Model& m) { m.chunks[0].global_offset = {0, 0}; }, "differ in rank"},
      {"chunk of an unknown value", [](Model& m) { m.chunks[1].value = "nope"; }, "no such value"},
      {"sharding on a missing mesh", [](Model& m) { m.shardings[0].mesh = 3; }, "mesh 3 does not exist"},
      {"placements of another mesh rank", [](Model& m) { m.shardings[0].placements.pop_back(); }, "1 placements for a mesh of 2"},
      {"split of a dim the tensor lacks", [](Model& m) { m.shardings[0].placements[1] = Placement::split(1); }, "split dim 1"},
      {"mesh dim of size 0", [](Model& m) { m.meshes[0].shape[1] = 0; }, "bad dim size 0"},
      {"roles of another mesh rank", [](Model& m) { m.meshes[0].roles.pop_back(); }, "1 roles for 2 dims"},
      {"unknown placement kind", [](Model& m) { m.shardings[0].placements[0].kind = static_cast<PlacementKind>(7); },
       "unknown placement kind 7"},
      {"unknown reduce op", [](Model& m) { m.shardings[1].placements[0].reduce = static_cast<PartialReduce>(9); }, "unknown reduce op 9"},
      {"unknown mesh role", [](Model& m) { m.meshes[0].roles[0] = static_cast<MeshDimRole>(5); }, "unknown role 5"},
      {"negative mesh dim", [](Model& m) { m.meshes[0].shape[0] = -2; }, "bad dim size -2"},
      {"mesh whose rank count overflows", [](Model& m) { m.meshes[0].shape = {int64_t{1} << 40, int64_t{1} << 40}; }, "bad dim size"},
      {"negative split dim", [](Model& m) { m.shardings[0].placements[1] = Placement::split(-1); }, "split dim -1"},
      {"chunk at a negative offset", [](Model& m) { m.chunks[0].global_offset = {-1}; }, "offset -1"},
      {"chunk whose offset + size overflows", [](Model& m) { m.chunks[0].global_offset = {INT64_MAX}; }, "outside dim 0"},
      // A global shape other than the initializer's: the chunks would be assembled into a
      // tensor of another size than the graph's W [3].
      {"global shape other than the initializer's", [](Model& m) { m.shardings[0].global_shape = {1000}; },
       "global shape [1000] differs from the value's shape [3]"},
      {"global shape whose element count overflows",
       [](Model& m) { m.shardings[1].global_shape = {int64_t{1} << 40, int64_t{1} << 40}; }, "global shape ["},
      {"two different shardings of one value on one mesh",
       [](Model& m) {
         m.shardings.push_back(m.shardings[0]);
         m.shardings.back().placements[1] = Placement::broadcast();
       },
       "a second, different sharding on mesh 0"},
      {"chunk of another dtype than its value", [](Model& m) {
         auto t = Tensor::allocate(DType::kInt32, {2}).value();
         m.chunks[0].data = std::make_shared<const Tensor>(std::move(t));
       }, "dtype int32 differs from the value's float"},
  };
  for (const Case& k : cases) {
    Model m = make_sharded_model();
    k.spoil(m);
    auto bytes = serialize_tsr(m);
    ASSERT_TRUE(bytes.is_ok()) << k.what << ": " << bytes.status().to_string();
    Status s = read_tsr_buffer(bytes->data(), bytes->size(), nullptr).status();
    EXPECT_EQ(s.code(), StatusCode::kInvalidFile) << k.what << ": " << s.to_string();
    EXPECT_NE(s.message().find(k.expect), std::string::npos) << k.what << ": " << s.message();
  }
}

TEST(TsrFormat, FileLoadIsZeroCopyAndRunsBothIfBranches) {
  std::string path = ::testing::TempDir() + "/roundtrip_" + std::to_string(::getpid()) + ".tsr";
  ASSERT_TRUE(write_tsr_file(make_model(), path).is_ok());
  auto s = Session::load(path);
  ASSERT_TRUE(s.is_ok()) << s.status().to_string();
  const Model& m = (*s)->model();
  const Value& w = m.graph.values[m.graph.find_value("W")];
  auto base = reinterpret_cast<uintptr_t>(m.storage.get());
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  auto size = static_cast<uintptr_t>(f.tellg());
  auto p = reinterpret_cast<uintptr_t>(w.initializer->data());
  EXPECT_GE(p, base);
  EXPECT_LT(p, base + size) << "weights must point into the file mapping";
  EXPECT_EQ(p % 64, 0u);
  EXPECT_GE((*s)->load_ms(), 0.0);

  Tensor x = Tensor::allocate(DType::kFloat32, {2, 3}).value();
  for (int i = 0; i < 6; ++i) x.data_as<float>()[i] = static_cast<float>(i);
  for (bool c : {true, false}) {
    Tensor cond = Tensor::allocate(DType::kBool, {}).value();
    cond.data_as<bool>()[0] = c;
    auto out = (*s)->run({{"x", x}, {"cond", cond}});
    ASSERT_TRUE(out.is_ok()) << out.status().to_string();
    const float* y = out.value()[0].data_as<float>();
    const float* z = out.value()[1].data_as<float>();
    for (int i = 0; i < 6; ++i) {
      float wv = 1.0f + 0.5f * static_cast<float>(i % 3);
      EXPECT_FLOAT_EQ(y[i], c ? static_cast<float>(i) + wv : static_cast<float>(i)) << "cond=" << c << " i=" << i;
      EXPECT_FLOAT_EQ(z[i], static_cast<float>(i) + wv);
    }
  }
  ::unlink(path.c_str());
}

// Resident pages of this process (/proc/self/statm), in bytes.
size_t resident_bytes() {
  std::ifstream f("/proc/self/statm");
  size_t total = 0, resident = 0;
  f >> total >> resident;
  return resident * static_cast<size_t>(::sysconf(_SC_PAGESIZE));
}

// release_mapped_pages: a mapped file's pages leave the process's resident memory and read
// back unchanged; a buffer model's and heap memory are left alone (0 released).
TEST(TsrFormat, ReleasedWeightPagesLeaveMemoryAndReadBack) {
  Model m;
  m.meta.ir_version = 8;
  m.meta.opset_imports = {{"", 17}};
  Graph& g = m.graph;
  Value x;
  x.name = "x";
  x.dtype = DType::kFloat32;
  x.has_shape = true;
  x.shape = {{4, ""}};
  g.inputs.push_back(g.add_value(x));
  Value w = x;
  w.name = "W";
  w.shape = {{1 << 20, ""}};  // 4 MiB
  w.initializer = float_tensor({1 << 20}, 1.0f);
  const int wid = g.add_value(w);
  Value y;
  y.name = "y";
  const int yid = g.add_value(y);
  Node n;
  n.name = "size";
  n.op_type = "Size";
  n.opset = 17;
  n.inputs = {wid};
  n.outputs = {yid};
  g.nodes.push_back(n);
  g.outputs = {yid};
  const std::string path = ::testing::TempDir() + "/release_" + std::to_string(::getpid()) + ".tsr";
  ASSERT_TRUE(write_tsr_file(m, path).is_ok());
  auto read = read_tsr_file(path);
  ASSERT_TRUE(read.is_ok()) << read.status().to_string();
  const Tensor& t = *(*read)->graph.values[(*read)->graph.find_value("W")].initializer;
  const float* v = t.data_as<float>();
  auto sum = [&] {
    double acc = 0;
    for (int64_t i = 0; i < t.numel(); ++i) acc += v[i];
    return acc;
  };
  const double want = sum();  // faults every page in
  const size_t before = resident_bytes();
  EXPECT_GE(release_mapped_pages(v, t.nbytes()), (size_t{4} << 20) - 2 * static_cast<size_t>(::sysconf(_SC_PAGESIZE)));
  const size_t after = resident_bytes();
  EXPECT_GE(before, after + (size_t{3} << 20)) << "resident " << before << " -> " << after << " bytes";
  EXPECT_EQ(sum(), want) << "the pages must read back unchanged";
  for (int64_t i : {int64_t{0}, int64_t{12345}, t.numel() - 1}) EXPECT_EQ(v[i], 1.0f + 0.5f * static_cast<float>(i));
  // A buffer model's tensors and heap memory: nothing released, nothing changed.
  auto bytes = serialize_tsr(m);
  ASSERT_TRUE(bytes.is_ok());
  auto buffered = read_tsr_buffer(bytes->data(), bytes->size(), nullptr);
  ASSERT_TRUE(buffered.is_ok());
  const Tensor& bt = *(*buffered)->graph.values[(*buffered)->graph.find_value("W")].initializer;
  EXPECT_EQ(release_mapped_pages(bt.data(), bt.nbytes()), 0u);
  EXPECT_EQ(bt.data_as<float>()[777], 1.0f + 0.5f * 777);
  EXPECT_EQ(release_mapped_pages(w.initializer->data(), w.initializer->nbytes()), 0u);
  EXPECT_EQ(release_mapped_pages(nullptr, 100), 0u);
  ::unlink(path.c_str());
}

TEST(Session, RejectsBadInputsByName) {
  auto bytes = serialize_tsr(make_model()).value();
  auto m = read_tsr_buffer(bytes.data(), bytes.size(), nullptr);
  ASSERT_TRUE(m.is_ok());
  auto s = Session::create(m.value());
  ASSERT_TRUE(s.is_ok());
  Tensor x = Tensor::allocate(DType::kFloat32, {2, 3}).value();
  Tensor cond = Tensor::allocate(DType::kBool, {}).value();
  auto missing = (*s)->run({{"x", x}});
  ASSERT_FALSE(missing.is_ok());
  EXPECT_NE(missing.status().message().find("'cond' is missing"), std::string::npos) << missing.status().message();
  auto unknown = (*s)->run({{"x", x}, {"cond", cond}, {"nope", x}});
  ASSERT_FALSE(unknown.is_ok());
  EXPECT_NE(unknown.status().message().find("nope"), std::string::npos);
  Tensor bad_shape = Tensor::allocate(DType::kFloat32, {2, 4}).value();
  auto shape = (*s)->run({{"x", bad_shape}, {"cond", cond}});
  ASSERT_FALSE(shape.is_ok());
  EXPECT_NE(shape.status().message().find("'x'"), std::string::npos) << shape.status().message();
  Tensor bad_dtype = Tensor::allocate(DType::kInt64, {2, 3}).value();
  auto dtype = (*s)->run({{"x", bad_dtype}, {"cond", cond}});
  ASSERT_FALSE(dtype.is_ok());
  EXPECT_NE(dtype.status().message().find("dtype int64"), std::string::npos) << dtype.status().message();
  auto twice = (*s)->run({{"x", x}, {"x", x}, {"cond", cond}});
  EXPECT_FALSE(twice.is_ok());
}

// ---- hand-crafted hostile files ----

/// Builds a .tsr image by hand so every field can be made hostile.
struct Crafted {
  uint64_t seg_offset = 4096, seg_size = 64, tensor_offset = 0, tensor_size = 12;
  uint32_t segment_index = 0;
  int node_input = 0;
  const char* identifier = "TSR1";
  int64_t dim = 3;
  bool good_checksum = true;
};

std::vector<uint8_t> craft(const Crafted& c) {
  flatbuffers::FlatBufferBuilder b;
  b.ForceDefaults(true);
  auto dims = b.CreateVector(std::vector<flatbuffers::Offset<fb::Dim>>{fb::CreateDim(b, c.dim, 0)});
  auto td = fb::CreateTensorData(b, c.segment_index, c.tensor_offset, c.tensor_size);
  auto w = fb::CreateValue(b, b.CreateString("W"), fb::DataType::FLOAT, true, dims, td);
  auto ydims = b.CreateVector(std::vector<flatbuffers::Offset<fb::Dim>>{fb::CreateDim(b, 3, 0)});
  auto y = fb::CreateValue(b, b.CreateString("y"), fb::DataType::FLOAT, true, ydims);
  auto values = b.CreateVector(std::vector<flatbuffers::Offset<fb::Value>>{w, y});
  auto node = fb::CreateNode(b, b.CreateString("n"), b.CreateString("Identity"), b.CreateString(""), 17,
                             b.CreateVector(std::vector<int>{c.node_input}), b.CreateVector(std::vector<int>{1}));
  auto graph = fb::CreateGraph(b, b.CreateString("g"), values, b.CreateVector(std::vector<flatbuffers::Offset<fb::Node>>{node}),
                               b.CreateVector(std::vector<int>{}), b.CreateVector(std::vector<int>{1}));
  std::vector<uint8_t> seg(64, 0);
  float ones[3] = {1, 2, 3};
  std::memcpy(seg.data(), ones, sizeof ones);
  uint64_t sum = XXH3_64bits(seg.data(), std::min<uint64_t>(c.seg_size, seg.size()));
  auto segs = b.CreateVector(std::vector<flatbuffers::Offset<fb::Segment>>{
      fb::CreateSegment(b, c.seg_offset, c.seg_size, 4096, c.good_checksum ? sum : sum ^ 1)});
  auto model = fb::CreateModel(b, 1, 1, 0, 0, 8, 0, graph, segs);
  b.FinishSizePrefixed(model, c.identifier);
  std::vector<uint8_t> out(4096 + 64, 0);
  std::memcpy(out.data(), b.GetBufferPointer(), b.GetSize());
  size_t at = (b.GetSize() + 7) / 8 * 8;
  std::memcpy(out.data() + at, "TSRH", 4);
  uint64_t fb_sum = XXH3_64bits(b.GetBufferPointer(), b.GetSize());
  std::memcpy(out.data() + at + 8, &fb_sum, 8);
  std::memcpy(out.data() + 4096, seg.data(), 64);
  return out;
}

Status load(const std::vector<uint8_t>& img) { return read_tsr_buffer(img.data(), img.size(), nullptr).status(); }

TEST(TsrFormat, CraftedBaselineLoads) {
  Crafted c;
  auto img = craft(c);
  Status s = load(img);
  ASSERT_TRUE(s.is_ok()) << s.to_string();
}

TEST(TsrFormat, RejectsHostileFiles) {
  struct Case {
    const char* what;
    Crafted c;
    const char* expect;
  };
  std::vector<Case> cases;
  Crafted c;
  c.identifier = "XXXX";
  cases.push_back({"wrong identifier", c, "identifier"});
  c = {};
  c.seg_offset = 1ull << 62;
  cases.push_back({"segment past the end", c, "past the end"});
  c = {};
  c.seg_size = ~0ull - 100;
  cases.push_back({"segment size overflows", c, "past the end"});
  c = {};
  c.seg_offset = 4000;
  cases.push_back({"misaligned segment", c, "aligned"});
  c = {};
  c.seg_offset = 0;
  cases.push_back({"segment overlapping the FlatBuffer", c, "overlaps"});
  c = {};
  c.tensor_offset = 64;
  cases.push_back({"tensor outside its segment", c, "outside"});
  c = {};
  c.tensor_offset = ~0ull - 63;
  cases.push_back({"tensor offset overflows", c, "outside"});
  c = {};
  c.tensor_size = 8;
  cases.push_back({"tensor size does not match shape", c, "do not match"});
  c = {};
  c.dim = int64_t{1} << 62;
  cases.push_back({"huge dim", c, "W"});
  c = {};
  c.segment_index = 7;
  cases.push_back({"missing segment", c, "segment 7"});
  c = {};
  c.node_input = 5;
  cases.push_back({"node names a value that does not exist", c, "out of range"});
  c = {};
  c.good_checksum = false;
  cases.push_back({"checksum mismatch", c, "checksum"});
  for (const Case& k : cases) {
    Status s = load(craft(k.c));
    EXPECT_FALSE(s.is_ok()) << k.what;
    EXPECT_EQ(s.code(), StatusCode::kInvalidFile) << k.what << ": " << s.to_string();
    EXPECT_NE(s.message().find(k.expect), std::string::npos) << k.what << ": " << s.message();
  }
}

TEST(TsrFormat, RejectsTinyAndMissingFiles) {
  std::vector<uint8_t> tiny = {1, 2, 3};
  EXPECT_FALSE(load(tiny).is_ok());
  auto r = read_tsr_file("/nonexistent/model.tsr");
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("/nonexistent/model.tsr"), std::string::npos);
}

}  // namespace
}  // namespace tessera
