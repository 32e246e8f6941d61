// Tensor parallelism: the local model of one tensor rank (train/tensor_parallel.h).
#include "train/tensor_parallel.h"

#include <cmath>
#include <map>
#include <set>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "tessera/session.h"
#include "train/boxing.h"
#include "train/sbp_rules.h"
#include "train/interpreter.h"

namespace tessera::train {

namespace {

bool is_split(const Placement& p) { return p.kind == PlacementKind::kSplit; }

// Places the nodes of the global graph one by one into the local graph, boxing inputs.
class Placer {
 public:
  Placer(Graph& g, int mesh_dim, int ranks, std::vector<std::string>* report)
      : g_(g), mesh_dim_(mesh_dim), ranks_(ranks), report_(report) {
    pl_.resize(g.values.size());
    rank_.assign(g.values.size(), -1);
    for (size_t v = 0; v < g.values.size(); ++v) {
      const Value& val = g.values[v];
      if (val.initializer) rank_[v] = static_cast<int>(val.initializer->rank());
      else if (val.has_shape) rank_[v] = static_cast<int>(val.shape.size());
    }
  }

  void set(int v, Placement p) { grow(); pl_[v] = p; }
  const Placement& at(int v) const { return pl_[v]; }

  Status place(Node n) {
    grow();
    const bool mm = (n.op_type == "MatMul" || n.op_type == "Gemm") && n.domain.empty() && n.inputs.size() >= 2 &&
                    n.inputs[1] >= 0 && rank_[n.inputs[1]] == 2 && (n.op_type == "MatMul" || n.attr_i("transA", 0) == 0);
    bool all_b = true;
    for (int in : n.inputs)
      if (in >= 0 && pl_[in].kind != PlacementKind::kBroadcast) all_b = false;
    if (all_b && !(mm && is_split(pl_[n.inputs[1]]))) {
      int r = -1;
      if (n.op_type == "Reshape" && n.inputs.size() > 1) r = reshape_rank(n.inputs[1]);
      if (n.op_type == "Transpose" || n.op_type == "Softmax" || n.op_type == "LogSoftmax") r = rank_[n.inputs[0]];
      return emit(std::move(n), Placement::broadcast(), r);
    }
    if (mm) return place_matmul(std::move(n));
    if (n.domain.empty() && keeps_split(n.op_type)) return place_elementwise(std::move(n));
    if (n.domain.empty() && n.op_type == "MatMul") return place_batched_matmul(std::move(n));
    if (n.domain.empty() && n.op_type == "Gather") return place_gather(std::move(n));
    if (n.domain.empty() && n.op_type == "Transpose") return place_transpose(std::move(n));
    if (n.domain.empty() && (n.op_type == "Softmax" || n.op_type == "LogSoftmax")) return place_softmax(std::move(n));
    if (n.domain.empty() && n.op_type == "Reshape") return place_reshape(std::move(n));
    // Any other op: every input Broadcast.
    for (size_t k = 0; k < n.inputs.size(); ++k) TSR_RETURN_IF_ERROR(box(n, k, Placement::broadcast()));
    return emit(std::move(n), Placement::broadcast());
  }

  /// Boxes graph output i to Broadcast.
  Status finish_outputs() {
    for (int& o : g_.outputs) {
      if (pl_[o].kind == PlacementKind::kBroadcast) continue;
      TSR_ASSIGN_OR_RETURN(int b, boxed(o, Placement::broadcast(), "graph output"));
      // Keep the output's name: the boxed value takes it.
      const std::string name = g_.values[o].name;
      g_.values[o].name = name + "/local";
      g_.values[b].name = name;
      g_.reindex();
      o = b;
    }
    return Status::ok();
  }

 private:
  void grow() {
    if (pl_.size() < g_.values.size()) {
      pl_.resize(g_.values.size());
      rank_.resize(g_.values.size(), -1);
    }
  }

  Status emit(Node n, Placement out, int out_rank = -1) {
    int r = out_rank;
    const bool shape_kept = n.op_type == "LayerNormalization" || n.op_type == "Softmax" || n.op_type == "LogSoftmax" ||
                            n.op_type == "Dropout" || n.op_type == "Cast" || n.op_type == "BatchNormalization";
    const bool broadcasting = keeps_split(n.op_type) || n.op_type == "MatMul" || n.op_type == "Gemm";
    if (r < 0 && shape_kept && !n.inputs.empty() && n.inputs[0] >= 0) r = rank_[n.inputs[0]];
    if (r < 0 && broadcasting) {  // numpy broadcasting: the largest rank, when every rank is known
      for (int in : n.inputs) {
        if (in < 0) continue;
        if (rank_[in] < 0) { r = -1; break; }
        r = std::max(r, rank_[in]);
      }
    }
    for (int o : n.outputs)
      if (o >= 0) {
        pl_[o] = out;
        if (rank_[o] < 0) rank_[o] = r;
        if (out.kind != PlacementKind::kBroadcast) {  // the declared (global) shape is not the local one
          g_.values[o].has_shape = false;
          g_.values[o].shape.clear();
        }
      }
    g_.nodes.push_back(std::move(n));
    return Status::ok();
  }

  // The value `v` boxed to `want` (one node, cached per value and placement).
  Result<int> boxed(int v, const Placement& want, const std::string& consumer) {
    if (pl_[v] == want) return v;
    const std::string key = std::to_string(v) + "|" + want.describe();
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    auto step = plan_boxing(pl_[v], want);
    if (!step.is_ok()) return step.status().with_context("value '" + g_.values[v].name + "' read by " + consumer);
    step->mesh_dim = mesh_dim_;
    const std::string what = std::string(collective_op_type(step->op)) + " of '" + g_.values[v].name + "' (" + pl_[v].describe() +
                             " -> " + want.describe() + ") for " + consumer;
    const int b = add_boxing_node(g_, v, *step, g_.values[v].name + "/" + collective_op_type(step->op));
    grow();
    pl_[b] = want;
    rank_[b] = rank_[v];
    cache_[key] = b;
    report_->push_back(what);
    return b;
  }

  Status box(Node& n, size_t k, const Placement& want) {
    if (k >= n.inputs.size() || n.inputs[k] < 0) return Status::ok();
    TSR_ASSIGN_OR_RETURN(n.inputs[k], boxed(n.inputs[k], want, n.describe()));
    return Status::ok();
  }

  // Megatron's f: a Broadcast value read by a rank-local op (whose gradient is partial).
  void copy_to_parallel(Node& n, size_t k) {
    const int v = n.inputs[k];
    const Value& val = g_.values[v];
    if (val.initializer && val.initializer->numel() <= 1) return;  // a constant: never differentiated
    const std::string key = std::to_string(v) + "|f";
    auto it = cache_.find(key);
    if (it == cache_.end()) {
      BoxingStep s;
      s.op = Collective::kCopyToParallel;
      s.mesh_dim = mesh_dim_;
      const int b = add_boxing_node(g_, v, s, val.name + "/CopyToParallel");
      grow();
      pl_[b] = Placement::broadcast();
      rank_[b] = rank_[v];
      report_->push_back("CopyToParallel of '" + g_.values[v].name + "' (B, all-reduce of its gradient) for " + n.describe());
      it = cache_.emplace(key, b).first;
    }
    n.inputs[k] = it->second;
  }

  Status place_matmul(Node n) {
    const bool gemm = n.op_type == "Gemm", tb = gemm && n.attr_i("transB", 0) != 0;
    const int col = tb ? -2 : -1, row = tb ? -1 : -2;
    const Placement w = pl_[n.inputs[1]];
    auto is = [&](const Placement& p, int d) { return is_split(p) && p.split_dim == d; };
    if (w.kind == PlacementKind::kPartial) return invalid_argument(n.describe() + ": a Partial weight cannot be multiplied");
    if (is(w, col)) {  // column parallel: X[B] x W[S(col)] -> S(-1)
      TSR_RETURN_IF_ERROR(box(n, 0, Placement::broadcast()));
      copy_to_parallel(n, 0);
      if (gemm && n.inputs.size() > 2 && n.inputs[2] >= 0) TSR_RETURN_IF_ERROR(box(n, 2, Placement::split(-1)));
      return emit(std::move(n), Placement::split(-1));
    }
    if (is(w, row)) {  // row parallel: X[S(-1)] x W[S(row)] -> P(sum)
      TSR_RETURN_IF_ERROR(box(n, 0, Placement::split(-1)));
      if (gemm && n.inputs.size() > 2 && n.inputs[2] >= 0) {
        // C is added once, after the all-reduce: Gemm without C, then Add.
        const int c = n.inputs[2], out = n.outputs[0];
        Value t;
        t.name = g_.values[out].name + "/partial";
        t.dtype = g_.values[out].dtype;
        const int tv = g_.add_value(std::move(t));
        grow();
        n.inputs.resize(2);
        n.outputs[0] = tv;
        if (n.attr_f("beta", 1.0f) != 1.0f)
          return unimplemented(n.describe() + ": a row-parallel Gemm with beta != 1");
        const std::string name = n.name;
        TSR_RETURN_IF_ERROR(emit(std::move(n), Placement::partial()));
        rank_[tv] = 2;
        Node add;
        add.op_type = "Add";
        add.opset = 14;
        add.name = name + "/bias";
        add.inputs = {tv, c};
        add.outputs = {out};
        return place(std::move(add));
      }
      return emit(std::move(n), Placement::partial());
    }
    if (is_split(w)) return invalid_argument(n.describe() + ": weight split on dim " + std::to_string(w.split_dim) + " is neither its input nor its output dim");
    // Replicated weight: a batch-split X stays split; otherwise X is gathered.
    const Placement x = pl_[n.inputs[0]];
    if (is_split(x) && x.split_dim != -1) return emit(std::move(n), x);
    for (size_t k = 0; k < n.inputs.size(); ++k) TSR_RETURN_IF_ERROR(box(n, k, Placement::broadcast()));
    return emit(std::move(n), Placement::broadcast());
  }

  // Everything Broadcast: the fallback of the rules below.
  Status all_broadcast(Node n, int out_rank = -1) {
    for (size_t k = 0; k < n.inputs.size(); ++k) TSR_RETURN_IF_ERROR(box(n, k, Placement::broadcast()));
    return emit(std::move(n), Placement::broadcast(), out_rank);
  }

  // Vocab-parallel embedding: a table [V, H] split on its rows, gathered by replicated ids.
  Status place_gather(Node n) {
    const int table = n.inputs[0], ids = n.inputs.size() > 1 ? n.inputs[1] : -1;
    const Value& tv = g_.values[table];
    const bool vocab = tv.initializer && tv.initializer->rank() == 2 && pl_[table] == Placement::split(-2) && ids >= 0 &&
                       pl_[ids].kind == PlacementKind::kBroadcast && n.attr_i("axis", 0) == 0;
    if (!vocab) return all_broadcast(std::move(n));
    auto it = global_rows_.find(tv.name);
    if (it == global_rows_.end()) return internal_error(n.describe() + ": the global row count of '" + tv.name + "' is unknown");
    n.op_type = "VocabParallelGather";
    n.domain = kTrainOpDomain;
    n.opset = 1;
    n.attributes = {int_attr("mesh_dim", mesh_dim_), int_attr("vocab", it->second)};
    report_->push_back(n.name + ": vocab-parallel Gather of '" + tv.name + "' (rows " + std::to_string(it->second) + " over " +
                       std::to_string(ranks_) + " ranks, out-of-range ids give zeros: P(sum))");
    const int r = ids >= 0 && rank_[ids] >= 0 ? rank_[ids] + 1 : -1;
    return emit(std::move(n), Placement::partial(), r);
  }

 public:
  /// Global row counts of split tables (for VocabParallelGather).
  std::map<std::string, int64_t> global_rows_;

 private:
  static Attribute int_attr(const std::string& name, int64_t v) {
    Attribute a;
    a.name = name;
    a.type = AttrType::kInt;
    a.i = v;
    return a;
  }

  // Attention's Q K^T and P V: both operands split on the same batch dim (the heads).
  Status place_batched_matmul(Node n) {
    const Placement a = pl_[n.inputs[0]], b = pl_[n.inputs[1]];
    if (is_split(a) && a == b && a.split_dim <= -3 && rank_[n.inputs[0]] == rank_[n.inputs[1]]) return emit(std::move(n), a);
    return all_broadcast(std::move(n));
  }

  // Transpose-13: a split dim moves with the permutation.
  Status place_transpose(Node n) {
    const int in = n.inputs[0], r = rank_[in];
    const Placement p = pl_[in];
    std::vector<int64_t> perm = n.attr_ints("perm");
    if (!is_split(p) || r < 0 || static_cast<int>(perm.size()) != r) return all_broadcast(std::move(n), r);
    for (int j = 0; j < r; ++j)
      if (perm[j] == r + p.split_dim) return emit(std::move(n), Placement::split(j - r), r);
    return all_broadcast(std::move(n), r);
  }

  Status place_softmax(Node n) {
    const int in = n.inputs[0], r = rank_[in];
    const Placement p = pl_[in];
    const int64_t axis = n.attr_i("axis", -1);
    if (is_split(p) && r > 0 && (axis < 0 ? axis : axis - r) != p.split_dim) return emit(std::move(n), p, r);
    return all_broadcast(std::move(n), r);
  }

  // Reshape-14 with a constant shape: a split last dim cut into (heads, head size), or a
  // split heads dim merged back with the head size. The constant carries the global head
  // count (or hidden size): the local graph gets a per-rank copy, divided by the ranks.
  Status place_reshape(Node n) {
    const int in = n.inputs[0], sv = n.inputs.size() > 1 ? n.inputs[1] : -1, r = rank_[in];
    const Placement p = pl_[in];
    if (!is_split(p) || sv < 0 || !g_.values[sv].initializer || r < 0) return all_broadcast(std::move(n), reshape_rank(sv));
    const Tensor& st = *g_.values[sv].initializer;
    std::vector<int64_t> c(static_cast<size_t>(st.numel()));
    for (size_t i = 0; i < c.size(); ++i)
      c[i] = st.dtype() == DType::kInt64 ? st.data_as<int64_t>()[i] : st.data_as<int32_t>()[i];
    const int nc = static_cast<int>(c.size());
    int at = -1, out_split = 0;
    if (p.split_dim == -1 && nc == r + 1 && nc >= 2 && c[nc - 2] > 0 && c[nc - 1] > 0) { at = nc - 2; out_split = -2; }
    if (p.split_dim == -2 && nc == r - 1 && nc >= 1 && c[nc - 1] > 0) { at = nc - 1; out_split = -1; }
    if (at < 0) return all_broadcast(std::move(n), nc);
    if (c[at] % ranks_ != 0)
      return invalid_argument(n.describe() + ": the shape constant '" + g_.values[sv].name + "' has " + std::to_string(c[at]) +
                              " at dim " + std::to_string(at) + " (heads or hidden size), which " + std::to_string(ranks_) + " ranks do not divide");
    c[at] /= ranks_;
    const std::string name = g_.values[sv].name + "/per_rank";
    int local = g_.find_value(name);
    if (local < 0) {
      Tensor t = Tensor::allocate(DType::kInt64, {nc}).value();
      for (int i = 0; i < nc; ++i) t.data_as<int64_t>()[i] = c[i];
      Value v;
      v.name = name;
      v.dtype = DType::kInt64;
      v.has_shape = true;
      v.shape = {Dim{nc, ""}};
      v.initializer = std::make_shared<const Tensor>(std::move(t));
      local = g_.add_value(std::move(v));
      grow();
      rank_[local] = 1;
      report_->push_back("Reshape shape '" + g_.values[sv].name + "' per rank for " + n.describe() + ": dim " + std::to_string(at) + " / " +
                         std::to_string(ranks_));
    }
    n.inputs[1] = local;
    return emit(std::move(n), Placement::split(out_split), nc);
  }

  int reshape_rank(int sv) const {
    return sv >= 0 && g_.values[sv].initializer ? static_cast<int>(g_.values[sv].initializer->numel()) : -1;
  }

  // Size of value v along dim d (negative, from the end): -1 unknown, 0 when v lacks it.
  int64_t size_at(int v, int d) const {
    const Value& val = g_.values[v];
    if (val.initializer) {
      const int64_t r = static_cast<int64_t>(val.initializer->rank());
      return r + d < 0 ? 0 : val.initializer->dim(r + d);
    }
    if (rank_[v] >= 0 && rank_[v] + d < 0) return 0;
    if (val.has_shape && static_cast<int>(val.shape.size()) + d >= 0 && val.shape[val.shape.size() + d].is_static())
      return val.shape[val.shape.size() + d].value;
    return -1;
  }

  Status place_elementwise(Node n) {
    for (size_t k = 0; k < n.inputs.size(); ++k)
      if (n.inputs[k] >= 0 && pl_[n.inputs[k]].kind == PlacementKind::kPartial) TSR_RETURN_IF_ERROR(box(n, k, Placement::broadcast()));
    int split = 0;  // the (negative) split dim of the first split input
    for (int in : n.inputs)
      if (in >= 0 && is_split(pl_[in])) { split = pl_[in].split_dim; break; }
    if (split == 0) return emit(std::move(n), Placement::broadcast());
    if (split > 0) return invalid_argument(n.describe() + ": split dims of activations are counted from the end");
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const int in = n.inputs[k];
      if (in < 0 || pl_[in] == Placement::split(split)) continue;
      const int64_t sz = size_at(in, split);
      if (pl_[in].kind == PlacementKind::kBroadcast && (sz == 0 || sz == 1)) {
        copy_to_parallel(n, k);  // broadcast along the split dim: read whole by every rank
        continue;
      }
      TSR_RETURN_IF_ERROR(box(n, k, Placement::split(split)));
    }
    return emit(std::move(n), Placement::split(split));
  }

  Graph& g_;
  int mesh_dim_, ranks_;
  std::vector<std::string>* report_;
  std::vector<Placement> pl_;
  std::vector<int> rank_;
  std::map<std::string, int> cache_;
};

}  // namespace

TensorParallel::~TensorParallel() { set_mesh_communicator(mesh_dim_, nullptr); }

Result<std::unique_ptr<TensorParallel>> TensorParallel::create(const Model& global, Communicator& tp, Communicator& ctrl) {
  const int n = tp.size();
  const std::string convert_hint = "convert it with `tessera convert MODEL.onnx -o OUT.tsr --shard tp=" + std::to_string(n) + "`";
  // The mesh with a tensor dim.
  int mesh = -1, dim = -1;
  for (size_t m = 0; m < global.meshes.size() && mesh < 0; ++m)
    for (size_t d = 0; d < global.meshes[m].roles.size(); ++d)
      if (global.meshes[m].roles[d] == MeshDimRole::kTensor) { mesh = static_cast<int>(m); dim = static_cast<int>(d); break; }
  if (mesh < 0 || global.shardings.empty())
    return invalid_argument("--parallel tp=" + std::to_string(n) + ": the model has no tensor-parallel sharding annotations (no mesh with a "
                            "tensor dim and no TensorSharding): " + convert_hint);
  if (global.meshes[mesh].shape[dim] != n)
    return invalid_argument("--parallel tp=" + std::to_string(n) + ": the model was annotated for tp=" + std::to_string(global.meshes[mesh].shape[dim]) +
                            " (mesh '" + global.meshes[mesh].name + "'): " + convert_hint);
  std::unique_ptr<TensorParallel> t(new TensorParallel());
  t->global_ = std::make_shared<Model>(global);
  t->tp_ = &tp;
  t->ctrl_ = &ctrl;
  t->mesh_dim_ = dim;
  auto local = std::make_shared<Model>(global);
  Graph& g = local->graph;
  std::map<std::string, Placement> annotated;  // non-initializer values: the placement the file states
  std::map<std::string, int> split_of;
  for (const TensorSharding& s : global.shardings) {
    if (static_cast<int>(s.mesh) != mesh) continue;
    for (size_t d = 0; d < s.placements.size(); ++d)
      if (static_cast<int>(d) != dim && s.placements[d].kind != PlacementKind::kBroadcast)
        return invalid_argument("sharding of '" + s.value + "': " + s.placements[d].describe() + " on mesh dim " + std::to_string(d) +
                                " (only the tensor dim may cut a value)");
    const Placement& p = s.placements[dim];
    const int v = g.find_value(s.value);
    if (v < 0) return invalid_argument("sharding of '" + s.value + "': no such value");
    Value& val = g.values[v];
    if (!val.initializer) {
      annotated[s.value] = p;
      continue;
    }
    if (p.kind == PlacementKind::kPartial) return invalid_argument("sharding of weight '" + s.value + "': a weight cannot be Partial");
    if (p.kind != PlacementKind::kSplit) continue;
    const Tensor& w = *val.initializer;
    if (p.split_dim < 0 || p.split_dim >= static_cast<int>(w.rank()) || w.dim(p.split_dim) < n)
      return invalid_argument("sharding of '" + s.value + "' " + w.describe() + ": cannot split dim " + std::to_string(p.split_dim) + " " +
                              std::to_string(n) + " ways");
    TSR_ASSIGN_OR_RETURN(Tensor piece, shard_slice(w, p.split_dim, n, tp.rank()));
    val.shape.clear();
    for (int64_t d : piece.shape()) val.shape.push_back(Dim{d, ""});
    val.has_shape = true;
    val.initializer = std::make_shared<const Tensor>(std::move(piece));
    t->splits_.push_back({s.value, p.split_dim});
    split_of[s.value] = p.split_dim;
  }
  if (t->splits_.empty())
    return invalid_argument("--parallel tp=" + std::to_string(n) + ": no weight of the model is split over the tensor dim: " + convert_hint);
  // A checkpoint's optimizer state: sliced like its parameter.
  if (global.training) {
    auto ts = std::make_shared<TrainingState>(*global.training);
    for (OptimizerStateTensor& st : ts->states) {
      auto it = split_of.find(st.value);
      if (it == split_of.end()) continue;
      TSR_ASSIGN_OR_RETURN(Tensor piece, shard_slice(*st.data, it->second, n, tp.rank()));
      st.data = std::make_shared<const Tensor>(std::move(piece));
    }
    local->training = ts;
  }
  // Placements through the graph, boxing nodes where they disagree.
  std::vector<Node> nodes = std::move(g.nodes);
  g.nodes.clear();
  Placer placer(g, dim, n, &t->report_);
  for (const auto& [name, d] : split_of)
    if (d == 0) placer.global_rows_[name] = global.graph.values[global.graph.find_value(name)].initializer->dim(0);
  for (const auto& [name, d] : split_of) placer.set(g.find_value(name), Placement::split(d - static_cast<int>(g.values[g.find_value(name)].initializer->rank())));
  for (Node& node : nodes) TSR_RETURN_IF_ERROR(placer.place(std::move(node)));
  for (const auto& [name, p] : annotated) {
    const Placement got = placer.at(g.find_value(name));
    if (got.kind != p.kind)  // split dims: the file counts from the front, the propagation from the end
      return invalid_argument("value '" + name + "': annotated " + p.describe() + " but the placements propagate to " + got.describe() +
                              " (a sharding this module cannot run)");
  }
  TSR_RETURN_IF_ERROR(placer.finish_outputs());
  TSR_RETURN_IF_ERROR(g.validate().with_context("tensor-parallel local graph"));
  t->local_ = std::move(local);
  set_mesh_communicator(dim, &tp);
  return t;
}

uint64_t TensorParallel::all_reduce_payload_bytes() const { return mesh_all_reduce_payload_bytes(mesh_dim_); }

bool TensorParallel::is_split(const std::string& name) const {
  for (const Split& s : splits_)
    if (s.value == name) return true;
  return false;
}

Result<double> TensorParallel::clip_grad_global_norm(std::vector<Tensor>& grads, const std::vector<Param>& params, double max_norm) {
  double ss[2] = {0, 0};  // split (summed over ranks), replicated (once)
  for (size_t i = 0; i < grads.size(); ++i) {
    const Tensor& g = grads[i];
    double s = 0;
    for (int64_t k = 0; k < g.numel(); ++k) s += static_cast<double>(g.data_as<float>()[k]) * g.data_as<float>()[k];
    ss[is_split(params[i].name) ? 0 : 1] += s;
  }
  TSR_RETURN_IF_ERROR(ctrl_->all_reduce(ss, ss, 1, DType::kFloat64, ReduceOp::kSum));  // ss[0] only
  const double norm = std::sqrt(ss[0] + ss[1]);
  if (max_norm > 0 && norm > max_norm) {
    const double s = max_norm / (norm + 1e-6);  // as train/optim.cc clip_grad_global_norm
    for (Tensor& g : grads)
      for (int64_t k = 0; k < g.numel(); ++k) g.data_as<float>()[k] = static_cast<float>(g.data_as<float>()[k] * s);
  }
  return norm;
}

Result<std::shared_ptr<Model>> TensorParallel::gather(const Model& local) const {
  auto m = std::make_shared<Model>(*global_);
  Graph& g = m->graph;
  const Graph& lg = local.graph;
  for (Value& v : g.values) {
    if (!v.initializer) continue;
    const int lv = lg.find_value(v.name);
    if (lv < 0 || !lg.values[lv].initializer) continue;
    Tensor t = *lg.values[lv].initializer;
    for (const Split& s : splits_)
      if (s.value == v.name) { TSR_ASSIGN_OR_RETURN(t, all_gather_tensor(*ctrl_, t, s.dim)); }
    v.initializer = std::make_shared<const Tensor>(std::move(t));
    v.trainable = lg.values[lv].trainable;
  }
  if (local.training) {
    auto ts = std::make_shared<TrainingState>(*local.training);
    for (OptimizerStateTensor& st : ts->states)
      for (const Split& s : splits_)
        if (s.value == st.value) {
          TSR_ASSIGN_OR_RETURN(Tensor full, all_gather_tensor(*ctrl_, *st.data, s.dim));
          st.data = std::make_shared<const Tensor>(std::move(full));
        }
    m->training = ts;
  }
  m->meta.properties = local.meta.properties;
  return m;
}

uint64_t TensorParallel::replicated_hash(const std::vector<Param>& params) const {
  uint64_t h = 0;
  for (const Param& p : params)
    if (!is_split(p.name)) h = h * 1000003ULL ^ XXH3_64bits(p.value.data(), p.value.nbytes());
  return h;
}

Status check_model_input(const Model& model, const Shape& x) {
  SessionOptions so;
  so.threads = 1;
  so.verify_checksums = false;
  so.allow_partial_weights = true;  // only its input shapes are checked (a resumed sharded checkpoint has chunks)
  TSR_ASSIGN_OR_RETURN(auto session, Session::create(std::make_shared<Model>(model), so));
  const std::string in = model.graph.inputs.empty() ? std::string("?") : model.graph.values[model.graph.inputs[0]].name;
  return session->prepare({x}).with_context("input '" + in + "' of shape " + shape_to_string(x));
}

}  // namespace tessera::train
