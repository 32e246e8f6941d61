#include "tessera/session.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "backends/backend.h"
#include "backends/cpu/thread_pool.h"
#include "runtime/plan/plan.h"
#include "tessera/tsr_file.h"

namespace tessera {

namespace {
double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

Session::~Session() {
  plan_.reset();
  free_device_arena();
}

void Session::free_device_arena() {
  if (device_arena_owner_ && device_arena_) device_arena_owner_->deallocate(device_arena_);
  device_arena_ = nullptr;
  device_arena_owner_ = nullptr;
}

Result<std::unique_ptr<Session>> Session::load(const std::string& path, const SessionOptions& options) {
  auto t0 = std::chrono::steady_clock::now();
  TsrReadOptions ro;
  ro.verify_checksums = options.verify_checksums;
  TSR_ASSIGN_OR_RETURN(std::shared_ptr<Model> model, read_tsr_file(path, ro));
  auto created = create(std::move(model), options);
  if (!created.is_ok()) return created.status().with_context(path);
  std::unique_ptr<Session> s = std::move(created).value();
  s->load_ms_ = ms_since(t0);
  return s;
}

Result<std::unique_ptr<Session>> Session::create(std::shared_ptr<const Model> model, const SessionOptions& options) {
  if (!model) return invalid_argument("Session::create: null model");
  TSR_RETURN_IF_ERROR(model->graph.validate());
  if (!options.allow_partial_weights) TSR_RETURN_IF_ERROR(check_weights_complete(*model, "the model"));
  if (options.threads < 0 || options.threads > 1024)
    return invalid_argument("SessionOptions::threads is " + std::to_string(options.threads) +
                            "; it must be 0 (one per physical core) or 1..1024");
  std::unique_ptr<Session> s(new Session());
  s->model_ = std::move(model);
  s->thread_pool_ = std::make_unique<ThreadPool>(options.threads);
  s->options_ = options;
  bool have_cpu = false;
  for (const std::string& name : options.backends) {
    auto b = make_backend(name);
    if (!b.is_ok() && b.status().code() == StatusCode::kUnimplemented) {
      s->notes_.push_back(b.status().message() + "; its nodes run on the next backend of the list");
      continue;
    }
    if (!b.is_ok()) return b.status();
    have_cpu |= name == "cpu";
    s->backends_.push_back(std::move(b).value());
  }
  if (!have_cpu) s->backends_.push_back(make_cpu_backend());
  const Graph& g = s->model_->graph;
  for (int i : g.inputs) {
    const Value& v = g.values[i];
    s->inputs_.push_back({v.name, v.dtype, v.has_shape, v.shape});
  }
  for (int i : g.outputs) {
    const Value& v = g.values[i];
    s->outputs_.push_back({v.name, v.dtype, v.has_shape, v.shape});
  }
  return s;
}

namespace {
/// Inputs up to this many elements are planned as constants when the model needs input
/// values to decide shapes.
constexpr int64_t kMaxValueKeyedElements = 4096;
}  // namespace

Status Session::prepare(const std::vector<Shape>& input_shapes) {
  std::lock_guard<std::mutex> lock(mu_);
  return prepare_locked(input_shapes, nullptr);
}

Status Session::prepare_locked(const std::vector<Shape>& input_shapes, const std::vector<const Tensor*>* values) {
  std::vector<std::string> keys;
  if (values)
    for (const Tensor* t : *values)
      keys.push_back(t ? std::string(static_cast<const char*>(t->data()), t->nbytes()) : std::string());
  if (plan_ && planned_shapes_ == input_shapes && planned_values_ == keys) return Status::ok();
  auto t0 = std::chrono::steady_clock::now();
  PlanOptions po;
  for (auto& b : backends_) po.backends.push_back(b.get());
  po.thread_pool = thread_pool_.get();
  po.fuse = options_.fusion;
  const char* nchwc_env = std::getenv("TESSERA_NCHWC");
  po.nchwc = options_.nchwc && !(nchwc_env && std::string(nchwc_env) == "0");
  plan_.reset();
  arena_ = Tensor();
  free_device_arena();
  TSR_ASSIGN_OR_RETURN(plan_, plan_graph(model_->graph, input_shapes, po, values));
  if (plan_->device && plan_->device_bytes) {
    // One device allocation per plan (activations, scratch, then the weights, uploaded now).
    Result<void*> buf = plan_->device->allocate(plan_->device_bytes);
    if (!buf.is_ok()) {
      plan_.reset();
      return buf.status().with_context("allocating the device arena");
    }
    device_arena_ = buf.value();
    device_arena_owner_ = plan_->device;
    Status up = bind_device_arena(*plan_, static_cast<uint8_t*>(device_arena_));
    if (!up.is_ok()) {
      plan_.reset();
      free_device_arena();
      return up;
    }
  }
  uint64_t limit = options_.max_arena_bytes;
  if (limit == 0) limit = static_cast<uint64_t>(::sysconf(_SC_PHYS_PAGES)) * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  if (plan_->arena_bytes > limit) {
    uint64_t need = plan_->arena_bytes;
    plan_.reset();
    return out_of_memory("the plan for these input shapes needs " + std::to_string(need) +
                         " bytes of activations, more than the limit of " + std::to_string(limit) + " bytes");
  }
  TSR_ASSIGN_OR_RETURN(arena_, Tensor::allocate_uninitialized(DType::kUInt8, {static_cast<int64_t>(plan_->arena_bytes)}));
  // Poison (0xFF bytes: NaN as float, -1 as integers) so that a kernel reading memory it has
  // not written shows up as NaN in every test rather than as a lucky zero.
  if (arena_.nbytes()) std::memset(arena_.data(), 0xFF, arena_.nbytes());
  set_plan_profiling(*plan_, profiling_);
  planned_shapes_ = input_shapes;
  planned_values_ = std::move(keys);
  plan_ms_ = ms_since(t0);
  return Status::ok();
}

Result<std::vector<Tensor>> Session::run(const std::vector<std::pair<std::string, Tensor>>& inputs) {
  return run(inputs, {});
}

Result<std::vector<Shape>> Session::planned_output_shapes() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!plan_) return invalid_argument("no plan yet: the input shapes are not known (prepare or run first)");
  std::vector<Shape> shapes;
  for (int id : plan_->outputs) shapes.push_back(id >= 0 ? plan_->values[id].shape : Shape{});
  return shapes;
}

Result<std::vector<Tensor>> Session::run(const std::vector<std::pair<std::string, Tensor>>& inputs,
                                         const std::vector<OutputBinding>& bindings) {
  if (!bindings.empty() && bindings.size() != outputs_.size())
    return invalid_argument("run: " + std::to_string(bindings.size()) + " output bindings for " +
                            std::to_string(outputs_.size()) + " outputs");
  std::vector<const Tensor*> bound(inputs_.size(), nullptr);
  for (const auto& [name, t] : inputs) {
    size_t k = 0;
    while (k < inputs_.size() && inputs_[k].name != name) ++k;
    if (k == inputs_.size()) {
      std::string names;
      for (const auto& i : inputs_) names += (names.empty() ? "" : ", ") + i.name;
      return invalid_argument("unknown input '" + name + "'; the model's inputs are: " + names);
    }
    if (bound[k]) return invalid_argument("input '" + name + "' is given twice");
    if (t.dtype() != inputs_[k].dtype)
      return invalid_argument("input '" + name + "' has dtype " + dtype_name(t.dtype()) + "; the model expects " +
                              dtype_name(inputs_[k].dtype));
    if (t.numel() > 0 && !t.data()) return invalid_argument("input '" + name + "' has no data");
    bound[k] = &t;
  }
  std::vector<Shape> shapes;
  for (size_t k = 0; k < inputs_.size(); ++k) {
    if (!bound[k]) return invalid_argument("input '" + inputs_[k].name + "' is missing");
    shapes.push_back(bound[k]->shape());
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (!plan_with_values_) {
    Status s = prepare_locked(shapes, nullptr);
    if (needs_input_values(s)) plan_with_values_ = true;
    else TSR_RETURN_IF_ERROR(s);
  }
  if (plan_with_values_) {
    std::vector<const Tensor*> values(bound.size(), nullptr);
    for (size_t k = 0; k < bound.size(); ++k)
      if (bound[k]->numel() <= kMaxValueKeyedElements) values[k] = bound[k];
    TSR_RETURN_IF_ERROR(prepare_locked(shapes, &values));
  }
  uint8_t* arena = arena_.data_as<uint8_t>();
  TSR_RETURN_IF_ERROR(execute_plan(*plan_, arena, bound));
  // One wait per run for the device's queue (a failed kernel surfaces here). Graph outputs
  // were copied to the host by the plan's last copy steps.
  if (plan_->device) TSR_RETURN_IF_ERROR(plan_->device->synchronize());
  // Every caller's buffer is checked before any is written.
  std::vector<Tensor> views;
  for (size_t k = 0; k < plan_->outputs.size(); ++k) {
    views.push_back(plan_value_view(*plan_, plan_->outputs[k], arena, bound));
    const Tensor& view = views.back();
    if (k < bindings.size() && bindings[k].data && view.nbytes() > bindings[k].capacity)
      return invalid_argument("output '" + outputs_[k].name + "' is " + view.describe() + ", " +
                              std::to_string(view.nbytes()) + " bytes; the caller's buffer for it holds " +
                              std::to_string(bindings[k].capacity) + " bytes");
  }
  std::vector<Tensor> outs;
  for (size_t k = 0; k < views.size(); ++k) {
    const Tensor& view = views[k];
    if (k < bindings.size() && bindings[k].data) {
      if (view.nbytes()) std::memcpy(bindings[k].data, view.data(), view.nbytes());
      outs.push_back(Tensor::wrap(view.dtype(), view.shape(), bindings[k].data));
      continue;
    }
    TSR_ASSIGN_OR_RETURN(Tensor copy, view.clone());
    outs.push_back(std::move(copy));
  }
  return outs;
}

int Session::threads() const { return thread_pool_->num_threads(); }

PlanStats Session::plan_stats() const {
  PlanStats st;
  if (!plan_) return st;
  st.arena_bytes = plan_->arena_bytes;
  st.steps = plan_->steps.size();
  st.folded_nodes = plan_->folded_nodes;
  st.plan_ms = plan_ms_;
  st.placements = plan_->placements;
  if (plan_->device) st.device = plan_->device->name();
  st.device_bytes = plan_->device_bytes;
  return st;
}

void Session::set_profiling(bool on) {
  std::lock_guard<std::mutex> lock(mu_);
  profiling_ = on;
  if (plan_) set_plan_profiling(*plan_, on);
}

namespace {

/// Appends the steps of `plan` to `out`, each named `prefix` + its node; a control-flow
/// step (If, Loop, Scan) is followed by the steps of those of its sub-plans that ran (their
/// times summed over every time the branch or body ran) and keeps only its own time: its total less theirs
/// (choosing the branch, moving the loop's carried values and outputs).
void collect_profile(const Plan& plan, const std::string& prefix, std::vector<StepProfile>& out) {
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step& st = plan.steps[i];
    const size_t at = out.size();
    out.push_back({prefix + st.node->describe(), st.node->op_type, st.backend, static_cast<double>(plan.step_ns[i]) / 1e6});
    const std::string inner = prefix + st.node->describe() + " > ";
    // Only sub-plans that ran (an If's other branch may never have been taken).
    if (st.if_step) {
      for (const auto& b : st.if_step->branch)
        if (b && b->profiled_runs > 0) collect_profile(*b, inner, out);
    } else if (st.loop_step && st.loop_step->body && st.loop_step->body->profiled_runs > 0) {
      collect_profile(*st.loop_step->body, inner, out);
    }
    double children = 0;
    for (size_t j = at + 1; j < out.size(); ++j) children += out[j].total_ms;
    out[at].total_ms = std::max(0.0, out[at].total_ms - children);
  }
}

}  // namespace

std::vector<StepProfile> Session::profile(uint64_t* runs) const {
  std::vector<StepProfile> out;
  if (runs) *runs = 0;
  if (!plan_ || !plan_->profiling || plan_->profiled_runs == 0) return out;
  if (runs) *runs = plan_->profiled_runs;
  collect_profile(*plan_, "", out);
  return out;
}

}  // namespace tessera
