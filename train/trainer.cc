#include "train/trainer.h"

#include <cmath>
#include <random>
#include <regex>
#include <set>

#include "tessera/session.h"
#include "tessera/tsr_file.h"
#include "train/autodiff.h"
#include "train/parameters.h"

namespace tessera::train {

namespace {

Tensor uniform(const Shape& s, double bound, std::mt19937_64& gen) {
  Tensor t = Tensor::allocate(DType::kFloat32, s).value();
  std::uniform_real_distribution<double> u(-bound, bound);
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = static_cast<float>(u(gen));
  return t;
}

void set_initializer(Graph& g, int v, Tensor t) {
  Value& val = g.values[v];
  val.has_shape = true;
  val.shape.clear();
  for (int64_t d : t.shape()) val.shape.push_back(Dim{d, ""});
  val.initializer = std::make_shared<Tensor>(std::move(t));
}

// --replace-head: the last MatMul/Gemm with an initializer weight gets `classes` outputs.
Status replace_head(Graph& g, int classes, uint64_t seed, std::vector<std::string>* notes) {
  for (size_t i = g.nodes.size(); i-- > 0;) {
    Node& n = g.nodes[i];
    if ((n.op_type != "MatMul" && n.op_type != "Gemm") || !n.domain.empty() || n.inputs.size() < 2) continue;
    const int w = n.inputs[1];
    if (w < 0 || !g.values[w].initializer || g.values[w].initializer->rank() != 2) continue;
    const Tensor& old = *g.values[w].initializer;
    const bool tb = n.op_type == "Gemm" && n.attr_i("transB", 0) != 0;
    const int64_t k = tb ? old.dim(1) : old.dim(0), outs = tb ? old.dim(0) : old.dim(1);
    if (outs == classes) {
      notes->push_back("head '" + n.name + "' already has " + std::to_string(classes) + " outputs: kept");
      return Status::ok();
    }
    std::mt19937_64 gen(seed);
    const double bound = 1.0 / std::sqrt(static_cast<double>(k));
    set_initializer(g, w, uniform(tb ? Shape{classes, k} : Shape{k, classes}, bound, gen));
    // The bias: Gemm's C, or an Add of an initializer right after a MatMul.
    int bias = -1;
    if (n.op_type == "Gemm" && n.inputs.size() > 2) bias = n.inputs[2];
    if (n.op_type == "MatMul")
      for (Node& m : g.nodes)
        if (m.op_type == "Add" && m.inputs.size() == 2 && m.inputs[0] == n.outputs[0] && g.values[m.inputs[1]].initializer)
          bias = m.inputs[1];
    if (bias >= 0 && g.values[bias].initializer) set_initializer(g, bias, uniform({classes}, bound, gen));
    // Declared shapes downstream are stale now.
    std::set<int> down = {n.outputs[0]};
    for (size_t j = i; j < g.nodes.size(); ++j) {
      bool hit = false;
      for (int in : g.nodes[j].inputs) hit |= down.count(in) != 0;
      if (hit || j == i)
        for (int o : g.nodes[j].outputs)
          if (o >= 0) { down.insert(o); g.values[o].has_shape = false; g.values[o].shape.clear(); }
    }
    notes->push_back("head '" + n.name + "' replaced: " + std::to_string(outs) + " -> " + std::to_string(classes) +
                     " outputs (weight '" + g.values[w].name + "'" + (bias >= 0 ? ", bias '" + g.values[bias].name + "'" : "") + ")");
    return Status::ok();
  }
  return invalid_argument("--replace-head: the model has no MatMul or Gemm with a 2-D initializer weight to replace");
}

}  // namespace

Result<std::unique_ptr<Trainer>> Trainer::create(const Model& model, const TrainerConfig& cfg) {
  TSR_RETURN_IF_ERROR(validate(cfg.optimizer));
  if (cfg.loss != "ce" && cfg.loss != "mse") return invalid_argument("loss '" + cfg.loss + "': expected ce or mse");
  if (cfg.label_smoothing < 0 || cfg.label_smoothing >= 1) return invalid_argument("label smoothing must be in [0, 1)");
  std::unique_ptr<Trainer> t(new Trainer());
  t->cfg_ = cfg;
  t->model_ = std::make_shared<Model>(model);
  Graph& g = t->model_->graph;
  if (g.inputs.size() != 1 || g.outputs.size() != 1)
    return invalid_argument("training needs a model with one input and one output; this one has " + std::to_string(g.inputs.size()) +
                            " inputs and " + std::to_string(g.outputs.size()) + " outputs");
  if (g.values[g.inputs[0]].dtype != DType::kFloat32) return invalid_argument("training needs a float32 model input");
  if (cfg.replace_head > 0) TSR_RETURN_IF_ERROR(replace_head(g, cfg.replace_head, cfg.seed, &t->notes_));
  t->input_ = g.values[g.inputs[0]].name;
  t->output_ = g.values[g.outputs[0]].name;
  // The logits: through trailing Identity ops, the input of a final Softmax/LogSoftmax.
  std::string skipped;
  const int logits = loss_input(g, cfg.loss, &skipped);
  if (!skipped.empty())
    t->notes_.push_back("cross-entropy reads the logits '" + g.values[logits].name + "' (the input of the final " + skipped + ")");
  t->logits_ = g.values[logits].name;

  // Trainable parameters: float initializers that nodes read, except BatchNormalization's
  // running statistics, scalars (Clip bounds, exponents) and what --freeze matches.
  TSR_ASSIGN_OR_RETURN(std::vector<std::string> wrt, trainable_parameters(g, cfg.freeze, &t->frozen_));
  // Loss node: ce(logits, target int64 [N]) or mse(output, target).
  Graph tg = g;
  t->loss_ = tg.values[append_loss_node(tg, cfg.loss, cfg.label_smoothing,
                                         tg.find_value(cfg.loss == "ce" ? t->logits_ : t->output_), &t->target_)].name;
  // Evaluation runs the graph in inference mode (Dropout off, BatchNormalization with the
  // running statistics).
  auto eval_graph = std::make_shared<Graph>(tg);
  // Training mode: Dropout drops; BatchNormalization (when cfg.batchnorm_train) normalizes
  // with the batch statistics and outputs updated running statistics (ONNX
  // BatchNormalization-15: running = running * momentum + batch * (1 - momentum)), which
  // the trainer keeps and feeds back.
  set_dropout_training(tg);
  for (size_t i = 0; i < tg.nodes.size(); ++i) {
    if (!tg.nodes[i].domain.empty()) continue;
    if (tg.nodes[i].op_type == "BatchNormalization" && cfg.batchnorm_train) {
      Node& n = tg.nodes[i];
      if (n.inputs.size() < 5 || n.inputs[3] < 0 || n.inputs[4] < 0 || !tg.values[n.inputs[3]].initializer ||
          !tg.values[n.inputs[4]].initializer)
        return invalid_argument(n.describe() + ": training mode needs the running mean and var as initializers");
      set_int_attribute(n, "training_mode", 1);
      n.outputs.resize(3, -1);
      for (int k = 1; k <= 2; ++k) {
        if (n.outputs[k] < 0) {
          Value v;
          v.name = n.name + (k == 1 ? "/running_mean" : "/running_var");
          while (tg.find_value(v.name) >= 0) v.name += "_";
          v.dtype = DType::kFloat32;
          tg.nodes[i].outputs[k] = tg.add_value(std::move(v));
        }
        const Node& nn = tg.nodes[i];
        const std::string stat = tg.values[nn.inputs[2 + k]].name;
        t->bn_stats_.push_back({tg.values[nn.outputs[k]].name, stat});
        t->buffers_.push_back({stat, tg.values[nn.inputs[2 + k]].initializer->clone().value()});
      }
    }
  }
  TSR_ASSIGN_OR_RETURN(BackwardInfo info, append_backward(tg, t->loss_, wrt));
  t->backward_start_ = info.forward_nodes;
  t->seed_ = info.seed;
  // Parameters the loss does not reach get zeros from autodiff: leave them out.
  auto train_graph = std::make_shared<Graph>(std::move(tg));
  std::vector<std::string> fetch = {t->loss_};
  for (size_t i = 0; i < wrt.size(); ++i) {
    if (zero_gradient(*train_graph, info.grads[i])) {
      t->notes_.push_back("'" + wrt[i] + "' does not affect the loss: not trained");
      continue;
    }
    // Resume: with the checkpoint's optimizer state (TrainingState) for this parameter.
    TSR_ASSIGN_OR_RETURN(Param p, param_to_train(g, wrt[i], model));
    t->params_.push_back(std::move(p));
    t->grads_.push_back(info.grads[i]);
    fetch.push_back(info.grads[i]);
  }
  if (t->params_.empty()) return invalid_argument("nothing to train: every parameter is frozen or does not affect the loss");
  for (const auto& [out, stat] : t->bn_stats_) fetch.push_back(out);
  t->train_graph_ = train_graph;
  t->eval_graph_ = eval_graph;
  TSR_ASSIGN_OR_RETURN(t->train_, Interpreter::create(train_graph, fetch));
  TSR_ASSIGN_OR_RETURN(t->eval_, Interpreter::create(eval_graph, {t->loss_, t->output_}));
  TSR_RETURN_IF_ERROR(check_resumed_optimizer(model, cfg.optimizer.kind));
  if (model.training) t->step_ = model.training->step;
  t->model_->training.reset();
  t->one_ = Tensor::allocate(DType::kFloat32, {}).value();
  t->one_.data_as<float>()[0] = 1.0f;
  return t;
}

namespace {
// A parameter whose value a sharded trainer dropped must come from the source: else the
// interpreter would silently use the graph's initial weights.
Status check_provided(const std::vector<Param>& params, const Interpreter::ValueSource* source) {
  for (const Param& p : params) {
    if (p.value.defined()) continue;
    bool ok = false;
    if (source)
      for (const std::string& n : source->names) ok |= n == p.name;
    if (!ok) return invalid_argument("parameter '" + p.name + "' has no value and no source provides it");
  }
  return Status::ok();
}
}  // namespace

Result<double> Trainer::train_step(const Tensor& x, const Tensor& target, double lr) {
  std::vector<Tensor> grads;
  TSR_ASSIGN_OR_RETURN(double loss, compute_gradients(x, target, &grads));
  TSR_RETURN_IF_ERROR(apply_gradients(grads, lr));
  return loss;
}

Result<double> Trainer::compute_gradients(const Tensor& x, const Tensor& target, std::vector<Tensor>* grads,
                                          uint64_t dropout_stream, const GradCallback* on_grad) {
  std::vector<std::pair<std::string, Tensor>> feeds = {{input_, x}, {target_, target}, {seed_, one_}};
  for (const Param& p : params_) feeds.push_back({p.name, p.value});
  for (const auto& [name, b] : buffers_) feeds.push_back({name, b});
  // Stream 0 keeps the single-process seeds (the step count) bit for bit.
  const uint64_t seed = static_cast<uint64_t>(step_) + dropout_stream * 0x9E3779B97F4A7C15ULL;
  // Fetch 0 is the loss, fetches 1..P the gradients of params_ in order.
  const size_t np = params_.size();
  Interpreter::FetchCallback cb = [&](size_t f, const Tensor& t) {
    if (f >= 1 && f <= np) (*on_grad)(f - 1, t);
  };
  TSR_ASSIGN_OR_RETURN(std::vector<Tensor> out, train_->run(feeds, seed, on_grad ? &cb : nullptr));
  const size_t nbn = bn_stats_.size();
  for (size_t k = 0; k < nbn; ++k) {
    TSR_ASSIGN_OR_RETURN(buffers_[k].second, out[out.size() - nbn + k].clone());
  }
  out.resize(out.size() - nbn);
  const double loss = out[0].data_as<float>()[0];
  if (!std::isfinite(loss)) return invalid_argument("the loss is " + std::to_string(loss) + " at step " + std::to_string(step_) + " (learning rate too high?)");
  grads->clear();
  for (size_t i = 1; i < out.size(); ++i) {
    TSR_ASSIGN_OR_RETURN(Tensor c, out[i].clone());
    grads->push_back(std::move(c));
  }
  return loss;
}

Result<double> Trainer::compute_gradients_sharded(const Tensor& x, const Tensor& target, uint64_t dropout_stream,
                                                  const GradCallback& on_grad, Interpreter::ValueSource* source) {
  std::vector<std::pair<std::string, Tensor>> feeds = {{input_, x}, {target_, target}, {seed_, one_}};
  for (const Param& p : params_)
    if (p.value.defined()) feeds.push_back({p.name, p.value});
  for (const auto& [name, b] : buffers_) feeds.push_back({name, b});
  TSR_RETURN_IF_ERROR(check_provided(params_, source));
  if (source) source->segment_starts = {backward_start_};
  const uint64_t seed = static_cast<uint64_t>(step_) + dropout_stream * 0x9E3779B97F4A7C15ULL;
  const size_t np = params_.size();
  std::vector<bool> got(np, false);
  Interpreter::FetchCallback cb = [&](size_t f, const Tensor& t) {
    if (f >= 1 && f <= np) { on_grad(f - 1, t); got[f - 1] = true; }
  };
  std::vector<bool> drop(1 + np + bn_stats_.size(), false);  // the gradients (fetches 1..np)
  for (size_t i = 1; i <= np; ++i) drop[i] = true;
  TSR_ASSIGN_OR_RETURN(std::vector<Tensor> out, train_->run(feeds, seed, &cb, source, &drop));
  for (size_t i = 0; i < np; ++i)
    if (!got[i]) return invalid_argument("sharded training: no backward node makes the gradient of '" + params_[i].name + "'");
  const size_t nbn = bn_stats_.size();
  for (size_t k = 0; k < nbn; ++k) {
    TSR_ASSIGN_OR_RETURN(buffers_[k].second, out[out.size() - nbn + k].clone());
  }
  const double loss = out[0].data_as<float>()[0];
  if (!std::isfinite(loss)) return invalid_argument("the loss is " + std::to_string(loss) + " at step " + std::to_string(step_) + " (learning rate too high?)");
  return loss;
}

Status Trainer::apply_gradients(std::vector<Tensor>& grads, double lr) {
  if (grads.size() != params_.size())
    return invalid_argument("apply_gradients: " + std::to_string(grads.size()) + " gradients for " + std::to_string(params_.size()) +
                            " parameters");
  clip_grad_global_norm(grads, cfg_.clip_norm);
  TSR_RETURN_IF_ERROR(optimizer_step(cfg_.optimizer, params_, grads, lr, step_));
  ++step_;
  return Status::ok();
}

void Trainer::drop_parameter_initializers() {
  for (Graph* g : {&model_->graph, train_graph_.get(), eval_graph_.get()})
    for (const Param& p : params_) {
      const int v = g->find_value(p.name);
      if (v >= 0) g->values[v].initializer.reset();
    }
}

Status Trainer::apply_external_step(const std::function<Status(std::vector<Param>&, int64_t)>& update) {
  TSR_RETURN_IF_ERROR(update(params_, step_));
  ++step_;
  return Status::ok();
}

Status Trainer::check_input(const Shape& x) const {
  SessionOptions so;
  so.threads = 1;
  so.verify_checksums = false;
  so.allow_partial_weights = true;  // only its input shapes are checked (a resumed sharded checkpoint has chunks)
  TSR_ASSIGN_OR_RETURN(auto session, Session::create(model_, so));
  return session->prepare({x}).with_context("input '" + input_ + "' of shape " + shape_to_string(x));
}

Result<Trainer::Eval> Trainer::evaluate(const Tensor& x, const Tensor& target, const Interpreter::ValueSource* source) {
  std::vector<std::pair<std::string, Tensor>> feeds = {{input_, x}, {target_, target}};
  for (const Param& p : params_)
    if (p.value.defined()) feeds.push_back({p.name, p.value});
  for (const auto& [name, b] : buffers_) feeds.push_back({name, b});
  TSR_RETURN_IF_ERROR(check_provided(params_, source));
  TSR_ASSIGN_OR_RETURN(std::vector<Tensor> out, eval_->run(feeds, 0, nullptr, source));
  Eval e;
  e.loss = out[0].data_as<float>()[0];
  e.output = out[1];
  return e;
}

std::shared_ptr<Model> Trainer::snapshot(const std::map<std::string, std::string>& properties) const {
  auto m = std::make_shared<Model>(*model_);
  Graph& g = m->graph;
  auto ts = std::make_shared<TrainingState>();
  ts->optimizer = cfg_.optimizer.kind;
  ts->step = step_;
  for (const Param& p : params_) {
    int v = g.find_value(p.name);
    set_initializer(g, v, p.value.clone().value());
    g.values[v].trainable = true;
    for (const auto& [sname, st] : p.state)
      ts->states.push_back({p.name, sname, std::make_shared<const Tensor>(st.clone().value())});
  }
  for (const auto& [name, b] : buffers_) set_initializer(g, g.find_value(name), b.clone().value());
  m->training = std::move(ts);
  for (const auto& [k, v] : properties) m->meta.properties[k] = v;
  return m;
}

Status Trainer::save(const std::string& path, const std::map<std::string, std::string>& properties) const {
  return write_tsr_file(*snapshot(properties), path);
}

}  // namespace tessera::train
