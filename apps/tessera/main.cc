// tessera: the converter and runner CLI.
//   tessera convert IN.onnx -o OUT.tsr
//   tessera inspect FILE.tsr [--json]
//   tessera run FILE.tsr --input NAME=FILE.npy|FILE.pb ... --output-dir DIR [--output-format npy|pb]
//                        [--backend cpu] [--threads N] [--verbose]
//   tessera bench FILE.tsr [--input NAME=FILE.npy ... | --random] --threads N --runs K [--json]
// Every failure prints "tessera: error: ..." naming the culprit and exits non-zero.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <sys/stat.h>

#include "converter/converter.h"
#include "converter/pipeline_stages.h"
#include "converter/sharding.h"
#include "npy.h"
#include "tessera/session.h"
#include "tessera/tsr_file.h"

#ifndef TESSERA_VERSION
#define TESSERA_VERSION "0.0.0"
#endif

namespace tessera {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

int fail(const Status& s) {
  std::cerr << "tessera: error: " << s.to_string() << "\n";
  return 1;
}

std::string json_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\', o += c;
    else if (static_cast<unsigned char>(c) < 0x20) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", c);
      o += b;
    } else o += c;
  }
  return o;
}

std::string dims_to_string(const TensorInfo& t) {
  if (!t.has_shape) return "?";
  std::string s = "[";
  for (size_t i = 0; i < t.shape.size(); ++i) {
    if (i) s += ",";
    s += t.shape[i].is_static() ? std::to_string(t.shape[i].value) : (t.shape[i].symbol.empty() ? "?" : t.shape[i].symbol);
  }
  return s + "]";
}

/// File name for an output: characters outside [A-Za-z0-9._-] become '_'.
std::string sanitize(const std::string& name) {
  std::string s = name;
  for (char& c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) c = '_';
  return s.empty() ? "_" : s;
}

void count_ops(const Graph& g, std::map<std::string, int>& ops) {
  for (const Node& n : g.nodes) {
    ++ops[n.domain.empty() ? n.op_type : n.domain + "." + n.op_type];
    for (const Attribute& a : n.attributes) {
      if (a.g) count_ops(*a.g, ops);
      for (const auto& sg : a.graphs) count_ops(*sg, ops);
    }
  }
}

uint64_t weight_bytes(const Graph& g) {
  uint64_t b = 0;
  for (const Value& v : g.values)
    if (v.initializer) b += v.initializer->nbytes();
  for (const Node& n : g.nodes)
    for (const Attribute& a : n.attributes) {
      if (a.t) b += a.t->nbytes();
      if (a.g) b += weight_bytes(*a.g);
      for (const auto& sg : a.graphs) b += weight_bytes(*sg);
    }
  return b;
}

// ---- inputs for run / bench ----

/// A declared shape as "[?, 3, 48, ?]" (a dynamic dim by its symbol, or ?).
std::string declared_dims(const TensorInfo& t) {
  std::string s = "[";
  for (size_t i = 0; i < t.shape.size(); ++i) {
    const auto& d = t.shape[i];
    s += (i ? ", " : "") + (d.is_static() ? std::to_string(d.value) : d.symbol.empty() ? std::string("?") : d.symbol);
  }
  return s + "]";
}

struct InputArgs {
  std::vector<std::string> inputs;  // NAME=FILE.npy or NAME=FILE.pb (ONNX TensorProto)
  std::vector<std::string> shapes;  // NAME=1x3x224x224 (for --random)
  bool random = false;
  uint32_t seed = 0;
};

Result<Shape> parse_dims(const std::string& s, const std::string& what) {
  Shape shape;
  std::stringstream ss(s == "scalar" ? "" : s);
  std::string item;
  while (std::getline(ss, item, 'x')) {
    try {
      size_t used = 0;
      long long v = std::stoll(item, &used);
      if (used != item.size() || v < 0) throw std::invalid_argument(item);
      shape.push_back(v);
    } catch (const std::exception&) {
      return invalid_argument(what + ": bad dim '" + item + "' in '" + s + "' (expected e.g. 1x3x224x224)");
    }
  }
  if (shape.empty() && s != "scalar")
    return invalid_argument(what + ": no dims in '" + s + "' (expected e.g. 1x3x224x224, or 'scalar' for rank 0)");
  return shape;
}

Result<std::vector<std::pair<std::string, Tensor>>> load_inputs(const Session& s, const InputArgs& a) {
  std::vector<std::pair<std::string, Tensor>> out;
  std::map<std::string, Shape> shapes;
  for (const std::string& kv : a.shapes) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) return invalid_argument("--shape '" + kv + "': expected NAME=DIMS");
    TSR_ASSIGN_OR_RETURN(Shape sh, parse_dims(kv.substr(eq + 1), "--shape " + kv.substr(0, eq)));
    std::string name = kv.substr(0, eq);
    bool known = false;
    for (const TensorInfo& in : s.inputs()) known |= in.name == name;
    if (!known) return invalid_argument("--shape " + name + ": the model has no input '" + name + "'");
    shapes[name] = sh;
  }
  for (const std::string& kv : a.inputs) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) return invalid_argument("--input '" + kv + "': expected NAME=FILE.npy or NAME=FILE.pb");
    std::string name = kv.substr(0, eq), file = kv.substr(eq + 1);
    const bool pb = file.size() > 3 && file.compare(file.size() - 3, 3, ".pb") == 0;
    auto t = pb ? read_onnx_tensor_file(file) : read_npy(file);
    if (!t.is_ok()) return t.status().with_context("--input " + name);
    out.emplace_back(name, std::move(t).value());
  }
  if (!a.random) return out;
  std::mt19937 rng(a.seed);
  for (const TensorInfo& in : s.inputs()) {
    bool given = false;
    for (auto& [n, t] : out) given |= n == in.name;
    if (given) continue;
    Shape shape;
    if (shapes.count(in.name)) {
      shape = shapes[in.name];
    } else {
      if (!in.has_shape) return invalid_argument("input '" + in.name + "' has no declared shape; give --shape " + in.name + "=DIMS");
      for (const Dim& d : in.shape) {
        if (!d.is_static())
          return invalid_argument("input '" + in.name + "' dim " + std::to_string(shape.size()) + " is dynamic" +
                                  (d.symbol.empty() ? std::string() : " ('" + d.symbol + "')") + "; its declared shape is " +
                                  declared_dims(in) + ": give --shape " + in.name + "=DIMS with a size for each of its " +
                                  std::to_string(in.shape.size()) +
                                  " dims, as the model's real inputs have them (1x3x224x224 for a typical image model)");
        shape.push_back(d.value);
      }
    }
    TSR_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(in.dtype, shape));
    std::uniform_real_distribution<float> uf(-1.f, 1.f);
    std::uniform_int_distribution<int> ui(0, 9);
    for (int64_t i = 0; i < t.numel(); ++i) {
      switch (in.dtype) {
        case DType::kFloat32: t.data_as<float>()[i] = uf(rng); break;
        case DType::kFloat64: t.data_as<double>()[i] = uf(rng); break;
        case DType::kInt64: t.data_as<int64_t>()[i] = ui(rng); break;
        case DType::kInt32: t.data_as<int32_t>()[i] = ui(rng); break;
        case DType::kBool: t.data_as<bool>()[i] = ui(rng) & 1; break;
        default: return unimplemented(std::string("--random cannot fill dtype ") + dtype_name(in.dtype) + " of input '" + in.name + "'");
      }
    }
    out.emplace_back(in.name, std::move(t));
  }
  return out;
}

/// Set by --no-fusion (run, bench): one kernel per node.
bool g_no_fusion = false;

Result<std::unique_ptr<Session>> open_session(const std::string& path, const std::string& backend, int threads) {
  SessionOptions o;
  o.fusion = !g_no_fusion;
  o.backends.clear();
  std::stringstream ss(backend);
  std::string b;
  while (std::getline(ss, b, ',')) o.backends.push_back(b);
  if (o.backends.empty()) return invalid_argument("--backend is empty");
  o.threads = threads;
  TSR_ASSIGN_OR_RETURN(std::unique_ptr<Session> s, Session::load(path, o));  // refuses chunk-only weights
  for (const std::string& note : s->notes()) std::cerr << "tessera: warning: " << note << "\n";
  return s;
}

// ---- commands ----

int cmd_convert(const std::string& in, const std::string& out, const ConvertOptions& opt, const std::string& shard,
                int stages) {
  auto t0 = Clock::now();
  ConvertReport rep;
  ShardReport srep;
  Status s;
  std::string cut_lines;
  // Import, optimize, then the --shard tp=N and --pipeline-stages P annotations, all before
  // the file is written (atomically), so a failure leaves no file.
  auto tp = shard.empty() ? Result<int>(0) : parse_shard_spec(shard);
  auto m = tp.is_ok() ? import_onnx(in, opt, &rep) : Result<std::shared_ptr<Model>>(tp.status());
  s = m.is_ok() ? optimize_model(**m, opt, &rep) : m.status();
  if (s.is_ok() && !shard.empty()) s = annotate_tensor_parallel(**m, *tp, &srep);
  if (s.is_ok() && stages > 0) {
    auto cut = cut_pipeline((*m)->graph, stages);
    if (!cut.is_ok()) {
      s = invalid_argument("--pipeline-stages " + std::to_string(stages) + ": " + cut.status().message());
    } else {
      apply_pipeline_cut((*m)->graph, *cut);
      cut_lines = cut->describe((*m)->graph);
    }
  }
  if (s.is_ok()) s = write_tsr_file(**m, out);
  if (!s.is_ok()) return fail(s);
  for (const auto& w : rep.warnings) std::cerr << "tessera: warning: " << w << "\n";
  std::printf("converted %s -> %s in %.1f ms\n", in.c_str(), out.c_str(), ms_since(t0));
  std::printf("  nodes: %d in ONNX (after expanding %d function ops), %d in .tsr (%d Constant nodes to weights, %d folded, "
              "%d Conv+BatchNormalization fused, %d Conv+Mul/Add folded, %d HardSwish and %d Gelu patterns fused, %d dead "
              "removed)\n",
              rep.nodes_in, rep.functions_expanded, rep.nodes_out, rep.constants_to_weights, rep.folded, rep.batchnorms_folded,
              rep.conv_affine_folded, rep.hardswish_fused, rep.gelu_fused, rep.dead_removed);
  if (!shard.empty()) {
    std::printf("  --shard %s: %d column/row parallel pair(s) annotated (%d MLP, %d attention), %d vocab-parallel embedding(s)\n",
                shard.c_str(), srep.pairs, srep.pairs - srep.attention, srep.attention, srep.embeddings);
    for (const std::string& l : srep.lines) std::printf("    %s\n", l.c_str());
  }
  if (stages > 0) std::printf("pipeline: %d stages (parameter bytes balanced)\n%s", stages, cut_lines.c_str());
  return 0;
}

int cmd_inspect(const std::string& path, bool json) {
  auto t0 = Clock::now();
  SessionOptions so;
  so.allow_partial_weights = true;  // inspect describes sharded checkpoints too
  auto sr = Session::load(path, so);
  if (!sr.is_ok()) return fail(sr.status());
  double load_ms = ms_since(t0);
  const Session& s = *sr.value();
  const Model& m = s.model();
  std::map<std::string, int> ops;
  count_ops(m.graph, ops);
  int nodes = count_nodes(m.graph);
  uint64_t wb = weight_bytes(m.graph);
  struct stat st {};
  ::stat(path.c_str(), &st);
  if (json) {
    std::printf("{\"file\":\"%s\",\"format_version\":%u,\"file_bytes\":%lld,\"nodes\":%d,\"weight_bytes\":%llu,\"load_ms\":%.3f,",
                json_escape(path).c_str(), m.format_version, static_cast<long long>(st.st_size), nodes,
                static_cast<unsigned long long>(wb), load_ms);
    auto io = [&](const char* key, const std::vector<TensorInfo>& v) {
      std::printf("\"%s\":[", key);
      for (size_t i = 0; i < v.size(); ++i)
        std::printf("%s{\"name\":\"%s\",\"dtype\":\"%s\",\"shape\":\"%s\"}", i ? "," : "", json_escape(v[i].name).c_str(),
                    dtype_name(v[i].dtype), json_escape(dims_to_string(v[i])).c_str());
      std::printf("],");
    };
    io("inputs", s.inputs());
    io("outputs", s.outputs());
    std::printf("\"ops\":{");
    size_t k = 0;
    for (const auto& [op, c] : ops) std::printf("%s\"%s\":%d", k++ ? "," : "", json_escape(op).c_str(), c);
    const ModelExtras& x = m.extras;
    std::printf("},\"segments\":%zu,\"sharding\":{\"meshes\":%zu,\"tensor_shardings\":%zu,\"weight_chunks\":%zu},"
                "\"training_state\":%s}\n",
                x.segments, x.meshes, x.tensor_shardings, x.weight_chunks, x.training_state ? "true" : "false");
    return 0;
  }
  std::printf("file:            %s (%lld bytes)\n", path.c_str(), static_cast<long long>(st.st_size));
  std::printf("format version:  %u (TSR1)\n", m.format_version);
  std::string source = m.meta.properties.count("source_producer") ? m.meta.properties.at("source_producer") : "";
  while (!source.empty() && source.back() == ' ') source.pop_back();
  while (!source.empty() && source.front() == ' ') source.erase(source.begin());
  std::printf("producer:        %s %s (from %s)\n", m.meta.producer_name.c_str(), m.meta.producer_version.c_str(),
              source.empty() ? "an unnamed ONNX producer" : source.c_str());
  std::printf("opsets:         ");
  for (const auto& [d, v] : m.meta.opset_imports) std::printf(" %s:%lld", d.empty() ? "ai.onnx" : d.c_str(), static_cast<long long>(v));
  std::printf("\nload time:       %.3f ms (mmap + verify + IR)\n", load_ms);
  std::printf("weights:         %llu bytes\n", static_cast<unsigned long long>(wb));
  std::printf("nodes:           %d (including subgraphs)\n", nodes);
  if (m.extras.meshes == 0 && m.extras.tensor_shardings == 0)
    std::printf("sharding:        none (single device)\n");
  else
    std::printf("sharding:        %zu meshes, %zu tensor placements, %zu pre-sharded weight chunks\n", m.extras.meshes,
                m.extras.tensor_shardings, m.extras.weight_chunks);
  size_t state_chunks = 0;
  for (const WeightChunk& c : m.chunks) state_chunks += c.state.empty() ? 0 : 1;
  if (!m.chunks.empty())
    std::printf("  chunks:        %zu of weights, %zu of optimizer state (a sharded checkpoint: tessera-finetune --resume "
                "assembles it)\n", m.chunks.size() - state_chunks, state_chunks);
  static const char* const kRoles[] = {"data", "fsdp", "tensor", "pipeline"};
  for (const DeviceMesh& mesh : m.meshes) {
    std::printf("  mesh '%s':", mesh.name.c_str());
    for (size_t d = 0; d < mesh.shape.size(); ++d) {
      const auto role = d < mesh.roles.size() ? static_cast<size_t>(mesh.roles[d]) : 4;
      std::printf(" %s%s=%lld (%s)", d ? "x " : "", d < mesh.dim_names.size() ? mesh.dim_names[d].c_str() : "?",
                  static_cast<long long>(mesh.shape[d]), role < 4 ? kRoles[role] : "?");
    }
    std::printf("\n");
  }
  int stages = 0;
  for (const Node& n : m.graph.nodes) stages = std::max(stages, n.pipeline_stage + 1);
  if (stages > 0) std::printf("pipeline:        %d stages (Node::pipeline_stage)\n", stages);
  if (m.training)
    std::printf("training state:  optimizer %s, step %lld, %zu state tensors\n", m.training->optimizer.c_str(),
                static_cast<long long>(m.training->step), m.training->states.size());
  else
    std::printf("training state:  %s\n", m.extras.training_state ? "yes" : "none");
  std::printf("segments:        %zu\n", m.extras.segments);
  std::printf("inputs:\n");
  for (const auto& t : s.inputs()) std::printf("  %-30s %-8s %s\n", t.name.c_str(), dtype_name(t.dtype), dims_to_string(t).c_str());
  std::printf("outputs:\n");
  for (const auto& t : s.outputs()) std::printf("  %-30s %-8s %s\n", t.name.c_str(), dtype_name(t.dtype), dims_to_string(t).c_str());
  std::printf("ops:\n");
  for (const auto& [op, c] : ops) std::printf("  %-28s %d\n", op.c_str(), c);
  return 0;
}

int cmd_run(const std::string& path, const InputArgs& ia, const std::string& out_dir, const std::string& out_format,
            const std::string& backend, int threads, bool verbose) {
  auto sr = open_session(path, backend, threads);
  if (!sr.is_ok()) return fail(sr.status());
  Session& s = *sr.value();
  if (ia.inputs.empty() && !ia.random && !s.inputs().empty())
    return fail(invalid_argument("give --input NAME=FILE.npy for each model input (" + s.inputs()[0].name +
                                 (s.inputs().size() > 1 ? ", ..." : "") + "), or --random"));
  auto inputs = load_inputs(s, ia);
  if (!inputs.is_ok()) return fail(inputs.status());
  auto t0 = Clock::now();
  auto outs = s.run(inputs.value());
  if (!outs.is_ok()) return fail(outs.status());
  double run_ms = ms_since(t0);
  if (verbose) {
    PlanStats st = s.plan_stats();
    std::printf("plan: %zu kernels, %d nodes folded at plan time, arena %llu bytes (peak activations), planned in %.2f ms\n",
                st.steps, st.folded_nodes, static_cast<unsigned long long>(st.arena_bytes), st.plan_ms);
    if (!st.device.empty())
      std::printf("device: %s, %llu bytes (activations, scratch and uploaded weights)\n", st.device.c_str(),
                  static_cast<unsigned long long>(st.device_bytes));
    for (const auto& p : st.placements) std::printf("  %s\n", p.c_str());
  }
  if (!out_dir.empty()) ::mkdir(out_dir.c_str(), 0755);
  for (size_t i = 0; i < outs.value().size(); ++i) {
    const Tensor& t = outs.value()[i];
    std::string name = s.outputs()[i].name;
    if (!out_dir.empty()) {
      const bool pb = out_format == "pb";
      std::string file = out_dir + "/" + sanitize(name) + (pb ? ".pb" : ".npy");
      Status w = pb ? write_onnx_tensor_file(file, t, name) : write_npy(file, t);
      if (!w.is_ok() && !pb && w.code() == StatusCode::kUnimplemented)
        w = invalid_argument("output '" + name + "': " + w.message() + "; use --output-format pb (ONNX TensorProto)");
      if (!w.is_ok()) return fail(w);
      std::printf("output %-30s %-20s -> %s\n", name.c_str(), t.describe().c_str(), file.c_str());
    } else {
      std::printf("output %-30s %s (not written: no --output-dir)\n", name.c_str(), t.describe().c_str());
    }
  }
  std::printf("load %.2f ms, first run %.2f ms (includes planning)\n", s.load_ms(), run_ms);
  return 0;
}

/// Prints the profile of the timed runs: time per op type (sorted, share of the total) and
/// the slowest nodes, in milliseconds per run.
void print_profile(const Session& s) {
  uint64_t runs = 0;
  std::vector<StepProfile> prof = s.profile(&runs);
  if (prof.empty() || runs == 0) {
    std::printf("profile: no steps ran (the planner computed every output at plan time)\n");
    return;
  }
  double total = 0;
  std::map<std::string, std::pair<double, int>> by_op;
  for (const StepProfile& p : prof) {
    total += p.total_ms;
    auto& e = by_op[p.op_type + " (" + p.backend + ")"];
    e.first += p.total_ms;
    ++e.second;
  }
  std::vector<std::pair<std::string, std::pair<double, int>>> ops(by_op.begin(), by_op.end());
  std::sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
  const double r = static_cast<double>(runs);
  std::printf("profile: %.3f ms per run in %zu steps (mean of %llu runs)\n", total / r, prof.size(),
              static_cast<unsigned long long>(runs));
  std::printf("  %-34s %10s %7s %6s\n", "op type (backend)", "ms/run", "share", "nodes");
  for (const auto& [name, e] : ops)
    std::printf("  %-34s %10.3f %6.1f%% %6d\n", name.c_str(), e.first / r, total > 0 ? 100.0 * e.first / total : 0.0, e.second);
  std::sort(prof.begin(), prof.end(), [](const StepProfile& a, const StepProfile& b) { return a.total_ms > b.total_ms; });
  std::printf("  slowest nodes:\n");
  for (size_t i = 0; i < prof.size() && i < 15; ++i)
    std::printf("  %10.3f ms  %s\n", prof[i].total_ms / r, prof[i].node.c_str());
}

int cmd_bench(const std::string& path, const InputArgs& ia, const std::string& backend, int threads, int runs, int warmup,
              bool json, bool profile) {
  auto sr = open_session(path, backend, threads);
  if (!sr.is_ok()) return fail(sr.status());
  Session& s = *sr.value();
  auto inputs = load_inputs(s, ia);
  if (!inputs.is_ok()) return fail(inputs.status());
  for (int i = 0; i < warmup; ++i) {
    auto o = s.run(inputs.value());
    if (!o.is_ok()) return fail(o.status());
  }
  std::vector<double> ms;
  if (profile) s.set_profiling(true);
  for (int i = 0; i < runs; ++i) {
    auto t0 = Clock::now();
    auto o = s.run(inputs.value());
    ms.push_back(ms_since(t0));
    if (!o.is_ok()) return fail(o.status());
  }
  const std::vector<double> ms_in_order = ms;   // for "runs_ms": benchmarks pool runs of several processes
  std::sort(ms.begin(), ms.end());
  double median = ms[ms.size() / 2];
  if (ms.size() % 2 == 0) median = (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]) / 2;
  double p90 = ms[std::min(ms.size() - 1, static_cast<size_t>(0.9 * static_cast<double>(ms.size())))];
  PlanStats st = s.plan_stats();
  if (!json) {
    std::printf("model:        %s\n", path.c_str());
    std::printf("load:         %.3f ms\n", s.load_ms());
    std::printf("threads:      %d (the pool of the optimized kernels; reference kernels run on one)\n", s.threads());
    std::printf("runs:         %d after %d warm-up\n", runs, warmup);
    std::printf("median:       %.3f ms\n", median);
    std::printf("p90:          %.3f ms\n", p90);
    std::printf("arena:        %llu bytes peak activations\n", static_cast<unsigned long long>(st.arena_bytes));
    if (profile) print_profile(s);
  }
  // "threads": the pool's size (0 asks for the physical cores). "runs_ms": every timed run,
  // in run order.
  std::printf("{\"load_ms\":%.3f,\"median_ms\":%.3f,\"p90_ms\":%.3f,\"min_ms\":%.3f,\"runs\":%d,\"threads\":%d,"
              "\"threads_requested\":%d,\"arena_bytes\":%llu",
              s.load_ms(), median, p90, ms.front(), runs, s.threads(), threads, static_cast<unsigned long long>(st.arena_bytes));
  std::printf(",\"runs_ms\":[");
  for (size_t i = 0; i < ms_in_order.size(); ++i) std::printf("%s%.3f", i ? "," : "", ms_in_order[i]);
  std::printf("]}\n");
  return 0;
}

void add_input_options(CLI::App* c, InputArgs& ia) {
  c->add_option("--input,-i", ia.inputs, "NAME=FILE.npy or NAME=FILE.pb (ONNX TensorProto), one per model input");
  c->add_option("--shape", ia.shapes, "NAME=DIMS (e.g. x=1x3x224x224) for --random inputs with symbolic dims");
  c->add_flag("--random", ia.random, "fill inputs not given by --input with random values");
  c->add_option("--seed", ia.seed, "seed for --random")->capture_default_str();
}

}  // namespace
}  // namespace tessera

namespace {
int tessera_main(int argc, char** argv);
}  // namespace

int main(int argc, char** argv) {
  // Errors are Status values; this only turns a stray exception (e.g. std::bad_alloc) into
  // a clean error instead of std::terminate.
  try {
    return tessera_main(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "tessera: error: " << e.what() << "\n";
    return 1;
  }
}

namespace {
// A whole number, optionally signed (CLI11's Number takes "1.5", and its Range then calls
// "abc" out of range).
const CLI::Validator kInteger(
    [](std::string& v) -> std::string {
      size_t i = !v.empty() && (v[0] == '-' || v[0] == '+') ? 1 : 0;
      if (i == v.size()) return "Value " + v + " is not a whole number";
      for (; i < v.size(); ++i)
        if (v[i] < '0' || v[i] > '9') return "Value " + v + " is not a whole number";
      return std::string();
    },
    "INT");

int tessera_main(int argc, char** argv) {
  using namespace tessera;
  CLI::App app{"tessera: convert ONNX models to .tsr and run them"};
  // A flag given twice takes its last value (as onnxruntime_perf_test and most CLIs do);
  // repeatable options (--input) keep every value. Subcommands inherit this.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.set_version_flag("--version", std::string("tessera ") + TESSERA_VERSION + " (format TSR1 v" +
                                        std::to_string(kTsrFormatVersion) + ")");
  app.require_subcommand(1);

  std::string conv_in, conv_out;
  ConvertOptions copt;
  bool no_fold = false, no_bn = false, no_dce = false;
  auto* convert = app.add_subcommand("convert", "convert an ONNX model to a .tsr file");
  convert->add_option("model", conv_in, "input .onnx file")->required();
  convert->add_option("-o,--output", conv_out, "output .tsr file")->required();
  convert->add_flag("--no-fold", no_fold, "skip constant folding");
  convert->add_flag("--no-bn-fold", no_bn, "skip Conv+BatchNormalization folding");
  convert->add_flag("--no-dce", no_dce, "skip dead-code removal");
  std::string conv_shard;
  convert->add_option("--shard", conv_shard, "tp=N: annotate Megatron-style tensor-parallel sharding for N ranks");
  int pipeline_stages = 0;
  convert->add_option("--pipeline-stages", pipeline_stages, "cut into P pipeline stages (Node::pipeline_stage), balancing parameter bytes")
      ->check(kInteger)->check(CLI::Range(1, 65536));

  std::string insp_path;
  bool insp_json = false;
  auto* inspect = app.add_subcommand("inspect", "print a .tsr file's inputs, outputs, ops, weights and load time");
  inspect->add_option("model", insp_path, ".tsr file")->required();
  inspect->add_flag("--json", insp_json, "print one JSON object");

  std::string run_path, run_out, run_format = "npy", run_backend = "cpu";
  int run_threads = 0;
  bool run_verbose = false;
  InputArgs run_in;
  auto* run = app.add_subcommand("run", "run a .tsr model on .npy inputs and write .npy outputs");
  run->add_option("model", run_path, ".tsr file")->required();
  add_input_options(run, run_in);
  run->add_option("--output-dir,-o", run_out, "write each output as DIR/<output name>.npy (or .pb)");
  run->add_option("--output-format", run_format,
                  "npy, or pb (ONNX TensorProto: also holds bfloat16, float8 and int4, which .npy cannot)")
      ->check(CLI::IsMember({"npy", "pb"}))
      ->capture_default_str();
  run->add_option("--backend", run_backend, "backends in order of preference; the CPU is always the fallback")
      ->capture_default_str();
  run->add_option("--threads", run_threads, "CPU threads (0: one per physical core)")
      ->check(kInteger)->check(CLI::Range(0, 1024))
      ->capture_default_str();
  run->add_flag("--verbose,-v", run_verbose, "print the plan: which node runs where, arena size");
  run->add_flag("--no-fusion", g_no_fusion, "one kernel per node: no Conv/MatMul/Gemm + Add + activation fusion");

  std::string bench_path, bench_backend = "cpu";
  int bench_threads = 1, bench_runs = 20, bench_warmup = 3;
  bool bench_json = false, bench_profile = false;
  InputArgs bench_in;
  auto* bench = app.add_subcommand("bench", "time a .tsr model: load time, median and p90 latency");
  bench->add_option("model", bench_path, ".tsr file")->required();
  add_input_options(bench, bench_in);
  bench->add_option("--threads", bench_threads, "CPU threads (0: one per physical core; the reference kernels use one)")
      ->check(kInteger)->check(CLI::Range(0, 1024))->capture_default_str();
  bench->add_option("--runs", bench_runs, "timed runs")->check(kInteger)->check(CLI::Range(1, 1000000))->capture_default_str();
  bench->add_option("--warmup", bench_warmup, "untimed warm-up runs")->check(kInteger)->check(CLI::Range(0, 1000000))->capture_default_str();
  bench->add_option("--backend", bench_backend, "backends in order of preference; the CPU is always the fallback")
      ->capture_default_str();
  bench->add_flag("--json", bench_json, "print only the JSON line");
  bench->add_flag("--no-fusion", g_no_fusion, "one kernel per node: no Conv/MatMul/Gemm + Add + activation fusion");
  bench->add_flag("--profile", bench_profile, "time every step of the timed runs; print ms per op type and the slowest nodes");

  std::string export_in, export_out;
  auto* exportc = app.add_subcommand("export", "write a .tsr model (e.g. trained by tessera-finetune) back to ONNX");
  exportc->add_option("model", export_in, "input .tsr file")->required();
  exportc->add_option("-o,--output", export_out, "output .onnx file")->required();

  const std::string first = argc > 1 ? argv[1] : "";
  if (!first.empty() && first[0] != '-' && first != "convert" && first != "inspect" && first != "run" && first != "bench" &&
      first != "export") {
    std::cerr << "tessera: error: unknown command '" << argv[1] << "' (commands: convert, inspect, run, bench, export; see --help)\n";
    return 1;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (*convert) {
    copt.fold_constants = !no_fold;
    copt.fold_batchnorm = !no_bn;
    copt.remove_dead = !no_dce;
    return cmd_convert(conv_in, conv_out, copt, conv_shard, pipeline_stages);
  }
  if (*inspect) return cmd_inspect(insp_path, insp_json);
  if (*exportc) {
    auto m = read_tsr_file(export_in);
    if (!m.is_ok()) {
      std::cerr << "tessera export: error: " << m.status().message() << "\n";
      return 1;
    }
    Status s = export_onnx_file(**m, export_out);
    if (!s.is_ok()) {
      std::cerr << "tessera export: error: " << s.message() << "\n";
      return 1;
    }
    std::cout << "exported " << export_in << " -> " << export_out << "\n";
    return 0;
  }
  if (*run) {
    return cmd_run(run_path, run_in, run_out, run_format, run_backend, run_threads, run_verbose);
  }
  if (*bench) return cmd_bench(bench_path, bench_in, bench_backend, bench_threads, bench_runs, bench_warmup, bench_json, bench_profile);
  return 1;
}
}  // namespace
