// .tsr writer. Layout (schema/tessera.fbs): [u32 size][FlatBuffer][pad to 4096][segment 0].
// All constant tensors (initializers of every graph and subgraph, attribute tensors) go into
// one WEIGHTS segment, each at a 64-byte aligned offset. The FlatBuffer is built twice: once
// to learn its size (every scalar field is forced, so the size does not depend on values),
// then with the final absolute segment offset.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <unordered_map>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "schema/tessera_generated.h"
#include "tessera/tsr_file.h"

namespace tessera {

namespace {

uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

/// Assigns every distinct constant tensor a 64-byte aligned place in the weights segment.
class WeightLayout {
 public:
  void add(const Tensor* t) {
    if (!t || offsets_.count(t)) return;
    size_ = align_up(size_, kTsrTensorAlignment);
    offsets_[t] = size_;
    order_.push_back(t);
    size_ += t->nbytes();
  }
  uint64_t offset(const Tensor* t) const { return offsets_.at(t); }
  uint64_t size() const { return size_; }
  const std::vector<const Tensor*>& order() const { return order_; }

 private:
  std::unordered_map<const Tensor*, uint64_t> offsets_;
  std::vector<const Tensor*> order_;
  uint64_t size_ = 0;
};

void collect_tensors(const Graph& g, WeightLayout& layout) {
  for (const Value& v : g.values) layout.add(v.initializer.get());
  for (const Node& n : g.nodes)
    for (const Attribute& a : n.attributes) {
      layout.add(a.t.get());
      if (a.g) collect_tensors(*a.g, layout);
      for (const auto& sg : a.graphs) collect_tensors(*sg, layout);
    }
}

class FbWriter {
 public:
  FbWriter(flatbuffers::FlatBufferBuilder& b, const WeightLayout& layout) : b_(b), layout_(layout) {}

  flatbuffers::Offset<fb::TensorData> tensor_data(const Tensor& t) {
    return fb::CreateTensorData(b_, 0, layout_.offset(&t), t.nbytes());
  }

  flatbuffers::Offset<fb::Graph> graph(const Graph& g) {
    std::vector<flatbuffers::Offset<fb::Value>> values;
    for (const Value& v : g.values) {
      std::vector<flatbuffers::Offset<fb::Dim>> dims;
      for (const Dim& d : v.shape) dims.push_back(fb::CreateDim(b_, d.value, d.symbol.empty() ? 0 : b_.CreateString(d.symbol)));
      auto name = b_.CreateString(v.name);
      auto shape = b_.CreateVector(dims);
      flatbuffers::Offset<fb::TensorData> data = v.initializer ? tensor_data(*v.initializer) : 0;
      values.push_back(fb::CreateValue(b_, name, static_cast<fb::DataType>(v.dtype), v.has_shape, shape, data,
                                       v.outer_scope, v.trainable));
    }
    std::vector<flatbuffers::Offset<fb::Node>> nodes;
    for (const Node& n : g.nodes) {
      std::vector<flatbuffers::Offset<fb::Attribute>> attrs;
      for (const Attribute& a : n.attributes) attrs.push_back(attribute(a));
      nodes.push_back(fb::CreateNode(b_, b_.CreateString(n.name), b_.CreateString(n.op_type), b_.CreateString(n.domain),
                                     n.opset, b_.CreateVector(n.inputs), b_.CreateVector(n.outputs),
                                     b_.CreateVector(attrs), n.pipeline_stage));
    }
    return fb::CreateGraph(b_, b_.CreateString(g.name), b_.CreateVector(values), b_.CreateVector(nodes),
                           b_.CreateVector(g.inputs), b_.CreateVector(g.outputs));
  }

  flatbuffers::Offset<fb::Attribute> attribute(const Attribute& a) {
    auto name = b_.CreateString(a.name);
    auto s = b_.CreateVector(reinterpret_cast<const uint8_t*>(a.s.data()), a.s.size());
    auto floats = b_.CreateVector(a.floats);
    auto ints = b_.CreateVector(a.ints);
    auto strings = b_.CreateVectorOfStrings(a.strings);
    flatbuffers::Offset<fb::TensorValue> t = 0;
    if (a.t) t = fb::CreateTensorValue(b_, static_cast<fb::DataType>(a.t->dtype()), b_.CreateVector(a.t->shape()), tensor_data(*a.t));
    flatbuffers::Offset<fb::Graph> g = a.g ? graph(*a.g) : 0;
    std::vector<flatbuffers::Offset<fb::Graph>> gs;
    for (const auto& sg : a.graphs) gs.push_back(graph(*sg));
    return fb::CreateAttribute(b_, name, static_cast<fb::AttributeType>(a.type), a.f, a.i, s, floats, ints, strings, t, g,
                               b_.CreateVector(gs));
  }

  flatbuffers::Offset<fb::TrainingState> training(const TrainingState& t) {
    std::vector<flatbuffers::Offset<fb::OptimizerState>> states;
    for (const OptimizerStateTensor& st : t.states)
      states.push_back(fb::CreateOptimizerState(b_, b_.CreateString(st.value), b_.CreateString(st.name), tensor_data(*st.data)));
    auto opt = b_.CreateString(t.optimizer);
    auto sv = b_.CreateVector(states);
    return fb::CreateTrainingState(b_, opt, t.step, sv, b_.CreateVector(std::vector<flatbuffers::Offset<fb::Attribute>>{}));
  }

  flatbuffers::Offset<fb::Model> model(const Model& m, uint64_t segment_offset, uint64_t checksum) {
    std::vector<flatbuffers::Offset<fb::OpsetImport>> opsets;
    for (const auto& [d, v] : m.meta.opset_imports) opsets.push_back(fb::CreateOpsetImport(b_, b_.CreateString(d), v));
    std::vector<std::string> keys, vals;
    for (const auto& [k, v] : m.meta.properties) {
      keys.push_back(k);
      vals.push_back(v);
    }
    auto g = graph(m.graph);
    std::vector<flatbuffers::Offset<fb::Segment>> segs;
    segs.push_back(fb::CreateSegment(b_, segment_offset, layout_.size(), kTsrSegmentAlignment, checksum, fb::SegmentKind::WEIGHTS));
    auto pn = b_.CreateString(m.meta.producer_name);
    auto pv = b_.CreateString(m.meta.producer_version);
    auto ops = b_.CreateVector(opsets);
    auto sv = b_.CreateVector(segs);
    auto kv = b_.CreateVectorOfStrings(keys);
    auto vv = b_.CreateVectorOfStrings(vals);
    flatbuffers::Offset<fb::TrainingState> tr = m.training ? training(*m.training) : 0;
    std::vector<flatbuffers::Offset<fb::DeviceMesh>> meshes;
    for (const DeviceMesh& d : m.meshes) {
      std::vector<fb::MeshDimRole> roles;
      for (MeshDimRole r : d.roles) roles.push_back(static_cast<fb::MeshDimRole>(r));
      meshes.push_back(fb::CreateDeviceMesh(b_, b_.CreateString(d.name), b_.CreateVector(d.shape),
                                            b_.CreateVectorOfStrings(d.dim_names), b_.CreateVector(roles),
                                            static_cast<fb::DeviceKind>(d.device_kind)));
    }
    std::vector<flatbuffers::Offset<fb::TensorSharding>> shardings;
    for (const TensorSharding& t : m.shardings) {
      std::vector<flatbuffers::Offset<fb::Placement>> ps;
      for (const Placement& p : t.placements)
        ps.push_back(fb::CreatePlacement(b_, static_cast<fb::PlacementKind>(p.kind), p.split_dim, static_cast<fb::ReduceOp>(p.reduce)));
      shardings.push_back(fb::CreateTensorSharding(b_, b_.CreateString(t.value), t.mesh, b_.CreateVector(ps), b_.CreateVector(t.global_shape)));
    }
    std::vector<flatbuffers::Offset<fb::WeightChunk>> chunks;
    for (const WeightChunk& c : m.chunks)
      chunks.push_back(fb::CreateWeightChunk(b_, b_.CreateString(c.value), b_.CreateVector(c.global_offset),
                                             b_.CreateVector(c.data->shape()), tensor_data(*c.data), b_.CreateString(c.state),
                                             static_cast<fb::DataType>(c.data->dtype())));
    auto mv = b_.CreateVector(meshes);
    auto shv = b_.CreateVector(shardings);
    auto cv = b_.CreateVector(chunks);
    return fb::CreateModel(b_, kTsrFormatVersion, 1, pn, pv, m.meta.ir_version, ops, g, sv, mv, shv, cv, tr, kv, vv);
  }

 private:
  flatbuffers::FlatBufferBuilder& b_;
  const WeightLayout& layout_;
};

std::vector<uint8_t> build_flatbuffer(const Model& m, const WeightLayout& layout, uint64_t seg_offset, uint64_t checksum) {
  flatbuffers::FlatBufferBuilder b(1 << 16);
  b.ForceDefaults(true);
  FbWriter w(b, layout);
  auto root = w.model(m, seg_offset, checksum);
  fb::FinishSizePrefixedModelBuffer(b, root);
  return std::vector<uint8_t>(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
}

}  // namespace

Result<std::vector<uint8_t>> serialize_tsr(const Model& model) {
  TSR_RETURN_IF_ERROR(model.graph.validate().with_context("serialize_tsr"));
  WeightLayout layout;
  collect_tensors(model.graph, layout);
  if (model.training)
    for (const OptimizerStateTensor& st : model.training->states) {
      if (!st.data) return invalid_argument("serialize_tsr: optimizer state '" + st.value + "/" + st.name + "' has no tensor");
      layout.add(st.data.get());
    }

  for (const WeightChunk& c : model.chunks) {
    if (!c.data) return invalid_argument("serialize_tsr: weight chunk of '" + c.value + "' has no tensor");
    layout.add(c.data.get());
  }

  // Segment bytes and their checksum.
  std::vector<uint8_t> segment(layout.size(), 0);
  for (const Tensor* t : layout.order())
    if (t->nbytes()) std::memcpy(segment.data() + layout.offset(t), t->data(), t->nbytes());
  uint64_t checksum = XXH3_64bits(segment.data(), segment.size());

  std::vector<uint8_t> probe = build_flatbuffer(model, layout, 0, checksum);
  const uint64_t check_at = align_up(probe.size(), 8);
  uint64_t seg_offset = align_up(check_at + kTsrHeaderCheckBytes, kTsrSegmentAlignment);
  std::vector<uint8_t> fbuf = build_flatbuffer(model, layout, seg_offset, checksum);
  if (fbuf.size() != probe.size())
    return internal_error("serialize_tsr: FlatBuffer size changed between passes");
  if (fbuf.size() > (size_t{1} << 31) - 1)
    return unimplemented("serialize_tsr: graph metadata exceeds 2 GiB");

  std::vector<uint8_t> out(seg_offset + segment.size(), 0);
  std::memcpy(out.data(), fbuf.data(), fbuf.size());
  // Header check: "TSRH", u32 0, u64 XXH3-64 of the size prefix and FlatBuffer.
  uint64_t fb_sum = XXH3_64bits(fbuf.data(), fbuf.size());
  std::memcpy(out.data() + check_at, "TSRH", 4);
  for (int i = 0; i < 8; ++i) out[check_at + 8 + i] = static_cast<uint8_t>(fb_sum >> (8 * i));
  if (!segment.empty()) std::memcpy(out.data() + seg_offset, segment.data(), segment.size());
  return out;
}

Status write_file_atomic(const std::string& path, const void* bytes, size_t size) {
  std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return io_error("cannot write '" + path + "' (creating its temporary file '" + tmp + "'): " + std::strerror(errno));
  const char* p = static_cast<const char*>(bytes);
  size_t left = size;
  while (left > 0) {
    ssize_t w = ::write(fd, p, left);
    if (w < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return io_error("writing '" + tmp + "' failed: " + std::strerror(e));
    }
    p += w;
    left -= static_cast<size_t>(w);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(tmp.c_str());
    return io_error("writing '" + tmp + "' failed: " + std::strerror(errno));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    return io_error("cannot rename '" + tmp + "' to '" + path + "': " + std::strerror(e));
  }
  return Status::ok();
}

Status write_tsr_file(const Model& model, const std::string& path) {
  TSR_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, serialize_tsr(model));
  return write_file_atomic(path, bytes.data(), bytes.size());
}

}  // namespace tessera
