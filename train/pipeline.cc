#include "train/pipeline.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include "train/autodiff.h"
#include "train/data_parallel.h"
#include "train/parameters.h"

namespace tessera::train {

namespace {

constexpr int kMaxRank = 8;
constexpr int kHeader = 2 + kMaxRank;  // dtype, rank, dims

// Float32, or of a dtype the file does not declare (a node output before shape inference):
// such a crossing value gets a gradient.
bool float_value(const Value& v) { return v.dtype == DType::kFloat32 || v.dtype == DType::kUndefined; }

int add_onnx_node(Graph& g, const std::string& op, const std::vector<int>& ins, const std::string& out, int opset,
                  std::vector<Attribute> attrs = {}, const std::string& domain = "") {
  Node n;
  n.op_type = op;
  n.domain = domain;
  n.opset = opset;
  n.name = out;
  n.inputs = ins;
  n.attributes = std::move(attrs);
  Value v;
  v.name = out;
  v.dtype = DType::kFloat32;
  n.outputs = {g.add_value(std::move(v))};
  g.nodes.push_back(n);
  return n.outputs[0];
}

Tensor rows_of(const Tensor& t, int64_t r0, int64_t r1) {
  Shape s = t.shape();
  s[0] = r1 - r0;
  Tensor o = Tensor::allocate(t.dtype(), s).value();
  const size_t row = t.dim(0) ? t.nbytes() / static_cast<size_t>(t.dim(0)) : 0;
  if (o.nbytes()) std::memcpy(o.data(), static_cast<const char*>(t.data()) + r0 * row, o.nbytes());
  return o;
}

Status send_tensors(const std::vector<Tensor>& ts, Communicator& pp, Communicator* meta, int peer) {
  if (meta) {
    std::vector<int64_t> h(ts.size() * kHeader, 0);
    for (size_t i = 0; i < ts.size(); ++i) {
      if (ts[i].rank() > kMaxRank) return invalid_argument("pipeline: a crossing value of rank > 8: " + ts[i].describe());
      h[i * kHeader] = static_cast<int64_t>(ts[i].dtype());
      h[i * kHeader + 1] = ts[i].rank();
      for (int d = 0; d < ts[i].rank(); ++d) h[i * kHeader + 2 + d] = ts[i].dim(d);
    }
    if (!h.empty()) TSR_RETURN_IF_ERROR(meta->send(h.data(), static_cast<int64_t>(h.size()), DType::kInt64, peer));
  }
  for (const Tensor& t : ts)
    if (t.numel()) TSR_RETURN_IF_ERROR(pp.send(t.data(), t.numel(), t.dtype(), peer));
  return Status::ok();
}

Result<std::vector<Tensor>> recv_tensors(size_t n, Communicator& pp, Communicator& meta, int peer) {
  std::vector<int64_t> h(n * kHeader, 0);
  if (n) TSR_RETURN_IF_ERROR(meta.recv(h.data(), static_cast<int64_t>(h.size()), DType::kInt64, peer));
  std::vector<Tensor> out;
  for (size_t i = 0; i < n; ++i) {
    const int64_t rank = h[i * kHeader + 1];
    if (rank < 0 || rank > kMaxRank) return internal_error("pipeline: bad header from stage " + std::to_string(peer));
    Shape s(h.begin() + static_cast<long>(i * kHeader + 2), h.begin() + static_cast<long>(i * kHeader + 2 + rank));
    TSR_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(static_cast<DType>(h[i * kHeader]), s));
    out.push_back(std::move(t));
  }
  for (Tensor& t : out)
    if (t.numel()) TSR_RETURN_IF_ERROR(pp.recv(t.data(), t.numel(), t.dtype(), peer));
  return out;
}

}  // namespace

Result<PipelineSchedule> parse_schedule(const std::string& text) {
  if (text == "gpipe") return PipelineSchedule::kGPipe;
  if (text == "1f1b") return PipelineSchedule::kOneFOneB;
  return invalid_argument("--schedule '" + text + "': expected gpipe or 1f1b");
}

std::vector<PipelineAction> pipeline_schedule(PipelineSchedule s, int stages, int stage, int m) {
  using A = PipelineAction;
  std::vector<A> a;
  auto fwd = [&](int i) { a.insert(a.end(), {{A::kRecvForward, i}, {A::kForward, i}, {A::kSendForward, i}}); };
  auto bwd = [&](int i) { a.insert(a.end(), {{A::kRecvBackward, i}, {A::kBackward, i}, {A::kSendBackward, i}}); };
  if (s == PipelineSchedule::kGPipe) {
    for (int i = 0; i < m; ++i) fwd(i);
    for (int i = 0; i < m; ++i) bwd(i);
    return a;
  }
  // Megatron-LM's forward_backward_pipelining_without_interleaving.
  const int warmup = std::min(stages - stage - 1, m), steady = m - warmup;
  for (int i = 0; i < warmup; ++i) fwd(i);
  if (steady > 0) a.push_back({A::kRecvForward, warmup});
  for (int k = 0; k < steady; ++k) {
    const int f = warmup + k;
    // send_forward_recv_backward (this stage is the lower rank of the pair: sends first)
    a.insert(a.end(), {{A::kForward, f}, {A::kSendForward, f}, {A::kRecvBackward, k}, {A::kBackward, k}});
    // send_backward_recv_forward (the higher rank of its pair with stage - 1: receives first)
    if (k + 1 < steady) a.push_back({A::kRecvForward, f + 1});
    a.push_back({A::kSendBackward, k});
  }
  for (int i = steady; i < m; ++i) bwd(i);
  return a;
}

struct PipelineStage::Stash {
  std::vector<Tensor> inputs;                      // received (or x), per in_names_
  std::vector<std::pair<std::string, Tensor>> keep;  // what the backward graph reads
  std::vector<Tensor> outputs, cot, in_grads;
  double weight = 0;
  uint64_t bytes = 0;
};

Result<std::unique_ptr<PipelineStage>> PipelineStage::create(const Model& model, const PipelineCut& cut, int stage,
                                                             const TrainerConfig& cfg) {
  TSR_RETURN_IF_ERROR(validate(cfg.optimizer));
  if (cfg.loss != "ce" && cfg.loss != "mse") return invalid_argument("loss '" + cfg.loss + "': expected ce or mse");
  if (cfg.replace_head > 0) return invalid_argument("--replace-head with pipeline parallelism: replace the head in one process first");
  const Graph& g = model.graph;
  if (stage < 0 || stage >= cut.stages || cut.node_stage.size() != g.nodes.size())
    return invalid_argument("pipeline: stage " + std::to_string(stage) + " of a cut of " + std::to_string(cut.stages));
  if (g.inputs.size() != 1 || g.outputs.size() != 1)
    return invalid_argument("training needs a model with one input and one output");
  std::unique_ptr<PipelineStage> p(new PipelineStage());
  p->cfg_ = cfg;
  p->stages_ = cut.stages;
  p->stage_ = stage;
  const bool last = stage + 1 == cut.stages;
  for (const Node& n : g.nodes)
    if (n.op_type == "BatchNormalization" && cfg.batchnorm_train)
      return invalid_argument("pipeline parallelism: " + n.describe() +
                              " in training mode would need batch statistics over all micro-batches; give --bn-eval");
  p->input_ = g.values[g.inputs[0]].name;
  p->logits_ = pipeline_loss_input(g, cfg.loss);
  // Parameters: as Trainer::create chooses them, restricted to this stage's readers.
  Graph tg = g;
  tg.nodes.clear();
  std::vector<bool> mine(g.nodes.size(), false);
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (cut.node_stage[i] == stage) {
      tg.nodes.push_back(g.nodes[i]);
      mine[i] = true;
    }
  TSR_ASSIGN_OR_RETURN(std::vector<std::string> wrt, trainable_parameters(g, cfg.freeze, nullptr, &mine));
  const size_t nparam_wrt = wrt.size();
  tg.inputs.clear();
  tg.outputs.clear();
  for (int k : {stage, stage + 1})
    for (int v : cut.boundary[k])
      if (tg.values[v].dtype == DType::kUndefined) tg.values[v].dtype = DType::kFloat32;
  for (int v : cut.boundary[stage]) {
    tg.inputs.push_back(v);
    p->in_names_.push_back(g.values[v].name);
    const bool fl = float_value(g.values[v]) && stage > 0;
    p->in_float_.push_back(fl);
    if (fl) wrt.push_back(g.values[v].name);
  }
  std::string loss;
  if (last) {
    bool has = false;
    for (int v : cut.boundary[cut.stages]) has |= g.values[v].name == p->logits_;
    if (!has) return invalid_argument("pipeline: the cut does not end at the loss' input '" + p->logits_ + "'");
    loss = tg.values[append_loss_node(tg, cfg.loss, cfg.label_smoothing, tg.find_value(p->logits_), &p->target_)].name;
  } else {
    for (int v : cut.boundary[stage + 1]) {
      tg.outputs.push_back(v);
      p->out_names_.push_back(g.values[v].name);
      p->out_float_.push_back(float_value(g.values[v]));
    }
  }
  // Forward nodes (with the loss on the last stage) make the values below nv_fwd; the dot
  // product and what append_backward adds (it may put Shape nodes first) make the others.
  const size_t nv_fwd = tg.values.size();
  if (!last) {
    // L = sum_j ReduceSum(out_j * cot_j): its gradient wrt out_j is cot_j.
    int acc = -1;
    for (size_t j = 0; j < p->out_names_.size(); ++j) {
      if (!p->out_float_[j]) {
        p->cot_names_.push_back("");
        continue;
      }
      Value cv;
      cv.name = p->out_names_[j] + "/pp_cotangent";
      cv.dtype = DType::kFloat32;
      const int c = tg.add_value(std::move(cv));
      tg.inputs.push_back(c);
      p->cot_names_.push_back(tg.values[c].name);
      const int m = add_onnx_node(tg, "Mul", {tg.find_value(p->out_names_[j]), c}, p->out_names_[j] + "/pp_dot_mul", 14);
      Attribute kd;
      kd.name = "keepdims";
      kd.type = AttrType::kInt;
      kd.i = 0;
      const int r = add_onnx_node(tg, "ReduceSum", {m}, p->out_names_[j] + "/pp_dot", 13, {kd});
      acc = acc < 0 ? r : add_onnx_node(tg, "Add", {acc, r}, p->out_names_[j] + "/pp_dot_sum", 14);
    }
    if (acc < 0) return invalid_argument("pipeline: stage " + std::to_string(stage) + " sends no float value to the next stage");
    loss = tg.values[acc].name;
  }
  p->loss_ = loss;
  // Evaluation runs the forward graph in inference mode; training sets Dropout's training
  // mode (as Trainer does).
  auto eg = std::make_shared<Graph>(tg);
  set_dropout_training(tg);
  TSR_ASSIGN_OR_RETURN(BackwardInfo info, append_backward(tg, loss, wrt));
  p->seed_ = info.seed;
  for (size_t i = 0; i < wrt.size(); ++i) {
    if (i < nparam_wrt) {
      if (zero_gradient(tg, info.grads[i])) continue;
      TSR_ASSIGN_OR_RETURN(Param pr, param_to_train(g, wrt[i], model));
      p->params_.push_back(std::move(pr));
    }
    p->grad_names_.push_back(info.grads[i]);
  }
  TSR_RETURN_IF_ERROR(check_resumed_optimizer(model, cfg.optimizer.kind));
  if (model.training) p->step_ = model.training->step;
  // The forward graph and the backward graph (the rest, in order) share the values.
  auto fg = std::make_shared<Graph>(tg);
  auto bg = std::make_shared<Graph>(tg);
  fg->nodes.clear();
  bg->nodes.clear();
  std::set<int> made_fwd, made_any;
  for (const Node& n : tg.nodes)
    for (int o : n.outputs)
      if (o >= 0) made_any.insert(o);
  for (const Node& n : tg.nodes) {
    bool fwd = !n.outputs.empty() && n.outputs[0] >= 0 && static_cast<size_t>(n.outputs[0]) < nv_fwd;
    // A Shape of a forward value runs in the forward pass: the backward pass then keeps a
    // few int64 dims instead of the whole activation.
    if (!fwd && n.op_type == "Shape" && n.domain.empty() && !n.inputs.empty() && n.inputs[0] >= 0 &&
        (made_fwd.count(n.inputs[0]) || !made_any.count(n.inputs[0])))
      fwd = true;
    if (fwd)
      for (int o : n.outputs)
        if (o >= 0) made_fwd.insert(o);
    (fwd ? fg : bg)->nodes.push_back(n);
  }
  std::set<int> fmade, bmade;
  for (const Node& n : fg->nodes)
    for (int o : n.outputs)
      if (o >= 0) fmade.insert(o);
  for (const Node& n : bg->nodes)
    for (int o : n.outputs)
      if (o >= 0) bmade.insert(o);
  std::set<std::string> param_names;
  for (const std::string& w : wrt) param_names.insert(w);
  std::set<int> reads;
  for (const Node& n : bg->nodes)
    for (int in : n.inputs)
      if (in >= 0 && !bmade.count(in) && (!tg.values[in].initializer || param_names.count(tg.values[in].name))) reads.insert(in);
  for (int v : reads) {
    p->bwd_reads_.push_back(tg.values[v].name);
    if (fmade.count(v)) p->saved_.push_back(tg.values[v].name);
  }
  std::vector<std::string> ffetch = last ? std::vector<std::string>{loss} : p->out_names_;
  for (const std::string& s : p->saved_) ffetch.push_back(s);
  TSR_ASSIGN_OR_RETURN(p->fwd_, Interpreter::create(fg, ffetch));
  std::vector<std::string> bfetch;
  for (const std::string& gname : p->grad_names_) bfetch.push_back(gname);
  TSR_ASSIGN_OR_RETURN(p->bwd_, Interpreter::create(bg, bfetch));
  TSR_ASSIGN_OR_RETURN(p->eval_, Interpreter::create(eg, last ? std::vector<std::string>{loss, p->logits_} : p->out_names_));
  if (p->params_.empty())
    return invalid_argument("pipeline: stage " + std::to_string(stage) + " has no trainable parameter (frozen or not reaching the loss)");
  return p;
}

std::string pipeline_loss_input(const Graph& g, const std::string& loss) {
  const int v = loss_input(g, loss);
  return v < 0 ? "" : g.values[v].name;
}

Status PipelineStage::forward(int mb, const Tensor& x, const Tensor& target, double weight, uint64_t seed,
                              std::vector<Stash>& stash) {
  Stash& st = stash[mb];
  const bool last = stage_ + 1 == stages_;
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const Param& pr : params_) feeds.push_back({pr.name, pr.value});
  if (stage_ == 0) st.inputs = {x};
  for (size_t i = 0; i < in_names_.size(); ++i) feeds.push_back({in_names_[i], st.inputs[i]});
  if (last) feeds.push_back({target_, target});
  TSR_ASSIGN_OR_RETURN(std::vector<Tensor> out, fwd_->run(feeds, seed));
  const size_t nout = last ? 1 : out_names_.size();
  std::map<std::string, Tensor> avail;
  for (size_t i = 0; i < in_names_.size(); ++i) avail[in_names_[i]] = st.inputs[i];
  if (last) avail[target_] = target;
  for (size_t i = 0; i < saved_.size(); ++i) avail[saved_[i]] = out[nout + i];
  if (!last)
    for (size_t j = 0; j < nout; ++j) {
      avail[out_names_[j]] = out[j];
      st.outputs.push_back(out[j]);
    }
  else
    st.weight = weight;
  if (last) st.outputs = {out[0]};  // the loss
  std::set<const void*> counted;
  st.bytes = 0;
  for (const std::string& r : bwd_reads_) {
    auto it = avail.find(r);
    if (it == avail.end()) continue;
    st.keep.push_back({r, it->second});
    if (counted.insert(it->second.data()).second) st.bytes += it->second.nbytes();
  }
  st.inputs.clear();
  st.weight = weight;
  return Status::ok();
}

Result<PipelineStepStats> PipelineStage::compute_gradients(const Tensor& x, const Tensor& target, int64_t global_rows,
                                                            int micro_batches, PipelineSchedule schedule, Communicator& pp,
                                                            Communicator& meta, uint64_t dropout_stream) {
  const bool first = stage_ == 0, last = stage_ + 1 == stages_;
  const int64_t rows = first ? x.dim(0) : target.dim(0);
  std::vector<std::pair<int64_t, int64_t>> mbs;
  for (int i = 0; i < micro_batches; ++i) {
    auto r = split_rows(rows, micro_batches, i);
    if (r.second > r.first) mbs.push_back(r);
  }
  const int m = static_cast<int>(mbs.size());
  grads_.clear();
  for (const Param& pr : params_) grads_.push_back(Tensor::allocate(DType::kFloat32, pr.value.shape()).value());
  PipelineStepStats stats;
  const uint64_t sent0 = pp.stats().total();
  std::vector<Stash> stash(static_cast<size_t>(m));
  int held = 0;
  uint64_t held_bytes = 0;
  const size_t np = params_.size();
  for (const PipelineAction& a : pipeline_schedule(schedule, stages_, stage_, m)) {
    const int i = a.micro_batch;
    Stash& st = stash[i];
    const auto [r0, r1] = mbs[i];
    switch (a.kind) {
      case PipelineAction::kRecvForward:
        if (!first) {
          auto in = recv_tensors(in_names_.size(), pp, meta, stage_ - 1);
          if (!in.is_ok()) return in.status().with_context("stage " + std::to_string(stage_) + ", micro-batch " + std::to_string(i) + ": receiving activations");
          st.inputs = std::move(*in);
        }
        break;
      case PipelineAction::kForward: {
        const double w = static_cast<double>(r1 - r0) / static_cast<double>(global_rows);
        const uint64_t seed = static_cast<uint64_t>(step_) + (dropout_stream * static_cast<uint64_t>(m) + static_cast<uint64_t>(i) + 1) * 0x9E3779B97F4A7C15ULL;
        TSR_RETURN_IF_ERROR(forward(i, first ? rows_of(x, r0, r1) : Tensor(), last ? rows_of(target, r0, r1) : Tensor(), w, seed, stash));
        if (last) stats.loss += static_cast<double>(st.outputs[0].data_as<float>()[0]) * w;
        ++held;
        held_bytes += st.bytes;
        if (held > stats.peak_micro_batches) {
          stats.peak_micro_batches = held;
          stats.peak_activation_bytes = held_bytes;
        }
        break;
      }
      case PipelineAction::kSendForward:
        if (!last) {
          std::vector<Tensor> out;
          for (const Tensor& t : st.outputs) out.push_back(t);
          for (const Tensor& t : out) stats.sent_bytes_theory += t.nbytes();
          Status s = send_tensors(out, pp, &meta, stage_ + 1);
          if (!s.is_ok()) return s.with_context("stage " + std::to_string(stage_) + ", micro-batch " + std::to_string(i) + ": sending activations");
          st.outputs.clear();
        }
        break;
      case PipelineAction::kRecvBackward:
        if (!last) {
          for (size_t j = 0; j < out_names_.size(); ++j) {
            if (!out_float_[j]) continue;
            Tensor shape_of;
            for (const auto& [n, t] : st.keep)
              if (n == out_names_[j]) shape_of = t;
            if (!shape_of.defined()) return internal_error("pipeline: output '" + out_names_[j] + "' was not kept for its gradient");
            TSR_ASSIGN_OR_RETURN(Tensor c, Tensor::allocate(DType::kFloat32, shape_of.shape()));
            if (c.numel()) {
              Status s = pp.recv(c.data(), c.numel(), DType::kFloat32, stage_ + 1);
              if (!s.is_ok()) return s.with_context("stage " + std::to_string(stage_) + ", micro-batch " + std::to_string(i) + ": receiving gradients");
            }
            st.cot.push_back(std::move(c));
          }
        }
        break;
      case PipelineAction::kBackward: {
        std::vector<std::pair<std::string, Tensor>> feeds;
        for (const Param& pr : params_) feeds.push_back({pr.name, pr.value});
        for (const auto& kv : st.keep) feeds.push_back(kv);
        TSR_ASSIGN_OR_RETURN(Tensor seed, Tensor::allocate(DType::kFloat32, {}));
        seed.data_as<float>()[0] = last ? static_cast<float>(st.weight) : 1.0f;
        feeds.push_back({seed_, seed});
        for (size_t j = 0, c = 0; j < cot_names_.size(); ++j)
          if (!cot_names_[j].empty()) feeds.push_back({cot_names_[j], st.cot[c++]});
        TSR_ASSIGN_OR_RETURN(std::vector<Tensor> g, bwd_->run(feeds));
        for (size_t k = 0; k < np; ++k) {
          float* acc = grads_[k].data_as<float>();
          const float* d = g[k].data_as<float>();
          for (int64_t e = 0; e < grads_[k].numel(); ++e) acc[e] += d[e];
        }
        for (size_t k = np; k < g.size(); ++k) st.in_grads.push_back(g[k]);
        --held;
        held_bytes -= st.bytes;
        st.keep.clear();
        st.cot.clear();
        break;
      }
      case PipelineAction::kSendBackward:
        if (!first) {
          for (const Tensor& t : st.in_grads) stats.sent_bytes_theory += t.nbytes();
          Status s = send_tensors(st.in_grads, pp, nullptr, stage_ - 1);
          if (!s.is_ok()) return s.with_context("stage " + std::to_string(stage_) + ", micro-batch " + std::to_string(i) + ": sending gradients");
          st.in_grads.clear();
        }
        break;
    }
  }
  stats.sent_bytes = pp.stats().total() - sent0;
  return stats;
}

Status PipelineStage::apply_gradients(double lr, Communicator* ctrl_pp) {
  if (cfg_.clip_norm > 0) {
    // clip_grad_global_norm over the grads of every stage: the squared norms summed.
    double ss = 0;
    for (const Tensor& g : grads_)
      for (int64_t k = 0; k < g.numel(); ++k) ss += static_cast<double>(g.data_as<float>()[k]) * g.data_as<float>()[k];
    if (ctrl_pp && ctrl_pp->size() > 1) TSR_RETURN_IF_ERROR(ctrl_pp->all_reduce(&ss, &ss, 1, DType::kFloat64, ReduceOp::kSum));
    const double norm = std::sqrt(ss);
    if (norm > cfg_.clip_norm) {
      const double s = cfg_.clip_norm / (norm + 1e-6);
      for (Tensor& g : grads_)
        for (int64_t k = 0; k < g.numel(); ++k) g.data_as<float>()[k] = static_cast<float>(g.data_as<float>()[k] * s);
    }
  }
  TSR_RETURN_IF_ERROR(optimizer_step(cfg_.optimizer, params_, grads_, lr, step_));
  ++step_;
  return Status::ok();
}

Result<std::pair<double, int64_t>> PipelineStage::evaluate(const Tensor& x, const Tensor& target, Communicator& pp,
                                                           Communicator& meta) {
  const bool first = stage_ == 0, last = stage_ + 1 == stages_;
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const Param& pr : params_) feeds.push_back({pr.name, pr.value});
  std::vector<Tensor> in = {x};
  if (!first) {
    TSR_ASSIGN_OR_RETURN(in, recv_tensors(in_names_.size(), pp, meta, stage_ - 1));
  }
  for (size_t i = 0; i < in_names_.size(); ++i) feeds.push_back({in_names_[i], in[i]});
  if (last) feeds.push_back({target_, target});
  TSR_ASSIGN_OR_RETURN(std::vector<Tensor> out, eval_->run(feeds));
  if (!last) {
    TSR_RETURN_IF_ERROR(send_tensors(out, pp, &meta, stage_ + 1));
    return std::pair<double, int64_t>{0, 0};
  }
  const int64_t n = target.dim(0);
  const double loss = static_cast<double>(out[0].data_as<float>()[0]) * static_cast<double>(n);
  int64_t correct = 0;
  if (cfg_.loss == "ce" && out[1].dim(0) == n && n > 0) {
    const int64_t c = out[1].numel() / n;
    for (int64_t r = 0; r < n; ++r) {
      const float* row = out[1].data_as<float>() + r * c;
      if (std::max_element(row, row + c) - row == target.data_as<int64_t>()[r]) ++correct;
    }
  }
  return std::pair<double, int64_t>{loss, correct};
}

std::vector<uint8_t> PipelineStage::weights_blob() const {
  std::vector<uint8_t> b;
  auto put = [&](const void* p, size_t n) {
    const auto* c = static_cast<const uint8_t*>(p);
    b.insert(b.end(), c, c + n);
  };
  auto put_tensor = [&](const std::string& name, const std::string& state, const Tensor& t) {
    const uint32_t ln = static_cast<uint32_t>(name.size()), ls = static_cast<uint32_t>(state.size());
    const int64_t n = t.numel();
    put(&ln, 4);
    put(name.data(), ln);
    put(&ls, 4);
    put(state.data(), ls);
    put(&n, 8);
    put(t.data(), t.nbytes());
  };
  for (const Param& pr : params_) {
    put_tensor(pr.name, "", pr.value);
    for (const auto& [sn, st] : pr.state) put_tensor(pr.name, sn, st);
  }
  return b;
}

Status PipelineStage::merge_blob(Model& model, const std::vector<uint8_t>& blob) {
  auto ts = model.training ? std::make_shared<TrainingState>(*model.training) : std::make_shared<TrainingState>();
  size_t at = 0;
  auto take = [&](void* p, size_t n) {
    if (at + n > blob.size()) return false;
    std::memcpy(p, blob.data() + at, n);
    at += n;
    return true;
  };
  while (at < blob.size()) {
    uint32_t ln = 0, ls = 0;
    int64_t n = 0;
    std::string name, state;
    if (!take(&ln, 4) || at + ln > blob.size()) return invalid_argument("pipeline weights: truncated blob");
    name.assign(reinterpret_cast<const char*>(blob.data() + at), ln);
    at += ln;
    if (!take(&ls, 4) || at + ls > blob.size()) return invalid_argument("pipeline weights: truncated blob");
    state.assign(reinterpret_cast<const char*>(blob.data() + at), ls);
    at += ls;
    if (!take(&n, 8) || n < 0 || at + static_cast<size_t>(n) * 4 > blob.size()) return invalid_argument("pipeline weights: truncated blob");
    const int v = model.graph.find_value(name);
    if (v < 0 || !model.graph.values[v].initializer || model.graph.values[v].initializer->numel() != n)
      return invalid_argument("pipeline weights: '" + name + "' is not a parameter of " + std::to_string(n) + " elements of the model");
    Tensor t = Tensor::allocate(DType::kFloat32, model.graph.values[v].initializer->shape()).value();
    std::memcpy(t.data(), blob.data() + at, t.nbytes());
    at += t.nbytes();
    if (state.empty()) {
      model.graph.values[v].initializer = std::make_shared<const Tensor>(std::move(t));
      model.graph.values[v].trainable = true;
    } else {
      bool replaced = false;
      for (OptimizerStateTensor& s : ts->states)
        if (s.value == name && s.name == state) {
          s.data = std::make_shared<const Tensor>(t);
          replaced = true;
        }
      if (!replaced) ts->states.push_back({name, state, std::make_shared<const Tensor>(std::move(t))});
    }
  }
  model.training = ts;
  return Status::ok();
}

}  // namespace tessera::train
