// .tsr reader: mmap, verify, then build the Graph IR with tensors pointing into the mapping.
// Nothing read from the file is trusted before it is checked: the FlatBuffer by the
// FlatBuffers verifier, each segment and tensor by explicit bounds and overflow checks,
// each checksum by XXH3-64, and the graph's structure by Graph::validate().
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "schema/tessera_generated.h"
#include "tessera/tsr_file.h"

namespace tessera {

namespace {

constexpr int kMaxGraphDepth = 16;

struct SegmentView {
  const uint8_t* data;
  uint64_t size;
};

class Reader {
 public:
  Reader(const uint8_t* base, uint64_t size, std::shared_ptr<const void> keepalive, std::string what)
      : base_(base), size_(size), keepalive_(std::move(keepalive)), what_(std::move(what)) {}

  Result<std::shared_ptr<Model>> read(const TsrReadOptions& opt) {
    if (size_ < 12) return bad("file is too small to be a .tsr (" + std::to_string(size_) + " bytes)");
    if (!fb::SizePrefixedModelBufferHasIdentifier(base_))
      return bad("not a .tsr file (identifier is not \"TSR1\"); ONNX models need `tessera convert` first");
    uint32_t fb_size = flatbuffers::ReadScalar<uint32_t>(base_);
    if (uint64_t{fb_size} + 4 > size_)
      return bad("FlatBuffer size " + std::to_string(fb_size) + " runs past the end of the file (" +
                 std::to_string(size_) + " bytes); the file is truncated");
    // Header check: the FlatBuffer's bytes must hash to the value stored after them.
    const uint64_t check_at = (uint64_t{fb_size} + 4 + 7) / 8 * 8;
    if (check_at + kTsrHeaderCheckBytes > size_) return bad("the file is truncated (no header check after the FlatBuffer)");
    if (std::memcmp(base_ + check_at, "TSRH", 4) != 0) return bad("header check marker \"TSRH\" is missing (corrupt file)");
    uint64_t stored = 0;
    for (int i = 0; i < 8; ++i) stored |= uint64_t{base_[check_at + 8 + i]} << (8 * i);
    if (opt.verify_checksums && XXH3_64bits(base_, uint64_t{fb_size} + 4) != stored)
      return bad("header checksum mismatch (the graph metadata is corrupt)");
    flatbuffers::Verifier::Options vo;
    vo.max_depth = 128;
    vo.max_tables = 50'000'000;
    flatbuffers::Verifier verifier(base_, uint64_t{fb_size} + 4, vo);
    if (!fb::VerifySizePrefixedModelBuffer(verifier)) return bad("the FlatBuffer failed verification (corrupt file)");
    const fb::Model* m = fb::GetSizePrefixedModel(base_);
    if (m->min_reader_version() > kTsrFormatVersion)
      return bad("needs reader version " + std::to_string(m->min_reader_version()) + "; this build reads up to " +
                 std::to_string(kTsrFormatVersion));

    // Segments: bounds, alignment, checksum.
    uint64_t fb_end = check_at + kTsrHeaderCheckBytes;
    if (m->segments()) {
      for (uint32_t i = 0; i < m->segments()->size(); ++i) {
        const fb::Segment* s = m->segments()->Get(i);
        std::string sn = "segment " + std::to_string(i);
        uint64_t a = s->alignment();
        if (a < kTsrTensorAlignment || (a & (a - 1)) != 0) return bad(sn + ": alignment " + std::to_string(a) + " is not a power of two >= 64");
        if (s->offset() % a != 0) return bad(sn + ": offset " + std::to_string(s->offset()) + " is not aligned to " + std::to_string(a));
        if (s->offset() < fb_end) return bad(sn + ": offset overlaps the FlatBuffer");
        if (s->offset() > size_ || s->size() > size_ - s->offset())
          return bad(sn + ": bytes [" + std::to_string(s->offset()) + ", +" + std::to_string(s->size()) +
                     ") lie past the end of the file (" + std::to_string(size_) + " bytes); the file is truncated");
        const uint8_t* p = base_ + s->offset();
        if (opt.verify_checksums && XXH3_64bits(p, s->size()) != s->checksum_xxh3())
          return bad(sn + ": checksum mismatch (the weights are corrupt)");
        segments_.push_back({p, s->size()});
      }
    }

    auto model = std::make_shared<Model>();
    model->storage = keepalive_;
    model->format_version = m->format_version();
    model->meta.ir_version = m->ir_version();
    if (m->producer_name()) model->meta.producer_name = m->producer_name()->str();
    if (m->producer_version()) model->meta.producer_version = m->producer_version()->str();
    if (m->opset_imports())
      for (const fb::OpsetImport* o : *m->opset_imports())
        model->meta.opset_imports.emplace_back(o->domain() ? o->domain()->str() : "", o->version());
    if (m->metadata_keys() && m->metadata_values()) {
      if (m->metadata_keys()->size() != m->metadata_values()->size()) return bad("metadata keys and values differ in count");
      for (uint32_t i = 0; i < m->metadata_keys()->size(); ++i)
        model->meta.properties[m->metadata_keys()->Get(i)->str()] = m->metadata_values()->Get(i)->str();
    }
    model->extras.meshes = m->meshes() ? m->meshes()->size() : 0;
    model->extras.tensor_shardings = m->shardings() ? m->shardings()->size() : 0;
    model->extras.weight_chunks = m->chunks() ? m->chunks()->size() : 0;
    model->extras.training_state = m->training() != nullptr;
    model->extras.segments = segments_.size();
    TSR_RETURN_IF_ERROR(read_graph(*m->graph(), model->graph, 0));
    TSR_RETURN_IF_ERROR(model->graph.validate().with_context(what_));
    if (m->training()) TSR_RETURN_IF_ERROR(read_training(*m->training(), *model));
    TSR_RETURN_IF_ERROR(read_sharding(*m, *model));
    return model;
  }

 private:
  Status bad(const std::string& msg) const { return invalid_file(what_ + ": " + msg); }

  Result<Tensor> tensor(const fb::TensorData* d, DType dtype, const Shape& shape, const std::string& name) {
    if (!d) return bad("tensor '" + name + "' has no data reference");
    if (d->segment() >= segments_.size()) return bad("tensor '" + name + "' names segment " + std::to_string(d->segment()) + " which does not exist");
    const SegmentView& s = segments_[d->segment()];
    if (d->offset() % kTsrTensorAlignment != 0) return bad("tensor '" + name + "' is not 64-byte aligned in its segment");
    if (d->offset() > s.size || d->size() > s.size - d->offset())
      return bad("tensor '" + name + "' lies outside its segment");
    auto numel = shape_numel(shape);
    if (!numel.is_ok()) return bad("tensor '" + name + "': " + numel.status().message());
    size_t es = dtype_size(dtype);
    if (es == 0) return bad("tensor '" + name + "' has unsupported dtype " + dtype_name(dtype));
    if (static_cast<uint64_t>(numel.value()) > d->size() / es || static_cast<uint64_t>(numel.value()) * es != d->size())
      return bad("tensor '" + name + "': " + std::to_string(d->size()) + " bytes do not match shape " + shape_to_string(shape) +
                 " of " + dtype_name(dtype));
    return Tensor::wrap(dtype, shape, const_cast<uint8_t*>(s.data + d->offset()), keepalive_);
  }

  // TrainingState: each optimizer state tensor takes the dtype and shape of the parameter
  // it names, which must be an initializer of the main graph.
  Status read_training(const fb::TrainingState& ft, Model& model) {
    auto t = std::make_shared<TrainingState>();
    if (ft.optimizer()) t->optimizer = ft.optimizer()->str();
    t->step = ft.step();
    if (t->step < 0) return bad("training state: negative step " + std::to_string(t->step));
    if (ft.states())
      for (const fb::OptimizerState* fs : *ft.states()) {
        OptimizerStateTensor st;
        st.value = fs->value()->str();
        st.name = fs->name()->str();
        const std::string what = "optimizer state '" + st.value + "/" + st.name + "'";
        const int v = model.graph.find_value(st.value);
        if (v < 0 || !model.graph.values[v].initializer)
          return bad(what + " belongs to '" + st.value + "', which is not an initializer of the graph");
        const Tensor& p = *model.graph.values[v].initializer;
        TSR_ASSIGN_OR_RETURN(Tensor data, tensor(fs->data(), p.dtype(), p.shape(), what));
        st.data = std::make_shared<const Tensor>(std::move(data));
        t->states.push_back(std::move(st));
      }
    model.training = std::move(t);
    return Status::ok();
  }

  /// The shape the graph fixes for a value: its initializer's, else its declared shape when
  /// every dim is static; nullopt when the graph leaves it open.
  static std::optional<std::vector<int64_t>> known_shape(const Value& val) {
    if (val.initializer) return val.initializer->shape();
    if (!val.has_shape) return std::nullopt;
    std::vector<int64_t> s;
    for (const Dim& d : val.shape) {
      if (!d.is_static()) return std::nullopt;
      s.push_back(d.value);
    }
    return s;
  }

  // Meshes, SBP placements and weight chunks: every index, dim and offset is checked, so
  // that the distributed module can trust them.
  Status read_sharding(const fb::Model& m, Model& model) {
    constexpr int64_t kMaxMeshRanks = int64_t{1} << 24;
    if (m.meshes())
      for (const fb::DeviceMesh* fm : *m.meshes()) {
        DeviceMesh d;
        if (fm->name()) d.name = fm->name()->str();
        const std::string what = "mesh '" + d.name + "'";
        if (!fm->shape() || fm->shape()->size() == 0) return bad(what + " has no dims");
        int64_t ranks = 1;
        for (int64_t n : *fm->shape()) {
          if (n < 1 || n > kMaxMeshRanks || ranks * n > kMaxMeshRanks) return bad(what + ": bad dim size " + std::to_string(n));
          ranks *= n;
          d.shape.push_back(n);
        }
        const size_t nd = d.shape.size();
        // An empty list is "not given" (the writer writes one for a mesh without names or
        // roles); a non-empty one has one entry per dim.
        if (fm->dim_names() && fm->dim_names()->size() != 0) {
          if (fm->dim_names()->size() != nd) return bad(what + ": " + std::to_string(fm->dim_names()->size()) + " dim names for " + std::to_string(nd) + " dims");
          for (const auto* s : *fm->dim_names()) d.dim_names.push_back(s->str());
        }
        if (fm->roles() && fm->roles()->size() != 0) {
          if (fm->roles()->size() != nd) return bad(what + ": " + std::to_string(fm->roles()->size()) + " roles for " + std::to_string(nd) + " dims");
          for (auto r : *fm->roles()) {
            if (static_cast<int>(r) < 0 || static_cast<int>(r) > 3) return bad(what + ": unknown role " + std::to_string(static_cast<int>(r)));
            d.roles.push_back(static_cast<MeshDimRole>(r));
          }
        }
        const int kind = static_cast<int>(fm->device_kind());
        if (kind < 0 || kind > 2) return bad(what + ": unknown device kind " + std::to_string(kind));
        d.device_kind = static_cast<MeshDeviceKind>(kind);
        model.meshes.push_back(std::move(d));
      }
    std::unordered_map<std::string, size_t> by_value;  // the first sharding of each value
    std::map<std::pair<std::string, uint32_t>, size_t> by_value_mesh;
    if (m.shardings())
      for (const fb::TensorSharding* fs : *m.shardings()) {
        TensorSharding t;
        t.value = fs->value()->str();
        const std::string what = "sharding of '" + t.value + "'";
        if (model.graph.find_value(t.value) < 0) return bad(what + ": no such value in the graph");
        t.mesh = fs->mesh();
        if (t.mesh >= model.meshes.size()) return bad(what + ": mesh " + std::to_string(t.mesh) + " does not exist");
        if (fs->global_shape())
          for (int64_t n : *fs->global_shape()) {
            if (n < 0) return bad(what + ": negative global dim");
            t.global_shape.push_back(n);
          }
        // The global shape is what a sharded checkpoint assembles into (one allocation of
        // its element count): it must not overflow, and where the graph knows the value's
        // shape (its initializer, else a fully static shape) it must be that shape. Two
        // shardings of a value on one mesh must agree.
        if (auto n = shape_numel(t.global_shape); !n.is_ok())
          return bad(what + ": global shape " + shape_to_string(t.global_shape) + ": " + n.status().message());
        // (An empty global shape is "not given": the converter leaves it out for activations.)
        if (auto known = known_shape(model.graph.values[model.graph.find_value(t.value)]);
            known && !t.global_shape.empty() && *known != t.global_shape)
          return bad(what + ": global shape " + shape_to_string(t.global_shape) + " differs from the value's shape " +
                     shape_to_string(*known));
        const size_t nd = model.meshes[t.mesh].shape.size();
        if (!fs->placements() || fs->placements()->size() != nd)
          return bad(what + ": " + std::to_string(fs->placements() ? fs->placements()->size() : 0) + " placements for a mesh of " +
                     std::to_string(nd) + " dims");
        for (const fb::Placement* fp : *fs->placements()) {
          Placement p;
          const int k = static_cast<int>(fp->kind()), r = static_cast<int>(fp->reduce_op());
          if (k < 0 || k > 2) return bad(what + ": unknown placement kind " + std::to_string(k));
          if (r < 0 || r > 4) return bad(what + ": unknown reduce op " + std::to_string(r));
          p.kind = static_cast<PlacementKind>(k);
          p.reduce = static_cast<PartialReduce>(r);
          p.split_dim = fp->split_dim();
          if (p.kind == PlacementKind::kSplit && (p.split_dim < 0 || static_cast<size_t>(p.split_dim) >= t.global_shape.size()))
            return bad(what + ": split dim " + std::to_string(p.split_dim) + " outside its rank " + std::to_string(t.global_shape.size()));
          t.placements.push_back(p);
        }
        // Indices into model.shardings by value and by (value, mesh): maps, so that a file of
        // many shardings and chunks is not scanned n^2 times.
        by_value.emplace(t.value, model.shardings.size());
        auto [first, inserted] = by_value_mesh.emplace(std::make_pair(t.value, t.mesh), model.shardings.size());
        if (!inserted) {
          const TensorSharding& o = model.shardings[first->second];
          if (o.placements != t.placements || o.global_shape != t.global_shape)
            return bad(what + ": a second, different sharding on mesh " + std::to_string(t.mesh));
        }
        model.shardings.push_back(std::move(t));
      }
    if (m.chunks())
      for (const fb::WeightChunk* fc : *m.chunks()) {
        WeightChunk c;
        c.value = fc->value()->str();
        if (fc->state()) c.state = fc->state()->str();
        const std::string what = "weight chunk of '" + c.value + (c.state.empty() ? "" : "/" + c.state) + "'";
        const int v = model.graph.find_value(c.value);
        if (v < 0) return bad(what + ": no such value in the graph");
        const Value& val = model.graph.values[v];
        int32_t code = static_cast<int32_t>(fc->dtype());
        if (code == 0) code = static_cast<int32_t>(val.dtype);
        if (!dtype_is_valid(code) || code == 0) return bad(what + ": unsupported dtype code " + std::to_string(code));
        // A chunk is a piece of its value: of the value's dtype where the graph gives one.
        if (val.dtype != DType::kUndefined && code != static_cast<int32_t>(val.dtype))
          return bad(what + ": dtype " + dtype_name(static_cast<DType>(code)) + " differs from the value's " + dtype_name(val.dtype));
        // The global shape: the value's sharding, else its initializer, else its static shape.
        std::vector<int64_t> global;
        bool known = false;
        if (auto it = by_value.find(c.value); it != by_value.end()) {
          global = model.shardings[it->second].global_shape;  // the first sharding of the value
          known = true;
        }
        if (!known && val.initializer) { global = val.initializer->shape(); known = true; }
        if (!known && val.has_shape) {
          known = true;
          for (const Dim& d : val.shape) {
            if (!d.is_static()) { known = false; break; }
            global.push_back(d.value);
          }
        }
        if (!known) return bad(what + ": the global shape of '" + c.value + "' is not known (no sharding, initializer or static shape)");
        Shape shape;
        if (fc->shape()) shape.assign(fc->shape()->begin(), fc->shape()->end());
        if (!fc->global_offset() || fc->global_offset()->size() != shape.size() || shape.size() != global.size())
          return bad(what + ": offset, shape and global shape " + shape_to_string(global) + " differ in rank");
        for (size_t d = 0; d < shape.size(); ++d) {
          const int64_t o = fc->global_offset()->Get(d);
          if (o < 0 || shape[d] < 0 || o > global[d] || shape[d] > global[d] - o)
            return bad(what + ": offset " + std::to_string(o) + " + size " + std::to_string(shape[d]) + " outside dim " +
                       std::to_string(d) + " of " + shape_to_string(global));
          c.global_offset.push_back(o);
        }
        TSR_ASSIGN_OR_RETURN(Tensor data, tensor(fc->data(), static_cast<DType>(code), shape, what));
        c.data = std::make_shared<const Tensor>(std::move(data));
        model.chunks.push_back(std::move(c));
      }
    return Status::ok();
  }

  Status read_graph(const fb::Graph& fg, Graph& g, int depth) {
    if (depth > kMaxGraphDepth) return bad("subgraphs nested deeper than " + std::to_string(kMaxGraphDepth));
    if (fg.name()) g.name = fg.name()->str();
    if (fg.values()) {
      g.values.reserve(fg.values()->size());
      for (const fb::Value* fv : *fg.values()) {
        Value v;
        v.name = fv->name()->str();
        int32_t code = static_cast<int32_t>(fv->dtype());
        if (code != 0 && !dtype_is_valid(code)) return bad("value '" + v.name + "' has unsupported dtype code " + std::to_string(code));
        v.dtype = static_cast<DType>(code);
        v.has_shape = fv->has_shape();
        if (fv->shape())
          for (const fb::Dim* d : *fv->shape()) {
            if (d->value() < -1) return bad("value '" + v.name + "' has a negative dim");
            v.shape.push_back({d->value(), d->symbol() ? d->symbol()->str() : ""});
          }
        v.outer_scope = fv->outer_scope();
        v.trainable = fv->trainable();
        if (fv->data()) {
          Shape s;
          for (const Dim& d : v.shape) {
            if (!d.is_static()) return bad("initializer '" + v.name + "' has a symbolic dim");
            s.push_back(d.value);
          }
          TSR_ASSIGN_OR_RETURN(Tensor t, tensor(fv->data(), v.dtype, s, v.name));
          v.initializer = std::make_shared<const Tensor>(std::move(t));
        }
        g.values.push_back(std::move(v));
      }
    }
    g.reindex();
    if (fg.inputs()) g.inputs.assign(fg.inputs()->begin(), fg.inputs()->end());
    if (fg.outputs()) g.outputs.assign(fg.outputs()->begin(), fg.outputs()->end());
    if (fg.nodes()) {
      g.nodes.reserve(fg.nodes()->size());
      for (const fb::Node* fn : *fg.nodes()) {
        Node n;
        n.name = fn->name() ? fn->name()->str() : "";
        n.op_type = fn->op_type()->str();
        n.domain = fn->domain() ? fn->domain()->str() : "";
        n.opset = fn->opset();
        n.pipeline_stage = fn->pipeline_stage();
        if (fn->inputs()) n.inputs.assign(fn->inputs()->begin(), fn->inputs()->end());
        if (fn->outputs()) n.outputs.assign(fn->outputs()->begin(), fn->outputs()->end());
        if (fn->attributes())
          for (const fb::Attribute* fa : *fn->attributes()) {
            Attribute a;
            TSR_RETURN_IF_ERROR(read_attribute(*fa, a, n, depth));
            n.attributes.push_back(std::move(a));
          }
        g.nodes.push_back(std::move(n));
      }
    }
    return Status::ok();
  }

  Status read_attribute(const fb::Attribute& fa, Attribute& a, const Node& n, int depth) {
    a.name = fa.name()->str();
    int8_t type = static_cast<int8_t>(fa.type());
    if (type < 0 || type > static_cast<int8_t>(AttrType::kGraphs))
      return bad("node '" + n.name + "' attribute '" + a.name + "' has an invalid type");
    a.type = static_cast<AttrType>(type);
    a.f = fa.f();
    a.i = fa.i();
    if (fa.s()) a.s.assign(reinterpret_cast<const char*>(fa.s()->data()), fa.s()->size());
    if (fa.floats()) a.floats.assign(fa.floats()->begin(), fa.floats()->end());
    if (fa.ints()) a.ints.assign(fa.ints()->begin(), fa.ints()->end());
    if (fa.strings())
      for (const auto* s : *fa.strings()) a.strings.push_back(s->str());
    if (const fb::TensorValue* tv = fa.t()) {
      int32_t code = static_cast<int32_t>(tv->dtype());
      if (!dtype_is_valid(code)) return bad("node '" + n.name + "' attribute '" + a.name + "' has an unsupported dtype");
      Shape s;
      if (tv->dims()) s.assign(tv->dims()->begin(), tv->dims()->end());
      TSR_ASSIGN_OR_RETURN(Tensor t, tensor(tv->data(), static_cast<DType>(code), s, n.name + "/" + a.name));
      a.t = std::make_shared<const Tensor>(std::move(t));
    }
    if (fa.g()) {
      a.g = std::make_shared<Graph>();
      TSR_RETURN_IF_ERROR(read_graph(*fa.g(), *a.g, depth + 1));
    }
    if (fa.graphs())
      for (const fb::Graph* sg : *fa.graphs()) {
        auto g = std::make_shared<Graph>();
        TSR_RETURN_IF_ERROR(read_graph(*sg, *g, depth + 1));
        a.graphs.push_back(std::move(g));
      }
    if (a.type == AttrType::kTensor && !a.t) return bad("node '" + n.name + "' attribute '" + a.name + "' has no tensor");
    if (a.type == AttrType::kGraph && !a.g) return bad("node '" + n.name + "' attribute '" + a.name + "' has no graph");
    return Status::ok();
  }

  const uint8_t* base_;
  uint64_t size_;
  std::shared_ptr<const void> keepalive_;
  std::string what_;
  std::vector<SegmentView> segments_;
};

// The live mappings of read_tsr_file (start, end), for release_mapped_pages.
std::mutex& mappings_mutex() {
  static std::mutex m;
  return m;
}
std::map<uintptr_t, uintptr_t>& live_mappings() {
  static std::map<uintptr_t, uintptr_t> m;
  return m;
}

/// An mmap of a whole file, unmapped when the last reference goes.
struct Mapping {
  void* addr = nullptr;
  size_t size = 0;
  void enlist() {
    std::lock_guard<std::mutex> lock(mappings_mutex());
    live_mappings()[reinterpret_cast<uintptr_t>(addr)] = reinterpret_cast<uintptr_t>(addr) + size;
  }
  ~Mapping() {
    if (!addr || addr == MAP_FAILED) return;
    {
      std::lock_guard<std::mutex> lock(mappings_mutex());
      live_mappings().erase(reinterpret_cast<uintptr_t>(addr));
    }
    ::munmap(addr, size);
  }
};

}  // namespace

Result<std::shared_ptr<Model>> read_tsr_buffer(const void* data, size_t size, std::shared_ptr<const void> keepalive,
                                               const TsrReadOptions& options, const std::string& what) {
  if (!data) return invalid_argument(what + ": null buffer");
  Reader r(static_cast<const uint8_t*>(data), size, std::move(keepalive), what);
  return r.read(options);
}

Status check_weights_complete(const Model& model, const std::string& what) {
  for (const WeightChunk& c : model.chunks) {
    if (!c.state.empty()) continue;
    const int v = model.graph.find_value(c.value);
    if (v >= 0 && !model.graph.values[v].initializer)
      return invalid_argument(what + ": weight '" + c.value + "' is stored only as pre-sharded chunks (" +
                              std::to_string(model.chunks.size()) +
                              " chunks: a sharded training checkpoint); resume it with tessera-finetune --resume, or use "
                              "the complete model that tessera-finetune writes with --out");
  }
  return Status::ok();
}

Result<std::shared_ptr<Model>> read_tsr_file(const std::string& path, const TsrReadOptions& options) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return io_error("cannot open '" + path + "': " + std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    return io_error("cannot stat '" + path + "': " + std::strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return io_error("'" + path + "' is not a regular file");
  }
  auto map = std::make_shared<Mapping>();
  map->size = static_cast<size_t>(st.st_size);
  if (map->size == 0) {
    ::close(fd);
    return invalid_file(path + ": file is empty");
  }
  map->addr = ::mmap(nullptr, map->size, PROT_READ, MAP_PRIVATE, fd, 0);
  int e = errno;
  ::close(fd);
  if (map->addr == MAP_FAILED) {
    map->addr = nullptr;
    return io_error("cannot mmap '" + path + "': " + std::strerror(e));
  }
  map->enlist();
  const void* base = map->addr;
  size_t size = map->size;
  auto model = read_tsr_buffer(base, size, std::shared_ptr<const void>(map, base), options, path);
  // Verifying read every byte; what the plan needs is read again (see release_mapped_pages).
  if (model.is_ok()) release_mapped_pages(base, size);
  return model;
}

size_t release_mapped_pages(const void* data, size_t bytes) {
  static const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  if (!data || bytes == 0 || page == 0) return 0;
  const uintptr_t p = reinterpret_cast<uintptr_t>(data);
  if (bytes > UINTPTR_MAX - p) return 0;
  std::lock_guard<std::mutex> lock(mappings_mutex());
  const auto& maps = live_mappings();
  auto it = maps.upper_bound(p);  // the first mapping starting after p
  if (it == maps.begin()) return 0;
  --it;  // the last one starting at or before p
  if (p + bytes > it->second) return 0;  // not wholly inside it
  const uintptr_t lo = (p + page - 1) / page * page, hi = (p + bytes) / page * page;
  if (hi <= lo) return 0;
  if (::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_DONTNEED) != 0) return 0;
  return hi - lo;
}

}  // namespace tessera
