#include "converter/pipeline_stages.h"

#include <algorithm>
#include <limits>
#include <unordered_set>

namespace tessera {

namespace {

bool is_param(const Value& v) {
  return v.initializer && v.initializer->dtype() == DType::kFloat32 && v.initializer->numel() > 1;
}

// The values of g node n reads: its inputs, and the values of g that its subgraphs (If
// branches, Loop and Scan bodies, at any depth) read from the enclosing scope, which must
// be in the node's stage as much as its inputs (a cut that missed them sent nothing).
std::vector<int> reads(const Graph& g, const Node& n) {
  std::vector<int> r = n.inputs;
  std::unordered_set<std::string> seen;
  n.outer_reads(seen);
  std::vector<std::string> names(seen.begin(), seen.end());
  std::sort(names.begin(), names.end());  // a fixed order, whatever the hash
  for (const std::string& name : names) {
    const int v = g.find_value(name);
    if (v >= 0 && std::find(r.begin(), r.end(), v) == r.end()) r.push_back(v);
  }
  return r;
}

std::vector<int> sink_ids(const Graph& g, const std::vector<std::string>& sinks, Status* s) {
  std::vector<int> ids;
  if (sinks.empty()) return g.outputs;
  for (const std::string& n : sinks) {
    const int v = g.find_value(n);
    if (v < 0) *s = not_found("pipeline cut: no value named '" + n + "'");
    ids.push_back(v);
  }
  return ids;
}

// Fills cut.boundary and cut.param_bytes from cut.node_stage; checks that values flow
// forward and that each parameter lives in one stage.
Status finish(const Graph& g, const std::vector<int>& sinks, PipelineCut& cut) {
  const int P = cut.stages;
  std::vector<int> prod(g.values.size(), -1), maxc(g.values.size(), -1), first_reader(g.values.size(), -1);
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (int o : g.nodes[i].outputs)
      if (o >= 0) prod[o] = cut.node_stage[i];
  cut.param_bytes.assign(P, 0);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    const int s = cut.node_stage[i];
    for (int in : reads(g, n)) {
      if (in < 0) continue;
      const Value& v = g.values[in];
      if (v.initializer) {
        if (!is_param(v)) continue;
        if (first_reader[in] < 0) {
          first_reader[in] = s;
          cut.param_bytes[s] += static_cast<int64_t>(v.initializer->nbytes());
        } else if (first_reader[in] != s) {
          return invalid_argument("pipeline stages: parameter '" + v.name + "' is read in stage " + std::to_string(first_reader[in]) +
                                  " and in stage " + std::to_string(s) + " (by " + n.describe() +
                                  "); tied weights must stay in one stage");
        }
        continue;
      }
      if (prod[in] > s)
        return invalid_argument("pipeline stages: " + n.describe() + " in stage " + std::to_string(s) + " reads '" + v.name +
                                "' made in the later stage " + std::to_string(prod[in]));
      maxc[in] = std::max(maxc[in], s);
    }
  }
  for (int v : sinks)
    if (v >= 0 && !g.values[v].initializer) maxc[v] = P - 1;
  cut.boundary.assign(P + 1, {});
  for (size_t v = 0; v < g.values.size(); ++v) {
    if (g.values[v].initializer || maxc[v] < 0) continue;
    for (int k = prod[v] + 1; k <= maxc[v]; ++k) cut.boundary[k].push_back(static_cast<int>(v));
  }
  for (int v : sinks)
    if (v >= 0) cut.boundary[P].push_back(v);
  return Status::ok();
}

}  // namespace

std::string PipelineCut::describe(const Graph& g) const {
  std::string s;
  for (int k = 0; k < stages; ++k) {
    int lo = -1, hi = -1;
    for (size_t i = 0; i < node_stage.size(); ++i)
      if (node_stage[i] == k) {
        if (lo < 0) lo = static_cast<int>(i);
        hi = static_cast<int>(i);
      }
    s += "stage " + std::to_string(k) + ": nodes " + std::to_string(lo) + "-" + std::to_string(hi) + " (" +
         (lo >= 0 ? g.nodes[lo].name + " .. " + g.nodes[hi].name : std::string("none")) + "), " +
         std::to_string(param_bytes[k]) + " parameter bytes";
    if (k + 1 < stages) {
      s += ", sends";
      for (int v : boundary[k + 1]) s += " " + g.values[v].name;
    }
    s += "\n";
  }
  return s;
}

Result<PipelineCut> cut_pipeline(const Graph& g, int stages, const std::vector<std::string>& sink_names) {
  if (stages < 1) return invalid_argument("pipeline stages: the count must be >= 1, got " + std::to_string(stages));
  Status st = Status::ok();
  const std::vector<int> sinks = sink_ids(g, sink_names, &st);
  TSR_RETURN_IF_ERROR(st);
  const int n = static_cast<int>(g.nodes.size());
  // cost[i]: bytes of the parameters node i reads first; a cut before node j is forbidden
  // when a parameter has readers on both sides.
  std::vector<int64_t> cost(n, 0);
  std::vector<bool> allowed(n + 1, true);
  std::vector<int> first(g.values.size(), -1), last(g.values.size(), -1);
  std::vector<std::vector<int>> node_reads(n);
  for (int i = 0; i < n; ++i) node_reads[i] = reads(g, g.nodes[i]);
  for (int i = 0; i < n; ++i)
    for (int in : node_reads[i])
      if (in >= 0 && is_param(g.values[in])) {
        if (first[in] < 0) {
          first[in] = i;
          cost[i] += static_cast<int64_t>(g.values[in].initializer->nbytes());
        }
        last[in] = i;
      }
  for (size_t v = 0; v < g.values.size(); ++v)
    for (int j = first[v] + 1; first[v] >= 0 && j <= last[v]; ++j) allowed[j] = false;
  // cross[j]: values crossing a cut before node j (made before j or a graph input, read at
  // or after j, or a sink).
  std::vector<int> prod(g.values.size(), -1), lastuse(g.values.size(), -1);
  for (int i = 0; i < n; ++i) {
    for (int o : g.nodes[i].outputs)
      if (o >= 0) prod[o] = i;
    for (int in : node_reads[i])
      if (in >= 0) lastuse[in] = i;
  }
  for (int v : sinks)
    if (v >= 0) lastuse[v] = n;
  std::vector<int> cross(n + 1, 0);
  for (size_t v = 0; v < g.values.size(); ++v) {
    if (g.values[v].initializer || lastuse[v] < 0) continue;
    for (int j = prod[v] + 1; j <= lastuse[v] && j <= n; ++j) cross[j]++;
  }
  std::vector<int64_t> prefix(n + 1, 0);
  for (int i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + cost[i];
  int readers = 0, cut_points = 0;
  for (int i = 0; i < n; ++i) readers += cost[i] > 0;
  for (int j = 1; j < n; ++j) cut_points += allowed[j] && prefix[j] > 0 && prefix[n] - prefix[j] > 0;
  const std::string why = " (" + std::to_string(n) + " nodes, " + std::to_string(readers) +
                          " of them the first to read a parameter, " + std::to_string(cut_points) +
                          " cut points between them; every stage needs a node with parameters)";
  if (readers < stages)
    return invalid_argument("pipeline stages: the model cannot be cut into " + std::to_string(stages) + (stages == 1 ? " stage" : " stages") + why);
  // best[k][j]: (largest stage bytes, crossing values) of the first j nodes in k stages.
  using Score = std::pair<int64_t, int64_t>;
  const Score kInf = {std::numeric_limits<int64_t>::max(), 0};
  std::vector<std::vector<Score>> best(stages + 1, std::vector<Score>(n + 1, kInf));
  std::vector<std::vector<int>> from(stages + 1, std::vector<int>(n + 1, -1));
  for (int j = 1; j <= n; ++j)
    if (prefix[j] > 0) best[1][j] = {prefix[j], 0};
  for (int k = 2; k <= stages; ++k)
    for (int j = k; j <= n; ++j)
      for (int i = k - 1; i < j; ++i) {
        if (!allowed[i] || best[k - 1][i] == kInf || prefix[j] - prefix[i] <= 0) continue;
        const Score s = {std::max(best[k - 1][i].first, prefix[j] - prefix[i]), best[k - 1][i].second + cross[i]};
        if (s < best[k][j]) {
          best[k][j] = s;
          from[k][j] = i;
        }
      }
  if (best[stages][n] == kInf)
    return invalid_argument("pipeline stages: the model cannot be cut into " + std::to_string(stages) + (stages == 1 ? " stage" : " stages") + why);
  PipelineCut cut;
  cut.stages = stages;
  cut.node_stage.assign(n, 0);
  for (int k = stages, j = n; k >= 1; --k) {
    const int i = k == 1 ? 0 : from[k][j];
    for (int q = i; q < j; ++q) cut.node_stage[q] = k - 1;
    j = i;
  }
  TSR_RETURN_IF_ERROR(finish(g, sinks, cut));
  return cut;
}

Result<PipelineCut> pipeline_cut_from_graph(const Graph& g, int stages, const std::vector<std::string>& sink_names) {
  Status st = Status::ok();
  const std::vector<int> sinks = sink_ids(g, sink_names, &st);
  TSR_RETURN_IF_ERROR(st);
  PipelineCut cut;
  int with = 0, top = -1;
  for (const Node& n : g.nodes) {
    with += n.pipeline_stage >= 0;
    top = std::max(top, n.pipeline_stage);
  }
  if (with == 0) return cut;
  for (const Node& n : g.nodes)
    if (n.pipeline_stage < 0)
      return invalid_argument("pipeline stages in the file: " + n.describe() + " has no stage while " + std::to_string(with) +
                              " nodes have one");
  if (stages > 0 && top + 1 != stages)
    return invalid_argument("the file is cut into " + std::to_string(top + 1) + " pipeline stages (tessera convert --pipeline-stages), not " +
                            std::to_string(stages) + "; convert it again with --pipeline-stages " + std::to_string(stages));
  cut.stages = top + 1;
  std::vector<int> count(cut.stages, 0);
  for (const Node& n : g.nodes) {
    cut.node_stage.push_back(n.pipeline_stage);
    count[n.pipeline_stage]++;
  }
  for (int k = 0; k < cut.stages; ++k)
    if (count[k] == 0) return invalid_argument("pipeline stages in the file: stage " + std::to_string(k) + " has no node");
  TSR_RETURN_IF_ERROR(finish(g, sinks, cut));
  for (int k = 0; k < cut.stages; ++k)
    if (cut.param_bytes[k] == 0) return invalid_argument("pipeline stages in the file: stage " + std::to_string(k) + " has no parameters");
  return cut;
}

void apply_pipeline_cut(Graph& g, const PipelineCut& cut) {
  for (size_t i = 0; i < g.nodes.size() && i < cut.node_stage.size(); ++i) g.nodes[i].pipeline_stage = cut.node_stage[i];
}

}  // namespace tessera
