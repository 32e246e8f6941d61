#include "train/sharded_checkpoint.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "train/data_parallel.h"

namespace tessera::train {

namespace {

int64_t numel_of(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// Calls f(full_flat_index, block_flat_index, run) for each run of contiguous elements
// (along the last dim) of block b of a row-major tensor of shape `full`.
template <class F>
void for_each_run(const Shape& full, const Block& b, F f) {
  const size_t r = full.size();
  if (r == 0) { f(0, 0, 1); return; }
  if (numel_of(b.extent) == 0) return;
  const int64_t run = b.extent[r - 1];
  std::vector<int64_t> idx(r, 0);  // index inside the block, last dim fixed at 0
  int64_t bi = 0;
  while (true) {
    int64_t fi = 0;
    for (size_t d = 0; d < r; ++d) fi = fi * full[d] + b.offset[d] + idx[d];
    f(fi, bi, run);
    bi += run;
    size_t d = r - 1;
    while (d-- > 0) {
      if (++idx[d] < b.extent[d]) break;
      idx[d] = 0;
    }
    if (d == static_cast<size_t>(-1)) return;
  }
}

std::string index_string(const Shape& shape, int64_t flat) {
  std::string s;
  for (size_t d = shape.size(); d-- > 0;) {
    s = std::to_string(flat % shape[d]) + (s.empty() ? "" : ",") + s;
    flat /= shape[d];
  }
  return "[" + s + "]";
}

constexpr const char* kStageKey = "tessera.zero_stage";
constexpr const char* kWorldKey = "tessera.world_size";
constexpr const char* kMeshKey = "tessera.zero_mesh";  // index of the ZeRO mesh in Model::meshes

}  // namespace

ShardLayout flat_layout(const std::vector<Shape>& shapes, int ranks) {
  int64_t total = 0;
  std::vector<int64_t> off;
  for (const Shape& s : shapes) { off.push_back(total); total += numel_of(s); }
  const int64_t c = (total + ranks - 1) / ranks;
  ShardLayout l(static_cast<size_t>(ranks));
  for (int r = 0; r < ranks; ++r)
    for (size_t i = 0; i < shapes.size(); ++i) {
      const int64_t a = std::max(r * c, off[i]), b = std::min((r + 1) * c, off[i] + numel_of(shapes[i]));
      if (a < b) l[r].push_back({i, a - off[i], b - off[i]});
    }
  return l;
}

ShardLayout dim0_layout(const std::vector<Shape>& shapes, int ranks) {
  ShardLayout l(static_cast<size_t>(ranks));
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (shapes[i].empty()) { l[0].push_back({i, 0, 1}); continue; }
    const int64_t row = numel_of(shapes[i]) / std::max<int64_t>(shapes[i][0], 1);
    for (int r = 0; r < ranks; ++r) {
      auto [a, b] = split_rows(shapes[i][0], ranks, r);
      if (a < b) l[r].push_back({i, a * row, b * row});
    }
  }
  return l;
}

std::vector<Block> flat_range_blocks(const Shape& shape, int64_t begin, int64_t end) {
  std::vector<Block> out;
  if (begin >= end) return out;
  if (shape.empty()) { out.push_back({{}, {}}); return out; }
  const Shape rest(shape.begin() + 1, shape.end());
  const int64_t row = numel_of(rest);
  auto sub = [&](int64_t r, int64_t b, int64_t e) {  // part [b, e) of row r
    for (Block& k : flat_range_blocks(rest, b, e)) {
      k.offset.insert(k.offset.begin(), r);
      k.extent.insert(k.extent.begin(), 1);
      out.push_back(std::move(k));
    }
  };
  if (row == 0) return out;
  int64_t r0 = begin / row;
  const int64_t r1 = end / row;
  if (r0 == (end - 1) / row && (begin % row != 0 || end % row != 0)) {  // inside one row
    sub(r0, begin - r0 * row, end - r0 * row);
    return out;
  }
  if (begin % row != 0) { sub(r0, begin % row, row); ++r0; }
  if (r1 > r0) {
    Block k;
    k.offset.assign(shape.size(), 0);
    k.offset[0] = r0;
    k.extent = shape;
    k.extent[0] = r1 - r0;
    out.push_back(std::move(k));
  }
  if (end % row != 0) sub(r1, 0, end % row);
  return out;
}

Status shard_checkpoint(Model& m, const std::vector<std::string>& params, const ShardLayout& layout, int zero_stage) {
  Graph& g = m.graph;
  const int ranks = static_cast<int>(layout.size());
  DeviceMesh mesh;
  mesh.name = "zero";
  mesh.shape = {ranks};
  mesh.dim_names = {"dp"};
  mesh.roles = {zero_stage >= 2 ? MeshDimRole::kFsdp : MeshDimRole::kData};
  // Appended: meshes and shardings the model already has (tensor parallelism's) stay.
  const uint32_t mesh_index = static_cast<uint32_t>(m.meshes.size());
  m.meshes.push_back(mesh);
  m.chunks.clear();
  auto ts = std::make_shared<TrainingState>();
  if (m.training) { ts->optimizer = m.training->optimizer; ts->step = m.training->step; }
  std::set<std::string> sharded(params.begin(), params.end());
  for (size_t i = 0; i < params.size(); ++i) {
    const int v = g.find_value(params[i]);
    if (v < 0 || !g.values[v].initializer || g.values[v].initializer->dtype() != DType::kFloat32)
      return invalid_argument("sharded checkpoint: '" + params[i] + "' is not a float32 initializer");
    const Tensor full = *g.values[v].initializer;
    std::vector<std::pair<std::string, std::shared_ptr<const Tensor>>> tensors = {{"", std::make_shared<const Tensor>(full)}};
    if (m.training)
      for (const OptimizerStateTensor& st : m.training->states)
        if (st.value == params[i]) tensors.push_back({st.name, st.data});
    for (int r = 0; r < ranks; ++r)
      for (const ShardPiece& pc : layout[r]) {
        if (pc.param != i) continue;
        if (pc.begin < 0 || pc.end > full.numel())
          return invalid_argument("sharded checkpoint: rank " + std::to_string(r) + "'s piece of '" + params[i] + "' lies outside it");
        for (const Block& b : flat_range_blocks(full.shape(), pc.begin, pc.end))
          for (const auto& [state, src] : tensors) {
            TSR_ASSIGN_OR_RETURN(Tensor data, Tensor::allocate(DType::kFloat32, b.extent));
            const float* s = src->data_as<float>();
            float* d = data.data_as<float>();
            for_each_run(full.shape(), b, [&](int64_t fi, int64_t bi, int64_t n) { std::memcpy(d + bi, s + fi, static_cast<size_t>(n) * 4); });
            m.chunks.push_back({params[i], state, b.offset, std::make_shared<const Tensor>(std::move(data))});
          }
      }
    TensorSharding sh;
    sh.value = params[i];
    sh.mesh = mesh_index;
    sh.placements = {zero_stage >= 2 && full.rank() >= 1 ? Placement::split(0) : Placement::broadcast()};
    sh.global_shape = full.shape();
    m.shardings.push_back(sh);
    // The weight now lives in the chunks only: a graph input of static shape.
    Value& val = g.values[v];
    val.initializer.reset();
    val.dtype = DType::kFloat32;
    val.has_shape = true;
    val.shape.clear();
    for (int64_t d : full.shape()) val.shape.push_back(Dim{d, ""});
    g.inputs.push_back(v);
  }
  if (m.training)
    for (const OptimizerStateTensor& st : m.training->states)
      if (!sharded.count(st.value)) ts->states.push_back(st);
  if (m.training) m.training = std::move(ts);
  m.meta.properties[kStageKey] = std::to_string(zero_stage);
  m.meta.properties[kWorldKey] = std::to_string(ranks);
  m.meta.properties[kMeshKey] = std::to_string(mesh_index);
  return Status::ok();
}

Status assemble_sharded_checkpoint(Model& m) {
  if (m.chunks.empty()) return Status::ok();
  Graph& g = m.graph;
  // The ZeRO mesh (shard_checkpoint records its index); other meshes and their shardings
  // (tensor parallelism's) are kept.
  int64_t zero_mesh = -1;
  auto mk = m.meta.properties.find(kMeshKey);
  if (mk != m.meta.properties.end()) {
    // Strictly a mesh index, of the mesh shard_checkpoint wrote ("zero", one dim): atoll
    // read "x" as 0, and a wrong index dropped another mesh's (tensor parallelism's)
    // shardings without a word.
    const std::string& text = mk->second;
    char* end = nullptr;
    errno = 0;
    zero_mesh = text.empty() || !std::isdigit(static_cast<unsigned char>(text[0])) ? -1 : std::strtoll(text.c_str(), &end, 10);
    if (errno != 0 || !end || *end != '\0') zero_mesh = -1;
    if (zero_mesh < 0 || zero_mesh >= static_cast<int64_t>(m.meshes.size()))
      return invalid_argument("checkpoint: property " + std::string(kMeshKey) + " = '" + text + "' names no mesh (" +
                              std::to_string(m.meshes.size()) + " meshes)");
    const DeviceMesh& zm = m.meshes[static_cast<size_t>(zero_mesh)];
    if (zm.name != "zero" || zm.shape.size() != 1)
      return invalid_argument("checkpoint: property " + std::string(kMeshKey) + " = '" + text + "' names mesh '" + zm.name +
                              "', not the ZeRO mesh ('zero', one dim) that shard_checkpoint writes");
  }
  // Global shapes: the sharding's, else the value's static shape (the reader checked that
  // every chunk lies inside it).
  std::map<std::string, const TensorSharding*> first_sharding;  // a map: no groups x shardings scan
  for (const TensorSharding& t : m.shardings) first_sharding.emplace(t.value, &t);
  auto global_shape = [&](const std::string& name) -> Shape {
    if (auto it = first_sharding.find(name); it != first_sharding.end()) return it->second->global_shape;
    const Value& v = g.values[g.find_value(name)];
    if (v.initializer) return v.initializer->shape();
    Shape s;
    for (const Dim& d : v.shape) s.push_back(d.value);
    return s;
  };
  std::map<std::pair<std::string, std::string>, std::vector<const WeightChunk*>> groups;
  for (const WeightChunk& c : m.chunks) groups[{c.value, c.state}].push_back(&c);
  std::map<std::pair<std::string, std::string>, Tensor> assembled;
  for (const auto& [key, chunks] : groups) {
    const std::string what = "checkpoint: " + std::string(key.second.empty() ? "parameter '" + key.first + "'"
                                                                             : "optimizer state '" + key.first + "/" + key.second + "'");
    const Shape shape = global_shape(key.first);
    // Before allocating the global tensor: its chunks (whose data the file holds) must have
    // as many elements as it. Otherwise a global shape of the file's choosing (up to the
    // 1 TiB tensor limit) would be allocated and zeroed only to find the chunks short; a
    // small tensor still gets the exact first element missing or repeated, below.
    constexpr int64_t kDenseCheckElements = int64_t{1} << 24;
    auto numel = shape_numel(shape);
    if (!numel.is_ok()) return invalid_argument(what + ": " + numel.status().message());
    const int64_t total = numel.value();
    int64_t held = 0;
    for (const WeightChunk* c : chunks) held += c->data->numel();
    if (held != total && total > kDenseCheckElements)
      return invalid_argument(what + " " + shape_to_string(shape) + ": its chunks hold " + std::to_string(held) + " of its " +
                              std::to_string(total) + " elements (the checkpoint is " + (held < total ? "incomplete)" : "corrupt: chunks overlap)"));
    TSR_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(DType::kFloat32, shape));
    std::vector<uint8_t> covered(static_cast<size_t>(t.numel()), 0);
    for (const WeightChunk* c : chunks) {
      if (c->data->dtype() != DType::kFloat32) return invalid_argument(what + ": chunk of dtype " + dtype_name(c->data->dtype()) + ", expected float32");
      const Block b{c->global_offset, c->data->shape()};
      const float* s = c->data->data_as<float>();
      float* d = t.data_as<float>();
      std::string twice;
      for_each_run(shape, b, [&](int64_t fi, int64_t bi, int64_t n) {
        for (int64_t k = 0; k < n; ++k) {
          if (covered[fi + k] && twice.empty()) twice = index_string(shape, fi + k);
          covered[fi + k] = 1;
        }
        std::memcpy(d + fi, s + bi, static_cast<size_t>(n) * 4);
      });
      if (!twice.empty()) return invalid_argument(what + ": element " + twice + " is in more than one chunk");
    }
    for (size_t k = 0; k < covered.size(); ++k)
      if (!covered[k])
        return invalid_argument(what + " " + shape_to_string(shape) + ": its chunks do not cover element " +
                                index_string(shape, static_cast<int64_t>(k)) + " (the checkpoint is incomplete)");
    assembled[key] = std::move(t);
  }
  auto ts = std::make_shared<TrainingState>(m.training ? *m.training : TrainingState{});
  for (auto& [key, t] : assembled) {
    if (!key.second.empty()) {
      if (!assembled.count({key.first, ""}))
        return invalid_argument("checkpoint: optimizer state '" + key.first + "/" + key.second + "' has chunks but its parameter has none");
      ts->states.push_back({key.first, key.second, std::make_shared<const Tensor>(std::move(t))});
      continue;
    }
    const int v = g.find_value(key.first);
    Value& val = g.values[v];
    val.initializer = std::make_shared<Tensor>(std::move(t));
    g.inputs.erase(std::remove(g.inputs.begin(), g.inputs.end(), v), g.inputs.end());
  }
  // A sharded parameter left without any chunk: still an input with no data.
  for (const TensorSharding& t : m.shardings) {
    if (zero_mesh >= 0 && t.mesh != static_cast<uint32_t>(zero_mesh)) continue;
    const int v = g.find_value(t.value);
    if (v >= 0 && !g.values[v].initializer && std::find(g.inputs.begin(), g.inputs.end(), v) != g.inputs.end() &&
        !assembled.count({t.value, ""}))
      return invalid_argument("checkpoint: parameter '" + t.value + "' is sharded but no chunk holds any of it (the checkpoint is incomplete)");
  }
  if (m.training) m.training = std::move(ts);
  m.chunks.clear();
  if (zero_mesh >= 0) {  // drop the ZeRO mesh and its shardings, renumber the others
    std::vector<TensorSharding> kept;
    for (TensorSharding& t : m.shardings) {
      if (t.mesh == static_cast<uint32_t>(zero_mesh)) continue;
      if (t.mesh > static_cast<uint32_t>(zero_mesh)) --t.mesh;
      kept.push_back(std::move(t));
    }
    m.shardings = std::move(kept);
    m.meshes.erase(m.meshes.begin() + zero_mesh);
  }
  m.meta.properties.erase(kStageKey);
  m.meta.properties.erase(kWorldKey);
  m.meta.properties.erase(kMeshKey);
  return Status::ok();
}

uint64_t sharding_hash(const Model& m) {
  if (m.meshes.empty() && m.shardings.empty() && m.chunks.empty()) return 0;
  XXH3_state_t* st = XXH3_createState();
  XXH3_64bits_reset(st);
  auto str = [&](const std::string& s) { XXH3_64bits_update(st, s.data(), s.size() + 1); };
  auto ints = [&](const std::vector<int64_t>& v) {
    const uint64_t n = v.size();
    XXH3_64bits_update(st, &n, sizeof n);
    if (n) XXH3_64bits_update(st, v.data(), v.size() * sizeof(int64_t));
  };
  for (const DeviceMesh& d : m.meshes) { str(d.name); ints(d.shape); }
  for (const TensorSharding& t : m.shardings) {
    str(t.value);
    ints(t.global_shape);
    for (const Placement& p : t.placements) str(p.describe());
  }
  for (const WeightChunk& c : m.chunks) {
    str(c.value);
    str(c.state);
    ints(c.global_offset);
    ints(c.data->shape());
    XXH3_64bits_update(st, c.data->data(), c.data->nbytes());
  }
  const uint64_t h = XXH3_64bits_digest(st);
  XXH3_freeState(st);
  return h;
}

}  // namespace tessera::train
