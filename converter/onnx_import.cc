// ONNX import through ONNX's own C++ library (protobuf types, shape inference).
// Opsets 7 and up of the default domain; initializers, Constant nodes and external data.
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include <sys/stat.h>

#include <climits>
#include <cstdlib>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <unordered_set>

#include "converter/converter.h"
#include "runtime/ops/op_schema.h"
#include "tessera/tsr_file.h"

namespace tessera {

/// Replaces nodes of ONNX function ops that Tessera has no schema for by their function
/// bodies (converter/function_expansion.cc). Returns how many nodes were expanded.
/// `node_opsets` receives the opset of each inlined node (the function body's own imports).
int expand_onnx_functions(onnx::ModelProto& model, const std::map<std::string, int64_t>& opsets,
                          std::map<std::string, int64_t>* node_opsets);

namespace {

std::string dir_of(const std::string& path) {
  size_t p = path.find_last_of('/');
  return p == std::string::npos ? "." : path.substr(0, p);
}

/// Reads a whole protobuf file. Only regular files up to 2 GiB (protobuf's own message
/// limit) are read: a FIFO, a device such as /dev/zero, or a huge file is refused before any
/// byte is read, so it can neither hang the reader nor exhaust memory.
Result<std::string> read_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return io_error("cannot open '" + path + "': " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return invalid_file("'" + path + "' is not a regular file");
  if (st.st_size > (int64_t{1} << 31))
    return invalid_file("'" + path + "' is " + std::to_string(st.st_size) + " bytes; protobuf files are limited to 2 GiB " +
                        "(larger ONNX models keep their weights in external data files)");
  std::ifstream f(path, std::ios::binary);
  if (!f) return io_error("cannot open '" + path + "'");
  std::ostringstream ss;
  ss << f.rdbuf();
  if (f.bad()) return io_error("reading '" + path + "' failed");
  return ss.str();
}

class Importer {
 public:
  Importer(std::string path, const std::map<std::string, int64_t>& opsets,
           const std::map<std::string, int64_t>& node_opsets)
      : path_(std::move(path)), dir_(dir_of(path_)), opsets_(opsets), node_opsets_(node_opsets) {}

  Result<Tensor> tensor(const onnx::TensorProto& tp, const std::string& where) {
    std::string what = where + " tensor '" + tp.name() + "'";
    int32_t code = tp.data_type();
    if (code == onnx::TensorProto::STRING) return unimplemented(what + ": string tensors are not supported");
    if (!dtype_is_valid(code)) return unimplemented(what + ": dtype code " + std::to_string(code) + " is not supported");
    DType dt = static_cast<DType>(code);
    Shape shape(tp.dims().begin(), tp.dims().end());
    auto numel_r = shape_numel(shape);
    if (!numel_r.is_ok()) return invalid_file(what + ": " + numel_r.status().message());
    int64_t numel = numel_r.value();
    const size_t bytes = static_cast<size_t>(numel) * dtype_size(dt);
    // int4/uint4 are stored packed, two per byte (low nibble first): in raw_data, external
    // data, and int32_data (one packed byte per entry). Tessera holds one per byte.
    const bool packed4 = dtype_is_int4(dt);
    const size_t stored_bytes = packed4 ? static_cast<size_t>((numel + 1) / 2) : bytes;
    // Check what the file really holds before allocating what the dims claim.
    size_t available = 0;
    if (tp.data_location() == onnx::TensorProto::EXTERNAL) available = stored_bytes;  // checked below
    else if (tp.has_raw_data()) available = tp.raw_data().size();
    else available = static_cast<size_t>(tp.float_data_size() + tp.int32_data_size() + tp.int64_data_size() +
                                         tp.double_data_size() + tp.uint64_data_size()) * dtype_size(dt);
    if (available < stored_bytes)
      return invalid_file(what + ": shape " + shape_to_string(shape) + " needs " + std::to_string(stored_bytes) +
                          " bytes but the tensor holds " + std::to_string(available));
    auto count_error = [&](size_t got) {
      return invalid_file(what + ": holds " + std::to_string(got) + " values but shape " + shape_to_string(shape) +
                          " needs " + std::to_string(packed4 ? (numel + 1) / 2 : numel));
    };
    TSR_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(dt, shape));
    // Unpacks the first stored_bytes bytes of t in place, from the back so that no packed
    // byte is overwritten before it is read (element i lives in byte i / 2 <= i).
    auto unpack4 = [&]() {
      if (!packed4) return;
      uint8_t* p = t.data_as<uint8_t>();
      for (int64_t i = numel - 1; i >= 0; --i) {
        const uint8_t nib = (i % 2 == 0) ? (p[i / 2] & 0x0F) : (p[i / 2] >> 4);
        p[i] = dt == DType::kInt4 && (nib & 0x8) ? static_cast<uint8_t>(nib | 0xF0) : nib;
      }
    };
    if (tp.data_location() == onnx::TensorProto::EXTERNAL) {
      std::string location;
      uint64_t offset = 0, length = stored_bytes;
      for (const auto& kv : tp.external_data()) {
        try {
          if (kv.key() == "location") location = kv.value();
          else if (kv.key() == "offset") offset = std::stoull(kv.value());
          else if (kv.key() == "length") length = std::stoull(kv.value());
        } catch (const std::exception&) {
          return invalid_file(what + ": bad external_data entry '" + kv.key() + "'");
        }
      }
      if (location.empty() || location[0] == '/' || location.find("..") != std::string::npos)
        return invalid_file(what + ": external data location '" + location + "' must be a relative path inside the model's folder");
      if (length != stored_bytes) return invalid_file(what + ": external data length " + std::to_string(length) + " != " + std::to_string(stored_bytes) + " bytes");
      std::string file = dir_ + "/" + location;
      // The real path must be a regular file inside the model's folder (no symlink out of
      // it, no FIFO or device that would block or never end).
      char* real_file = ::realpath(file.c_str(), nullptr);
      char* real_dir = ::realpath(dir_.c_str(), nullptr);
      std::string rf = real_file ? real_file : "", rd = real_dir ? real_dir : "";
      std::free(real_file);
      std::free(real_dir);
      if (rf.empty()) return io_error(what + ": cannot open external data file '" + file + "'");
      if (rd.empty() || rf.compare(0, rd.size() + 1, rd + "/") != 0)
        return invalid_file(what + ": external data file '" + file + "' resolves to '" + rf + "', outside the model's folder");
      struct stat st {};
      if (::stat(rf.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
        return invalid_file(what + ": external data '" + file + "' is not a regular file");
      if (offset > static_cast<uint64_t>(st.st_size) || stored_bytes > static_cast<uint64_t>(st.st_size) - offset)
        return invalid_file(what + ": external data file '" + file + "' is shorter than offset + length");
      std::ifstream f(rf, std::ios::binary);
      if (!f) return io_error(what + ": cannot open external data file '" + file + "'");
      f.seekg(static_cast<std::streamoff>(offset));
      f.read(static_cast<char*>(t.data()), static_cast<std::streamsize>(stored_bytes));
      if (!f || static_cast<size_t>(f.gcount()) != stored_bytes)
        return invalid_file(what + ": external data file '" + file + "' is shorter than offset + length");
      unpack4();
      return t;
    }
    if (tp.has_raw_data()) {
      if (tp.raw_data().size() != stored_bytes) return invalid_file(what + ": raw_data has " + std::to_string(tp.raw_data().size()) + " bytes, shape needs " + std::to_string(stored_bytes));
      if (stored_bytes) std::memcpy(t.data(), tp.raw_data().data(), stored_bytes);
      unpack4();
      return t;
    }
    auto copy = [&](const auto& field, auto cast_tag) -> Status {
      using T = decltype(cast_tag);
      const int64_t want = packed4 ? (numel + 1) / 2 : numel;
      if (static_cast<int64_t>(field.size()) != want) return count_error(field.size());
      T* dst = t.data_as<T>();
      for (int64_t i = 0; i < want; ++i) dst[i] = static_cast<T>(field.Get(static_cast<int>(i)));
      return Status::ok();
    };
    switch (dt) {
      case DType::kFloat32: TSR_RETURN_IF_ERROR(copy(tp.float_data(), float{})); break;
      case DType::kFloat64: TSR_RETURN_IF_ERROR(copy(tp.double_data(), double{})); break;
      case DType::kInt64: TSR_RETURN_IF_ERROR(copy(tp.int64_data(), int64_t{})); break;
      case DType::kInt32: TSR_RETURN_IF_ERROR(copy(tp.int32_data(), int32_t{})); break;
      case DType::kInt16: TSR_RETURN_IF_ERROR(copy(tp.int32_data(), int16_t{})); break;
      case DType::kInt8: TSR_RETURN_IF_ERROR(copy(tp.int32_data(), int8_t{})); break;
      case DType::kUInt16: case DType::kFloat16: case DType::kBFloat16:
        TSR_RETURN_IF_ERROR(copy(tp.int32_data(), uint16_t{})); break;
      case DType::kUInt8: TSR_RETURN_IF_ERROR(copy(tp.int32_data(), uint8_t{})); break;
      case DType::kBool: TSR_RETURN_IF_ERROR(copy(tp.int32_data(), uint8_t{})); break;
      case DType::kFloat8E4M3FN: case DType::kFloat8E4M3FNUZ: case DType::kFloat8E5M2: case DType::kFloat8E5M2FNUZ:
      case DType::kUInt4: case DType::kInt4:
        TSR_RETURN_IF_ERROR(copy(tp.int32_data(), uint8_t{})); break;
      case DType::kUInt32: TSR_RETURN_IF_ERROR(copy(tp.uint64_data(), uint32_t{})); break;
      case DType::kUInt64: TSR_RETURN_IF_ERROR(copy(tp.uint64_data(), uint64_t{})); break;
      default: return unimplemented(what + ": dtype " + dtype_name(dt) + " is not supported");
    }
    unpack4();
    return t;
  }

  /// Fills dtype and declared shape from a ValueInfoProto; false if it is not a tensor.
  static bool value_type(const onnx::ValueInfoProto& vi, Value& v) {
    if (!vi.has_type() || !vi.type().has_tensor_type()) return false;
    const auto& tt = vi.type().tensor_type();
    int32_t code = tt.elem_type();
    v.dtype = dtype_is_valid(code) ? static_cast<DType>(code) : DType::kUndefined;
    if (tt.has_shape()) {
      v.has_shape = true;
      v.shape.clear();
      for (const auto& d : tt.shape().dim()) {
        Dim dim;
        if (d.has_dim_value() && d.dim_value() >= 0) dim.value = d.dim_value();
        else if (d.has_dim_param()) dim.symbol = d.dim_param();
        v.shape.push_back(dim);
      }
    }
    return true;
  }

  Status graph(const onnx::GraphProto& gp, Graph& g, int depth) {
    if (depth > 16) return invalid_file("subgraphs nested deeper than 16");
    g.name = gp.name();
    std::unordered_set<std::string> init_names;
    for (const auto& tp : gp.initializer()) {
      if (tp.name().empty()) return invalid_file("graph '" + g.name + "': an initializer has no name");
      if (g.find_value(tp.name()) >= 0) return invalid_file("graph '" + g.name + "': initializer '" + tp.name() + "' is defined twice");
      TSR_ASSIGN_OR_RETURN(Tensor t, tensor(tp, "graph '" + g.name + "'"));
      Value v;
      v.name = tp.name();
      v.dtype = t.dtype();
      v.has_shape = true;
      for (int64_t d : t.shape()) v.shape.push_back({d, ""});
      v.initializer = std::make_shared<const Tensor>(std::move(t));
      g.add_value(std::move(v));
      init_names.insert(tp.name());
    }
    for (const auto& vi : gp.input()) {
      if (init_names.count(vi.name())) continue;  // IR < 4: initializers listed as inputs
      Value v;
      v.name = vi.name();
      // A subgraph input may leave its type out (ONNX IR: the type of a nested graph's input
      // can come from its context; ONNX's own function expansion of Range does so for a
      // Loop body). It stays kUndefined here and the planner gives it the dtype and shape of
      // the value the Loop or Scan passes in.
      const bool untyped = depth > 0 && (!vi.has_type() || vi.type().value_case() == onnx::TypeProto::VALUE_NOT_SET);
      if (!untyped) {
        if (!value_type(vi, v))
          return unimplemented("graph input '" + vi.name() + "' is not a tensor (sequences, maps and optionals are not supported)");
        if (v.dtype == DType::kUndefined) return unimplemented("graph input '" + vi.name() + "' has an unsupported element type");
      }
      if (g.find_value(v.name) >= 0) return invalid_file("graph input '" + v.name + "' is listed twice");
      g.inputs.push_back(g.add_value(std::move(v)));
    }
    // Names defined in this graph, to tell outer-scope references apart.
    std::unordered_set<std::string> local;
    for (const auto& v : g.values) local.insert(v.name);
    for (const auto& np : gp.node())
      for (const auto& o : np.output())
        if (!o.empty()) local.insert(o);
    auto value_id = [&](const std::string& name) {
      int id = g.find_value(name);
      if (id >= 0) return id;
      Value v;
      v.name = name;
      v.outer_scope = !local.count(name);
      return g.add_value(std::move(v));
    };
    int anon = 0;
    for (const auto& np : gp.node()) {
      Node n;
      n.op_type = np.op_type();
      n.domain = np.domain() == "ai.onnx" ? "" : np.domain();
      n.name = np.name().empty() ? n.op_type + "_" + std::to_string(anon) : np.name();
      ++anon;
      auto it = opsets_.find(n.domain);
      n.opset = it == opsets_.end() ? 0 : static_cast<int>(it->second);
      if (auto o = node_opsets_.find(np.name()); !np.name().empty() && o != node_opsets_.end())
        n.opset = static_cast<int>(o->second);
      for (const auto& in : np.input()) n.inputs.push_back(in.empty() ? -1 : value_id(in));
      for (const auto& out : np.output()) n.outputs.push_back(out.empty() ? -1 : value_id(out));
      for (const auto& ap : np.attribute()) {
        Attribute a;
        TSR_RETURN_IF_ERROR(attribute(ap, a, n, depth));
        n.attributes.push_back(std::move(a));
      }
      g.nodes.push_back(std::move(n));
    }
    for (const auto& vi : gp.value_info()) {
      int id = g.find_value(vi.name());
      if (id >= 0 && !g.values[id].initializer) value_type(vi, g.values[id]);
    }
    for (const auto& vi : gp.output()) {
      int id = value_id(vi.name());
      value_type(vi, g.values[id]);
      g.outputs.push_back(id);
    }
    return topo_sort(g);
  }

  Status attribute(const onnx::AttributeProto& ap, Attribute& a, const Node& n, int depth) {
    a.name = ap.name();
    std::string where = n.describe() + " attribute '" + a.name + "'";
    switch (ap.type()) {
      case onnx::AttributeProto::FLOAT: a.type = AttrType::kFloat; a.f = ap.f(); break;
      case onnx::AttributeProto::INT: a.type = AttrType::kInt; a.i = ap.i(); break;
      case onnx::AttributeProto::STRING: a.type = AttrType::kString; a.s = ap.s(); break;
      case onnx::AttributeProto::FLOATS: a.type = AttrType::kFloats; a.floats.assign(ap.floats().begin(), ap.floats().end()); break;
      case onnx::AttributeProto::INTS: a.type = AttrType::kInts; a.ints.assign(ap.ints().begin(), ap.ints().end()); break;
      case onnx::AttributeProto::STRINGS: a.type = AttrType::kStrings; a.strings.assign(ap.strings().begin(), ap.strings().end()); break;
      case onnx::AttributeProto::TENSOR: {
        a.type = AttrType::kTensor;
        TSR_ASSIGN_OR_RETURN(Tensor t, tensor(ap.t(), where));
        a.t = std::make_shared<const Tensor>(std::move(t));
        break;
      }
      case onnx::AttributeProto::GRAPH: {
        a.type = AttrType::kGraph;
        a.g = std::make_shared<Graph>();
        TSR_RETURN_IF_ERROR(graph(ap.g(), *a.g, depth + 1).with_context(where));
        break;
      }
      case onnx::AttributeProto::GRAPHS: {
        a.type = AttrType::kGraphs;
        for (const auto& gp : ap.graphs()) {
          auto g = std::make_shared<Graph>();
          TSR_RETURN_IF_ERROR(graph(gp, *g, depth + 1).with_context(where));
          a.graphs.push_back(std::move(g));
        }
        break;
      }
      default:
        return unimplemented(where + ": attribute kind " + std::to_string(static_cast<int>(ap.type())) +
                             " (sparse tensors, type protos) is not supported");
    }
    return Status::ok();
  }

  /// Orders nodes so that every input is produced before use (stable: keeps the file's
  /// order where it is already valid). Errors on a cycle.
  static Status topo_sort(Graph& g) {
    const size_t nn = g.nodes.size();
    std::vector<int> producer(g.values.size(), -1);
    for (size_t i = 0; i < nn; ++i)
      for (int o : g.nodes[i].outputs)
        if (o >= 0) producer[o] = static_cast<int>(i);
    // Subgraph outer-scope references are dependencies of the node that owns the subgraph.
    std::vector<std::vector<int>> deps(nn);
    std::function<void(const Graph&, std::vector<int>&)> outer_refs = [&](const Graph& sg, std::vector<int>& out) {
      for (const Value& v : sg.values)
        if (v.outer_scope) {
          int id = g.find_value(v.name);
          if (id >= 0) out.push_back(id);
        }
      for (const Node& sn : sg.nodes)
        for (const Attribute& a : sn.attributes) {
          if (a.g) outer_refs(*a.g, out);
          for (const auto& gg : a.graphs) outer_refs(*gg, out);
        }
    };
    for (size_t i = 0; i < nn; ++i) {
      std::vector<int> ins(g.nodes[i].inputs.begin(), g.nodes[i].inputs.end());
      for (const Attribute& a : g.nodes[i].attributes) {
        if (a.g) outer_refs(*a.g, ins);
        for (const auto& gg : a.graphs) outer_refs(*gg, ins);
      }
      for (int v : ins)
        if (v >= 0 && producer[v] >= 0 && producer[v] != static_cast<int>(i)) deps[i].push_back(producer[v]);
    }
    // Iterative depth-first order (a recursive one overflows the stack on long chains).
    std::vector<char> state(nn, 0);  // 0 new, 1 on the stack, 2 done
    std::vector<int> emit;
    emit.reserve(nn);
    std::vector<std::pair<int, size_t>> stack;  // (node, next dependency to visit)
    for (size_t root = 0; root < nn; ++root) {
      if (state[root]) continue;
      stack.push_back({static_cast<int>(root), 0});
      state[root] = 1;
      while (!stack.empty()) {
        auto& [i, k] = stack.back();
        if (k < deps[i].size()) {
          int d = deps[i][k++];
          if (state[d] == 1) return invalid_file("the graph has a cycle through " + g.nodes[d].describe());
          if (state[d] == 0) {
            state[d] = 1;
            stack.push_back({d, 0});
          }
          continue;
        }
        state[i] = 2;
        emit.push_back(i);
        stack.pop_back();
      }
    }
    std::vector<Node> order;
    order.reserve(nn);
    for (int i : emit) order.push_back(std::move(g.nodes[i]));
    g.nodes = std::move(order);
    return Status::ok();
  }

 private:
  std::string path_;
  std::string dir_;
  const std::map<std::string, int64_t>& opsets_;
  const std::map<std::string, int64_t>& node_opsets_;
};

struct Unsupported {
  int64_t opset = 0;
  int count = 0;
  std::string first_node;
};

void collect_unsupported(const Graph& g, std::map<std::string, Unsupported>& out) {
  for (const Node& n : g.nodes) {
    if (!find_op_schema(n.domain, n.op_type)) {
      Unsupported& u = out[(n.domain.empty() ? "" : n.domain + ".") + n.op_type];
      if (u.count++ == 0) {
        u.opset = n.opset;
        u.first_node = n.name;
      }
    }
    for (const Attribute& a : n.attributes) {
      if (a.g) collect_unsupported(*a.g, out);
      for (const auto& sg : a.graphs) collect_unsupported(*sg, out);
    }
  }
}

}  // namespace

int count_nodes(const Graph& g) {
  int n = static_cast<int>(g.nodes.size());
  for (const Node& node : g.nodes)
    for (const Attribute& a : node.attributes) {
      if (a.g) n += count_nodes(*a.g);
      for (const auto& sg : a.graphs) n += count_nodes(*sg);
    }
  return n;
}

/// For a model of default-domain opset `opset` < 7: an error naming every op (in `g` and its
/// subgraphs) whose ONNX schema changed between `opset` and 7, or an op ONNX does not know.
static Status check_pre7_ops(const onnx::GraphProto& g, int opset) {
  std::set<std::string> changed;
  std::function<void(const onnx::GraphProto&)> walk = [&](const onnx::GraphProto& gp) {
    for (const auto& n : gp.node()) {
      if (!n.domain().empty() && n.domain() != "ai.onnx") continue;
      const onnx::OpSchema* old_s = onnx::OpSchemaRegistry::Schema(n.op_type(), opset, "");
      const onnx::OpSchema* s7 = onnx::OpSchemaRegistry::Schema(n.op_type(), 7, "");
      if (!old_s || !s7 || old_s->since_version() != s7->since_version())
        changed.insert(n.op_type() + (old_s ? " (version " + std::to_string(old_s->since_version()) + ")" : " (unknown)"));
      for (const auto& a : n.attribute()) {
        if (a.has_g()) walk(a.g());
        for (const auto& sg : a.graphs()) walk(sg);
      }
    }
  };
  walk(g);
  if (changed.empty()) return Status::ok();
  std::string list;
  for (const auto& c : changed) list += (list.empty() ? "" : ", ") + c;
  return unimplemented("uses opset " + std::to_string(opset) + ", and these ops changed before opset 7, the oldest " +
                       "Tessera implements: " + list);
}

Result<std::shared_ptr<Model>> import_onnx(const std::string& path, const ConvertOptions& options, ConvertReport* report) {
  TSR_ASSIGN_OR_RETURN(std::string bytes, read_file(path));
  onnx::ModelProto mp;
  if (bytes.empty() || !mp.ParseFromString(bytes))
    return invalid_file("'" + path + "' is not a valid ONNX model (protobuf parsing failed)");
  if (!mp.has_graph()) return invalid_file("'" + path + "' has no graph");

  auto model = std::make_shared<Model>();
  std::map<std::string, int64_t> opsets;
  for (const auto& o : mp.opset_import()) {
    std::string d = o.domain() == "ai.onnx" ? "" : o.domain();
    opsets[d] = o.version();
    model->meta.opset_imports.emplace_back(d, o.version());
  }
  if (!opsets.count("")) {
    for (const auto& n : mp.graph().node())
      if (n.domain().empty() || n.domain() == "ai.onnx")
        return invalid_file("'" + path + "' uses ONNX ops but does not import the ONNX default domain (opset_import)");
    opsets[""] = 7;  // no default-domain node: the version does not matter
  }
  if (opsets[""] < 7) {
    // Tessera implements the default domain from opset 7. An older model is accepted when
    // every op it uses has the same ONNX schema version at its opset as at opset 7 (the op
    // did not change in between); its nodes are then read as opset-7 nodes.
    TSR_RETURN_IF_ERROR(check_pre7_ops(mp.graph(), static_cast<int>(opsets[""])).with_context(path));
    opsets[""] = 7;
  }
  model->meta.ir_version = mp.ir_version();
  model->meta.producer_name = "tessera-converter";
  model->meta.producer_version = "0.1.0";
  model->meta.properties["source_producer"] = mp.producer_name() + " " + mp.producer_version();

  // ONNX's own C++ shape inference is not run: on hostile attributes (strides of 0) it
  // divides by zero and kills the process (SIGFPE) before any check of ours can run.
  // Tessera's op schemas infer shapes instead, checking attributes first: at conversion for
  // constant folding, and at plan time for the actual input shapes.

  std::map<std::string, int64_t> node_opsets;
  int expanded = expand_onnx_functions(mp, opsets, &node_opsets);
  if (report) report->functions_expanded = expanded;

  Importer im(path, opsets, node_opsets);
  TSR_RETURN_IF_ERROR(im.graph(mp.graph(), model->graph, 0).with_context(path));
  std::map<std::string, Unsupported> unsupported;
  collect_unsupported(model->graph, unsupported);
  if (!unsupported.empty()) {
    std::string msg = path + ": unsupported op" + (unsupported.size() > 1 ? "s " : " ");
    int k = 0;
    for (const auto& [op, u] : unsupported)
      msg += std::string(k++ ? "; " : "") + "'" + op + "' (opset " + std::to_string(u.opset) + ", " + std::to_string(u.count) +
             (u.count > 1 ? " nodes, first '" : " node, '") + u.first_node + "')";
    return unimplemented(msg);
  }
  TSR_RETURN_IF_ERROR(model->graph.validate().with_context(path));
  if (report) report->nodes_in = count_nodes(model->graph);
  return model;
}

Result<Tensor> read_onnx_tensor_file(const std::string& path) {
  TSR_ASSIGN_OR_RETURN(std::string bytes, read_file(path));
  onnx::TensorProto tp;
  if (!tp.ParseFromString(bytes)) return invalid_file("'" + path + "' is not an ONNX TensorProto (protobuf parsing failed)");
  if (tp.data_type() == 0)
    return invalid_file("'" + path + "' has no data_type: empty, or not an ONNX TensorProto");
  Importer im(path, {}, {});
  return im.tensor(tp, "'" + path + "'");
}

Status write_onnx_tensor_file(const std::string& path, const Tensor& t, const std::string& name) {
  onnx::TensorProto tp;
  tp.set_name(name);
  tp.set_data_type(static_cast<int32_t>(t.dtype()));
  for (int64_t d : t.shape()) tp.add_dims(d);
  const uint8_t* p = static_cast<const uint8_t*>(t.data());
  if (dtype_is_int4(t.dtype())) {
    std::string packed(static_cast<size_t>((t.numel() + 1) / 2), '\0');
    for (int64_t i = 0; i < t.numel(); ++i)
      packed[static_cast<size_t>(i / 2)] |= static_cast<char>((p[i] & 0x0F) << (i % 2 ? 4 : 0));
    tp.set_raw_data(packed);
  } else {
    tp.set_raw_data(std::string(reinterpret_cast<const char*>(p), t.nbytes()));
  }
  std::string out;
  if (!tp.SerializeToString(&out)) return internal_error("serializing tensor '" + name + "' failed");
  return write_file_atomic(path, out.data(), out.size());
}

}  // namespace tessera
