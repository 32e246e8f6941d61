// The planner: shape inference with concrete input shapes, plan-time folding of shape
// computations, backend choice per node, and the memory plan (liveness-based reuse of one
// arena, greedy by size as in TFLite's arena planner).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "runtime/plan/evaluate.h"
#include "backends/cpu/thread_pool.h"
#include "runtime/plan/plan.h"
#include "tessera/tsr_file.h"

namespace tessera {

namespace {

uint64_t align64(uint64_t x) { return (x + 63) / 64 * 64; }
uint64_t align256(uint64_t x) { return (x + 255) / 256 * 256; }

/// A step that moves one value between host memory and a device backend's memory.
class CopyKernel final : public Kernel {
 public:
  CopyKernel(Backend* device, bool to_device) : device_(device), to_device_(to_device) {}
  Status run(const KernelContext& ctx) const override {
    const Tensor& src = ctx.input(0);
    Tensor& dst = ctx.output(0);
    if (src.nbytes() == 0) return Status::ok();
    return to_device_ ? device_->copy_to_device(dst.data(), src.data(), src.nbytes())
                      : device_->copy_to_host(dst.data(), src.data(), src.nbytes());
  }

 private:
  Backend* device_;
  bool to_device_;
};

/// The options with only the host-memory backends: If/Loop/Scan bodies are planned with
/// them (their values live in slices of the parent's host arena).
PlanOptions host_only(const PlanOptions& o) {
  PlanOptions h = o;
  h.backends.clear();
  for (Backend* b : o.backends)
    if (b->host_memory()) h.backends.push_back(b);
  return h;
}

struct Scope {
  std::unordered_map<std::string, int> names;  // value name -> plan value id
  Scope* parent = nullptr;
};

class Planner {
 public:
  Planner(const PlanOptions& opt, Plan& plan, Planner* parent = nullptr, Scope* parent_scope = nullptr,
          std::vector<int>* outer_bindings = nullptr, int depth = 0)
      : opt_(opt), host_opt_(host_only(opt)), plan_(plan), parent_(parent), parent_scope_(parent_scope),
        outer_bindings_(outer_bindings), depth_(depth) {
    for (Backend* b : opt_.backends)
      if (!b->host_memory()) {
        device_ = b;  // the first device backend of the list; later ones are not used
        break;
      }
    plan_.device = device_;
  }

  /// Plans the graph inputs for these shapes. `dtypes`, if given, are the dtypes the inputs
  /// get (a Loop or Scan body's inputs take them from the node's inputs; an input declared
  /// without a type, as in ONNX's own expansion of Range, takes the given one).
  Status plan_inputs(const Graph& g, const std::vector<Shape>& shapes, Scope& scope,
                     const std::vector<const Tensor*>* values, const std::vector<DType>* dtypes = nullptr) {
    if (shapes.size() != g.inputs.size())
      return invalid_argument("the model has " + std::to_string(g.inputs.size()) + " inputs; " +
                              std::to_string(shapes.size()) + " shapes were given");
    std::unordered_map<std::string, int64_t> symbols;
    for (size_t i = 0; i < g.inputs.size(); ++i) {
      const Value& v = g.values[g.inputs[i]];
      const Shape& s = shapes[i];
      if (v.has_shape) {
        if (v.shape.size() != s.size())
          return invalid_argument("input '" + v.name + "' has rank " + std::to_string(s.size()) + " " +
                                  shape_to_string(s) + "; the model expects rank " + std::to_string(v.shape.size()));
        for (size_t d = 0; d < s.size(); ++d) {
          const Dim& dim = v.shape[d];
          if (dim.is_static() && dim.value != s[d])
            return invalid_argument("input '" + v.name + "' has shape " + shape_to_string(s) + "; dim " +
                                    std::to_string(d) + " must be " + std::to_string(dim.value));
          // Same symbol, same size (ONNX dim_param); "?" and ONNX's "unk__N" are anonymous.
          if (!dim.is_static() && !dim.symbol.empty() && dim.symbol != "?" && dim.symbol.rfind("unk__", 0) != 0) {
            auto [it, inserted] = symbols.emplace(dim.symbol, s[d]);
            if (!inserted && it->second != s[d])
              return invalid_argument("input '" + v.name + "' dim " + std::to_string(d) + " ('" + dim.symbol + "') is " +
                                      std::to_string(s[d]) + " but another input set it to " + std::to_string(it->second));
          }
        }
      }
      TSR_RETURN_IF_ERROR(shape_numel(s).status().with_context("input '" + v.name + "'"));
      DType dtype = v.dtype;
      if (dtypes) {
        if (dtype != DType::kUndefined && dtype != (*dtypes)[i])
          return invalid_argument("input '" + v.name + "' is declared " + dtype_name(dtype) + " but is given " +
                                  dtype_name((*dtypes)[i]));
        dtype = (*dtypes)[i];
      }
      if (dtype_size(dtype) == 0)
        return unimplemented("input '" + v.name + "' has unsupported dtype " + dtype_name(dtype));
      PlanValue pv;
      pv.name = v.name;
      pv.dtype = dtype;
      pv.shape = s;
      pv.home = PlanValue::Home::kInput;
      pv.index = static_cast<int>(i);
      if (values && (*values)[i]) {
        // Taken as a constant: this plan holds for this value only (the caller keys on it).
        TSR_ASSIGN_OR_RETURN(Tensor copy, (*values)[i]->clone());
        pv.home = PlanValue::Home::kConstant;
        pv.constant = std::make_shared<const Tensor>(std::move(copy));
      }
      int id = add_value(std::move(pv));
      scope.names[v.name] = id;
      plan_.inputs.push_back(id);
    }
    return Status::ok();
  }

  Status plan_nodes(const Graph& g, Scope& scope) {
    for (const Value& v : g.values) {
      if (!v.initializer) continue;
      PlanValue pv;
      pv.name = v.name;
      pv.dtype = v.dtype;
      pv.shape = v.initializer->shape();
      pv.home = PlanValue::Home::kConstant;
      pv.constant = v.initializer;
      scope.names[v.name] = add_value(std::move(pv));
    }
    for (const Node& n : g.nodes)
      if (!absorbed_.count(&n)) TSR_RETURN_IF_ERROR(plan_node(g, n, scope));
    return Status::ok();
  }

  Status plan_outputs(const Graph& g, Scope& scope) {
    for (int o : g.outputs) {
      TSR_ASSIGN_OR_RETURN(int id, lookup(g.values[o].name, scope));
      TSR_ASSIGN_OR_RETURN(id, to_layout(id, false));
      TSR_ASSIGN_OR_RETURN(id, place(id, nullptr));  // graph outputs end on the host
      const Value& decl = g.values[o];
      const PlanValue& got = plan_.values[id];
      if (decl.dtype != DType::kUndefined && decl.dtype != got.dtype)
        return invalid_argument("output '" + decl.name + "' is declared " + dtype_name(decl.dtype) + " but computes " +
                                dtype_name(got.dtype));
      plan_.outputs.push_back(id);
    }
    return Status::ok();
  }

  /// Liveness and offsets; then the views and kernel contexts.
  Status finish();

 private:
  int add_value(PlanValue v) {
    plan_.values.push_back(std::move(v));
    return static_cast<int>(plan_.values.size()) - 1;
  }

  /// Who reads each value of a graph: the nodes (once per input slot), and whether the
  /// value is also a graph output or read inside a subgraph ("pinned": never fused away).
  struct Uses {
    std::unordered_map<std::string, std::vector<const Node*>> consumers;
    std::unordered_set<std::string> pinned;
  };

  static void pin_subgraph_reads(const Graph& sub, std::unordered_set<std::string>& pinned) {
    for (const Node& n : sub.nodes) {
      for (int i : n.inputs)
        if (i >= 0) pinned.insert(sub.values[i].name);
      for (const Attribute& a : n.attributes) {
        if (a.g) pin_subgraph_reads(*a.g, pinned);
        for (const auto& sg : a.graphs)
          if (sg) pin_subgraph_reads(*sg, pinned);
      }
    }
  }

  const Uses& uses_of(const Graph& g) {
    auto it = uses_.find(&g);
    if (it != uses_.end()) return it->second;
    Uses& u = uses_[&g];
    for (const Node& n : g.nodes) {
      for (int i : n.inputs)
        if (i >= 0) u.consumers[g.values[i].name].push_back(&n);
      for (const Attribute& a : n.attributes) {
        if (a.g) pin_subgraph_reads(*a.g, u.pinned);
        for (const auto& sg : a.graphs)
          if (sg) pin_subgraph_reads(*sg, u.pinned);
      }
    }
    for (int o : g.outputs) u.pinned.insert(g.values[o].name);
    return u;
  }

  /// The only node that reads value `name` of `g` (once), or nullptr.
  const Node* sole_consumer(const Graph& g, const std::string& name) {
    const Uses& u = uses_of(g);
    if (u.pinned.count(name)) return nullptr;
    auto it = u.consumers.find(name);
    if (it == u.consumers.end() || it->second.size() != 1) return nullptr;
    const Node* c = it->second[0];
    if (!(c->domain.empty() || c->domain == "ai.onnx") || absorbed_.count(c) || c->outputs.size() != 1 || c->outputs[0] < 0)
      return nullptr;
    return c;
  }

  /// The activation of node `c`, if it is one a kernel can fuse (Relu, LeakyRelu, Clip with
  /// plan-time bounds, Sigmoid, HardSigmoid, HardSwish, Tanh, Gelu with approximate "none").
  bool fusable_activation(const Graph& g, const Node& c, Scope& scope, FusedActivation* act) {
    using K = FusedActivation::Kind;
    const std::string& op = c.op_type;
    if (op == "Relu") act->kind = K::kRelu;
    else if (op == "LeakyRelu") act->kind = K::kLeakyRelu, act->alpha = c.attr_f("alpha", 0.01f);
    else if (op == "Sigmoid") act->kind = K::kSigmoid;
    else if (op == "HardSigmoid") act->kind = K::kHardSigmoid, act->alpha = c.attr_f("alpha", 0.2f), act->beta = c.attr_f("beta", 0.5f);
    else if (op == "HardSwish") act->kind = K::kHardSwish;
    else if (op == "Tanh") act->kind = K::kTanh;
    else if (op == "Gelu" && c.attr_s("approximate", "none") == "none") act->kind = K::kGelu;
    else if (op == "Clip") {
      act->kind = K::kClip;
      act->alpha = -INFINITY;
      act->beta = INFINITY;
      if (c.opset < 11) {
        act->alpha = c.attr_f("min", -INFINITY);
        act->beta = c.attr_f("max", INFINITY);
      } else {
        for (size_t k = 1; k < c.inputs.size() && k < 3; ++k) {
          if (c.inputs[k] < 0) continue;
          auto id = lookup(g.values[c.inputs[k]].name, scope);
          if (!id.is_ok()) return false;
          const PlanValue& b = plan_.values[id.value()];
          if (b.home != PlanValue::Home::kConstant || b.dtype != DType::kFloat32 || b.constant->numel() != 1) return false;
          (k == 1 ? act->alpha : act->beta) = b.constant->data_as<float>()[0];
        }
      }
    } else {
      return false;
    }
    return c.inputs.size() >= 1 && c.inputs[0] >= 0;
  }

  /// Finds the elementwise tail after node `n` (Conv, MatMul, Gemm with one float32 output
  /// `out`): up to two Adds, one of a planned tensor of out's shape (a residual) and one of
  /// a row of out's last dim (a bias), then an activation; each intermediate value read by
  /// that one node only. Fills `ep` (appending the Adds' other operands to `in_ids` and
  /// their facts to `extra`); returns the last node of the tail, or nullptr.
  /// What each node of a tail contributes (find_tail's `roles`, one per ep.nodes entry).
  enum class TailRole { kAddend, kColBias, kActivation, kScale, kShift };

  const Node* find_tail(const Graph& g, const Node& n, const ValueInfo& out, Scope& scope, Epilogue& ep,
                        std::vector<int>& in_ids, std::vector<ValueInfo>& extra, std::vector<TailRole>& roles) {
    std::string v = g.values[n.outputs[0]].name;
    const Node* last = nullptr;
    const Node* c = sole_consumer(g, v);
    for (int adds = 0; adds < 2 && c && c->op_type == "Add"; ++adds) {
      if (c->inputs.size() != 2 || c->inputs[0] < 0 || c->inputs[1] < 0) break;
      const int other = g.values[c->inputs[0]].name == v ? c->inputs[1] : c->inputs[0];
      if (g.values[other].name == v) break;  // Add(v, v)
      auto id = lookup(g.values[other].name, scope);
      if (!id.is_ok()) break;  // computed later: the other operand's producer may take the Add
      const PlanValue& z = plan_.values[id.value()];
      if (z.dtype != DType::kFloat32) break;
      bool row = !out.shape.empty() && !z.shape.empty() && z.shape.size() <= out.shape.size() &&
                 z.shape.back() == out.shape.back();
      for (size_t d = 0; row && d + 1 < z.shape.size(); ++d) row = z.shape[d] == 1;
      int* slot = nullptr;
      if (z.shape == out.shape && ep.addend_input < 0) slot = &ep.addend_input;
      else if (row && z.shape != out.shape && ep.col_bias_input < 0) slot = &ep.col_bias_input;
      if (!slot) break;
      *slot = static_cast<int>(in_ids.size());
      roles.push_back(slot == &ep.addend_input ? TailRole::kAddend : TailRole::kColBias);
      in_ids.push_back(id.value());
      ValueInfo info;
      info.dtype = z.dtype;
      info.shape = z.shape;
      info.constant = z.constant;
      extra.push_back(std::move(info));
      ep.nodes.push_back(c);
      last = c;
      v = g.values[c->outputs[0]].name;
      c = sole_consumer(g, v);
    }
    FusedActivation act;
    if (c && fusable_activation(g, *c, scope, &act) && g.values[c->inputs[0]].name == v) {
      ep.act = act;
      ep.nodes.push_back(c);
      roles.push_back(TailRole::kActivation);
      last = c;
      // Then a Mul and/or an Add of a plan-time float scalar: act(x) * scale + shift.
      for (const char* op : {"Mul", "Add"}) {
        v = g.values[c->outputs[0]].name;
        const Node* d = sole_consumer(g, v);
        float k = 0;
        if (!d || d->op_type != op || !scalar_operand(g, *d, v, scope, &k)) break;
        if (op[0] == 'M') ep.act.scale = k;
        else ep.act.shift = k;
        ep.nodes.push_back(d);
        roles.push_back(op[0] == 'M' ? TailRole::kScale : TailRole::kShift);
        last = c = d;
      }
    }
    return last;
  }

  /// For a binary node `d` reading value `v` once: the other operand, when it is a
  /// plan-time float32 scalar (one element), in *k.
  bool scalar_operand(const Graph& g, const Node& d, const std::string& v, Scope& scope, float* k) {
    if (d.inputs.size() != 2 || d.inputs[0] < 0 || d.inputs[1] < 0) return false;
    const bool first = g.values[d.inputs[0]].name == v, second = g.values[d.inputs[1]].name == v;
    if (first == second) return false;
    auto id = lookup(g.values[d.inputs[first ? 1 : 0]].name, scope);
    if (!id.is_ok()) return false;
    const PlanValue& z = plan_.values[id.value()];
    if (z.home != PlanValue::Home::kConstant || z.dtype != DType::kFloat32 || z.constant->numel() != 1) return false;
    *k = z.constant->data_as<float>()[0];
    return true;
  }

  Result<int> lookup(const std::string& name, Scope& scope) {
    for (Scope* s = &scope; s; s = s->parent) {
      auto it = s->names.find(name);
      if (it != s->names.end()) return it->second;
    }
    if (parent_) {
      TSR_ASSIGN_OR_RETURN(int pid, parent_->lookup(name, *parent_scope_));
      TSR_ASSIGN_OR_RETURN(pid, parent_->to_layout(pid, false));
      TSR_ASSIGN_OR_RETURN(pid, parent_->place(pid, nullptr));  // bodies read host memory
      const PlanValue& p = parent_->plan_.values[pid];
      PlanValue v;
      v.name = p.name;
      v.dtype = p.dtype;
      v.shape = p.shape;
      if (p.home == PlanValue::Home::kConstant) {
        v.home = PlanValue::Home::kConstant;
        v.constant = p.constant;
      } else {
        v.home = PlanValue::Home::kOuter;
        v.index = static_cast<int>(plan_.outer.size());
        outer_bindings_->push_back(pid);
      }
      int id = add_value(std::move(v));
      if (plan_.values[id].home == PlanValue::Home::kOuter) plan_.outer.push_back(id);
      Scope* root = &scope;
      while (root->parent) root = root->parent;
      root->names[name] = id;
      return id;
    }
    return not_found("value '" + name + "' is not defined");
  }

  /// Value `id` in the CPU layout asked for: NCHW16c when `blocked`, else plain. The value
  /// itself when it has it, else its converted copy: a reorder step before the step being
  /// planned, made once per value and layout (later readers share it).
  Result<int> to_layout(int id, bool blocked) {
    if (id < 0 || plan_.values[id].nchwc == blocked) return id;
    auto& cache = blocked ? to_blocked_ : to_plain_;
    auto it = cache.find(id);
    if (it != cache.end()) return it->second;
    if (!current_node_) return internal_error("value '" + plan_.values[id].name + "' converted outside of a node");
    const PlanValue& v = plan_.values[id];
    if (v.dtype != DType::kFloat32 || v.shape.size() < 3 || v.device)
      return internal_error("value '" + v.name + "' cannot be converted to or from NCHW16c");
    PlanValue c;
    c.name = v.name;
    c.dtype = v.dtype;
    c.shape = v.shape;
    c.home = PlanValue::Home::kArena;
    c.nchwc = blocked;
    c.bytes = value_bytes(v.dtype, v.shape, blocked);
    std::unique_ptr<Kernel> kernel =
        make_cpu_nchwc_reorder(v.shape, blocked, opt_.thread_pool ? opt_.thread_pool->num_threads() : 1);
    if (!kernel) return internal_error("value '" + v.name + "': no NCHW16c conversion on this CPU");
    const std::string line = "reorder '" + v.name + "' " + (blocked ? "NCHW -> NCHW16c" : "NCHW16c -> NCHW");
    int cid = add_value(std::move(c));
    Step step;
    step.node = current_node_;
    step.backend = "cpu";
    step.kernel = std::move(kernel);
    step.inputs = {id};
    step.outputs = {cid};
    plan_.placements.push_back(std::string(depth_ * 2, ' ') + line);
    plan_.steps.push_back(std::move(step));
    cache.emplace(id, cid);
    (blocked ? to_plain_ : to_blocked_).emplace(cid, id);  // and back: the original
    return cid;
  }

  /// The id of value `id` in the memory of `where` (null: host). The first time a value is
  /// needed elsewhere, adds a copy step (before the step being planned) or, for a plan
  /// constant needed on the device, a device constant uploaded once per plan; later
  /// consumers share that copy.
  Result<int> place(int id, Backend* where) {
    if (id < 0) return id;
    const PlanValue& v = plan_.values[id];
    if (v.device == where) return id;
    auto& cache = where ? to_device_ : to_host_;
    auto it = cache.find(id);
    if (it != cache.end()) return it->second;
    if (where && v.device)
      return unimplemented("value '" + v.name + "' lives on " + v.device->name() + " and is needed on " + where->name() +
                           "; copies between two devices are not supported");
    PlanValue c;
    c.name = v.name;
    c.dtype = v.dtype;
    c.shape = v.shape;
    c.device = where;
    c.bytes = static_cast<uint64_t>(shape_numel(v.shape).value()) * dtype_size(v.dtype);
    const bool upload_constant = where && v.home == PlanValue::Home::kConstant;
    c.home = upload_constant ? PlanValue::Home::kDeviceConstant : PlanValue::Home::kArena;
    const std::string from = v.device ? v.device->name() : "cpu";
    const std::string to = where ? where->name() : "cpu";
    int cid = add_value(std::move(c));
    if (upload_constant) {
      plan_.device_constants.push_back({id, cid});
    } else {
      if (!current_node_) return internal_error("value '" + plan_.values[id].name + "' copied outside of a node");
      Step step;
      step.node = current_node_;
      step.backend = where ? where->name() : plan_.values[id].device->name();
      step.kernel = std::make_unique<CopyKernel>(where ? where : plan_.values[id].device, where != nullptr);
      step.inputs = {id};
      step.outputs = {cid};
      plan_.placements.push_back(std::string(depth_ * 2, ' ') + "copy '" + plan_.values[id].name + "' " + from + " -> " + to);
      plan_.steps.push_back(std::move(step));
    }
    cache.emplace(id, cid);
    return cid;
  }

  Status plan_node(const Graph& g, const Node& n, Scope& scope) {
    current_node_ = &n;
    std::vector<int> in_ids;
    for (int i : n.inputs) {
      if (i < 0) {
        in_ids.push_back(-1);
        continue;
      }
      TSR_ASSIGN_OR_RETURN(int id, lookup(g.values[i].name, scope));
      in_ids.push_back(id);
    }
    // NCHW16c: only a Conv, pool, Resize or Concat the CPU takes so reads a blocked value;
    // anything else reads plain.
    const bool onnx_domain = n.domain.empty() || n.domain == "ai.onnx";
    const bool nchwc_candidate =
        opt_.nchwc && onnx_domain &&
        (n.op_type == "Conv" || n.op_type == "MaxPool" || n.op_type == "GlobalAveragePool" || n.op_type == "Resize" ||
         n.op_type == "Concat");
    bool any_blocked = false;
    for (int id : in_ids) any_blocked = any_blocked || (id >= 0 && plan_.values[id].nchwc);
    const bool nchwc_elementwise = opt_.nchwc && onnx_domain && any_blocked && nchwc_elementwise_op(n.op_type);
    if (!nchwc_candidate && !nchwc_elementwise)
      for (int& id : in_ids) {
        TSR_ASSIGN_OR_RETURN(id, to_layout(id, false));
      }
    if (n.domain.empty() || n.domain == "ai.onnx") {
      // Control flow runs in the executor, on host memory.
      if (device_ && (n.op_type == "If" || n.op_type == "Loop" || n.op_type == "Scan"))
        for (int& id : in_ids) {
          TSR_ASSIGN_OR_RETURN(id, place(id, nullptr));
        }
      if (n.op_type == "If") return plan_if(g, n, scope, in_ids);
      if (n.op_type == "Loop") return plan_loop(g, n, scope, in_ids);
      if (n.op_type == "Scan") return plan_scan(g, n, scope, in_ids);
    }

    const OpSchema* schema = find_op_schema(n.domain, n.op_type);
    if (!schema)
      return unimplemented(n.describe() + ": op '" + (n.domain.empty() ? "" : n.domain + ".") + n.op_type +
                           "' (opset " + std::to_string(n.opset) + ") is not supported");
    if (schema->kind != OpKind::kKernel)
      return unimplemented(n.describe() + ": control-flow op " + n.op_type + " is not supported yet");

    std::vector<ValueInfo> in_info(in_ids.size());
    std::vector<const ValueInfo*> in_ptrs(in_ids.size(), nullptr);
    bool all_const = true;
    for (size_t i = 0; i < in_ids.size(); ++i) {
      if (in_ids[i] < 0) continue;
      const PlanValue& pv = plan_.values[in_ids[i]];
      in_info[i].dtype = pv.dtype;
      in_info[i].shape = pv.shape;
      in_info[i].constant = pv.constant;
      if (pv.home != PlanValue::Home::kConstant) all_const = false;
      in_ptrs[i] = &in_info[i];
    }
    std::vector<ValueInfo> out_info(n.outputs.size());
    InferContext ictx(n, in_ptrs, &out_info);
    TSR_RETURN_IF_ERROR(infer_node(*schema, ictx));

    // Folded by inference itself (Shape, Size, Constant)?
    bool outputs_known = true;
    int64_t out_elems = 0;
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      if (n.outputs[i] < 0) continue;
      if (!out_info[i].constant) outputs_known = false;
      out_elems += shape_numel(out_info[i].shape).value();
    }
    if (!outputs_known && all_const && out_elems <= opt_.max_fold_elements) {
      TSR_RETURN_IF_ERROR(fold(n, in_ids, out_info));
      outputs_known = true;
    }
    if (outputs_known) {
      for (size_t i = 0; i < n.outputs.size(); ++i) {
        if (n.outputs[i] < 0) continue;
        PlanValue pv;
        pv.name = g.values[n.outputs[i]].name;
        pv.dtype = out_info[i].dtype;
        pv.shape = out_info[i].shape;
        pv.home = PlanValue::Home::kConstant;
        pv.constant = out_info[i].constant;
        std::string name = pv.name;
        scope.names[name] = add_value(std::move(pv));
      }
      ++plan_.folded_nodes;
      return Status::ok();
    }

    if (nchwc_elementwise) {
      TSR_ASSIGN_OR_RETURN(bool done, plan_nchwc_elementwise(g, n, scope, in_ids, in_ptrs, out_info));
      if (done) return Status::ok();
      for (int& id : in_ids) {
        TSR_ASSIGN_OR_RETURN(id, to_layout(id, false));
      }
    }
    CompileContext cctx{n, in_ptrs, out_info};
    cctx.threads = opt_.thread_pool ? opt_.thread_pool->num_threads() : 1;
    // NCHW16c: a node that the CPU backend runs (the first backend to take it) and takes
    // blocked (cpu_nchwc_mode). A Conv's X stays blocked, or is converted when it has 16
    // channels or more (fewer: the stem's image, read in place); a pool's or Resize's X, and
    // every input of a Concat, must be blocked already. Mode 1 makes the output blocked;
    // mode 2 (GlobalAveragePool) plain.
    bool nchwc = false;
    if (nchwc_candidate) {
      // A Concat reads every input blocked; the others only X.
      const bool all_inputs = n.op_type == "Concat";
      const size_t span = all_inputs ? std::min<size_t>(in_ids.size(), 32) : std::min<size_t>(in_ids.size(), 1);
      auto blocked_bits = [&] {
        uint32_t bits = 0;
        for (size_t i = 0; i < span; ++i)
          if (in_ids[i] >= 0 && plan_.values[in_ids[i]].nchwc) bits |= 1u << i;
        return bits;
      };
      cctx.nchwc_inputs = blocked_bits();
      const int mode = cpu_runs(cctx) ? cpu_nchwc_mode(cctx) : 0;
      nchwc = mode == 1;
      for (size_t i = 0; i < in_ids.size(); ++i) {
        bool blocked = mode != 0 && (i == 0 || all_inputs) && in_ids[i] >= 0;
        if (blocked) {
          const PlanValue& v = plan_.values[in_ids[i]];
          blocked = v.nchwc || (n.op_type == "Conv" && v.shape[1] >= 16);
        }
        TSR_ASSIGN_OR_RETURN(in_ids[i], to_layout(in_ids[i], blocked));
      }
      cctx.nchwc_output = nchwc;
      cctx.nchwc_inputs = mode != 0 ? blocked_bits() : 0u;
    }
    Step step;
    step.node = &n;
    step.inputs = in_ids;
    Backend* where = nullptr;  // the chosen backend when its memory is not the host's
    // Fusion: a Conv/MatMul/Gemm with an elementwise tail goes to the first backend that
    // runs the node; if its kernel takes the tail, the tail's nodes are absorbed.
    const Node* tail_end = nullptr;
    std::string fused_desc;
    if (opt_.fuse && (n.domain.empty() || n.domain == "ai.onnx") &&
        (n.op_type == "Conv" || n.op_type == "MatMul" || n.op_type == "Gemm") && n.outputs.size() == 1 &&
        n.outputs[0] >= 0 && out_info[0].dtype == DType::kFloat32) {
      Epilogue ep;
      std::vector<int> f_ids = in_ids;
      std::vector<ValueInfo> extra;
      extra.reserve(2);
      std::vector<TailRole> roles;
      find_tail(g, n, out_info[0], scope, ep, f_ids, extra, roles);
      // The tail's operands: a residual in the output's layout, anything else plain.
      for (size_t i = in_ids.size(); i < f_ids.size(); ++i) {
        TSR_ASSIGN_OR_RETURN(f_ids[i], to_layout(f_ids[i], nchwc && static_cast<int>(i) == ep.addend_input));
      }
      // The longest prefix of the tail that the kernel takes (e.g. a Gemm with its own C
      // takes a residual Add but not a second bias).
      while (!ep.nodes.empty()) {
        std::vector<const ValueInfo*> f_ptrs = in_ptrs;
        for (const ValueInfo& e : extra) f_ptrs.push_back(&e);
        CompileContext fctx{n, f_ptrs, out_info};
        fctx.threads = cctx.threads;
        fctx.epilogue = &ep;
        fctx.nchwc_output = nchwc;
        fctx.nchwc_inputs = cctx.nchwc_inputs | (nchwc && ep.addend_input >= 0 ? 1u << ep.addend_input : 0u);
        for (Backend* b : opt_.backends) {
          if (!b->supports(cctx)) continue;
          TSR_ASSIGN_OR_RETURN(step.kernel, b->compile(fctx));
          if (step.kernel) {
            step.backend = b->name();
            where = b->host_memory() ? nullptr : b;
          }
          break;
        }
        if (step.kernel) {
          step.inputs = f_ids;
          tail_end = ep.nodes.back();
          for (const Node* f : ep.nodes) {
            absorbed_.insert(f);
            fused_desc += " + " + f->describe();
          }
          break;
        }
        // Drop the tail's last node and what it contributed.
        switch (roles.back()) {
          case TailRole::kShift: ep.act.shift = 0.f; break;
          case TailRole::kScale: ep.act.scale = 1.f; break;
          case TailRole::kActivation: ep.act = FusedActivation{}; break;
          case TailRole::kAddend:
          case TailRole::kColBias: {
            // Its operand was the last one appended.
            const int last_in = static_cast<int>(f_ids.size()) - 1;
            if (ep.addend_input == last_in) ep.addend_input = -1;
            if (ep.col_bias_input == last_in) ep.col_bias_input = -1;
            f_ids.pop_back();
            extra.pop_back();
            break;
          }
        }
        roles.pop_back();
        ep.nodes.pop_back();
      }
    }
    if (!step.kernel) {
      for (Backend* b : opt_.backends) {
        if (!b->supports(cctx)) continue;
        TSR_ASSIGN_OR_RETURN(step.kernel, b->compile(cctx));
        step.backend = b->name();
        where = b->host_memory() ? nullptr : b;
        break;
      }
    }
    if (!step.kernel)
      return unimplemented(n.describe() + ": no backend can run op " + n.op_type + " with these inputs");
    // The node's weights from a mapped file: once its kernel is compiled (and has packed
    // what it packs), their pages leave memory until something reads them again.
    for (int id : n.inputs)
      if (id >= 0 && g.values[id].initializer)
        release_mapped_pages(g.values[id].initializer->data(), g.values[id].initializer->nbytes());
    step.scratch_bytes = step.kernel->scratch_bytes();
    step.inplace_input = step.kernel->output_may_alias_input();
    step.on_device = where != nullptr;
    if (device_)  // inputs in the memory of the chosen backend (copy steps go before this one)
      for (int& id : step.inputs) {
        TSR_ASSIGN_OR_RETURN(id, place(id, where));
      }
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      if (n.outputs[i] < 0) {
        step.outputs.push_back(-1);
        continue;
      }
      PlanValue pv;
      // A fused step's output is the tail's last value (the intermediate ones never exist).
      pv.name = tail_end ? g.values[tail_end->outputs[0]].name : g.values[n.outputs[i]].name;
      pv.dtype = out_info[i].dtype;
      pv.shape = out_info[i].shape;
      pv.home = PlanValue::Home::kArena;
      pv.nchwc = nchwc;
      pv.bytes = value_bytes(pv.dtype, pv.shape, nchwc);
      pv.device = where;
      int id = add_value(std::move(pv));
      scope.names[plan_.values[id].name] = id;
      step.outputs.push_back(id);
    }
    const char* algorithm = step.kernel->algorithm();
    plan_.placements.push_back(std::string(depth_ * 2, ' ') + n.describe() + fused_desc +
                               (algorithm ? std::string(" by ") + algorithm : std::string()) + " -> " + step.backend);
    plan_.steps.push_back(std::move(step));
    return Status::ok();
  }

  /// The CPU backend when it is the one that runs this node (the first backend to support
  /// it: the planner compiles there), else null. NCHW16c values are the CPU's alone.
  Backend* cpu_runs(const CompileContext& ctx) const {
    for (Backend* b : opt_.backends)
      if (b->supports(ctx)) return b->host_memory() && b->name() == "cpu" ? b : nullptr;
    return nullptr;
  }

  /// Bytes of a value of this dtype and logical shape, stored plain or NCHW16c.
  static uint64_t value_bytes(DType dtype, const Shape& shape, bool nchwc) {
    return static_cast<uint64_t>(shape_numel(nchwc ? nchwc_storage_shape(shape) : shape).value()) * dtype_size(dtype);
  }

  /// The elementwise ops that run on NCHW16c values as they are: each maps finite values to
  /// finite ones, so the padding lanes stay finite (Div, Exp, Log, ... are not here).
  static bool nchwc_elementwise_op(const std::string& op) {
    static const std::unordered_set<std::string> kOps = {"Add", "Sub", "Mul", "Relu", "LeakyRelu", "Sigmoid",
                                                         "HardSigmoid", "HardSwish", "Tanh", "Clip", "Neg", "Abs"};
    return kOps.count(op) > 0;
  }

  /// An elementwise node reading an NCHW16c value [N, C, H, W] (input 0 of a unary op or
  /// either input of Add/Sub/Mul), when its other operand is a tensor of the same shape, a
  /// per-channel [1 or N, C, 1, 1] tensor (both converted to NCHW16c) or a single value,
  /// and the CPU backend runs it: planned on the blocked storage as a 5-D product
  /// [N, C/16, H, W, 16] (the padding lanes included), its output blocked. So a
  /// squeeze-and-excitation block's channel-wise Mul keeps its input and output blocked.
  /// Returns false (nothing planned) for other shapes.
  Result<bool> plan_nchwc_elementwise(const Graph& g, const Node& n, Scope& scope, std::vector<int>& in_ids,
                                      const std::vector<const ValueInfo*>& in_ptrs, const std::vector<ValueInfo>& out_info) {
    if (n.outputs.size() != 1 || n.outputs[0] < 0 || out_info[0].dtype != DType::kFloat32) return false;
    const Shape& out = out_info[0].shape;
    if (out.size() != 4) return false;
    const bool binary = n.op_type == "Add" || n.op_type == "Sub" || n.op_type == "Mul";
    const size_t operands = binary ? 2 : 1;
    if (in_ids.size() < operands) return false;
    // Each operand: blocked as the output (same shape), per channel (blocked too), or a
    // single value (plain); Clip's bounds stay as they are.
    enum class Kind { kFull, kChannel, kScalar };
    std::vector<Kind> kinds(operands);
    bool some_full_blocked = false;
    for (size_t i = 0; i < operands; ++i) {
      if (in_ids[i] < 0) return false;
      const PlanValue& v = plan_.values[in_ids[i]];
      if (v.dtype != DType::kFloat32) return false;
      const int64_t numel = shape_numel(v.shape).value();
      if (v.shape == out) {
        kinds[i] = Kind::kFull;
        some_full_blocked = some_full_blocked || v.nchwc;
      } else if (v.shape.size() == 4 && (v.shape[0] == 1 || v.shape[0] == out[0]) && v.shape[1] == out[1] && v.shape[2] == 1 &&
                 v.shape[3] == 1) {
        kinds[i] = Kind::kChannel;
      } else if (numel == 1 && v.shape.size() <= 4) {
        kinds[i] = Kind::kScalar;
      } else {
        return false;
      }
    }
    if (!some_full_blocked) return false;
    Backend* cpu = cpu_runs(CompileContext{n, in_ptrs, out_info});
    if (!cpu) return false;
    // The blocked storage as plain 5-D tensors.
    std::vector<ValueInfo> phys(in_ids.size());
    std::vector<const ValueInfo*> phys_ptrs(in_ids.size(), nullptr);
    for (size_t i = 0; i < in_ids.size(); ++i) {
      if (in_ids[i] < 0) continue;
      if (i < operands && kinds[i] != Kind::kScalar) {
        TSR_ASSIGN_OR_RETURN(in_ids[i], to_layout(in_ids[i], true));
        phys[i].shape = nchwc_storage_shape(plan_.values[in_ids[i]].shape);
        phys[i].dtype = DType::kFloat32;
      } else {
        phys[i] = *in_ptrs[i];
      }
      phys_ptrs[i] = &phys[i];
    }
    std::vector<ValueInfo> phys_out(1);
    phys_out[0].dtype = DType::kFloat32;
    phys_out[0].shape = nchwc_storage_shape(out);
    CompileContext cctx{n, phys_ptrs, phys_out};
    cctx.threads = opt_.thread_pool ? opt_.thread_pool->num_threads() : 1;
    Step step;
    step.node = &n;
    step.inputs = in_ids;
    TSR_ASSIGN_OR_RETURN(step.kernel, cpu->compile(cctx));
    if (!step.kernel) return internal_error(n.describe() + ": the CPU declined the NCHW16c elementwise op");
    step.backend = cpu->name();
    step.scratch_bytes = step.kernel->scratch_bytes();
    PlanValue pv;
    pv.name = g.values[n.outputs[0]].name;
    pv.dtype = DType::kFloat32;
    pv.shape = out;
    pv.home = PlanValue::Home::kArena;
    pv.nchwc = true;
    pv.bytes = value_bytes(DType::kFloat32, out, true);
    const int id = add_value(std::move(pv));
    scope.names[plan_.values[id].name] = id;
    step.outputs.push_back(id);
    plan_.placements.push_back(std::string(depth_ * 2, ' ') + n.describe() + " -> " + step.backend + " (NCHW16c)");
    plan_.steps.push_back(std::move(step));
    return true;
  }

  /// Computes a node whose inputs are all constant with its reference kernel, now.
  Status fold(const Node& n, const std::vector<int>& in_ids, std::vector<ValueInfo>& out_info) {
    std::vector<const Tensor*> ins;
    for (int id : in_ids) ins.push_back(id < 0 ? nullptr : plan_.values[id].constant.get());
    TSR_ASSIGN_OR_RETURN(std::vector<Tensor> outs, evaluate_node(n, ins));
    for (size_t i = 0; i < n.outputs.size(); ++i)
      if (n.outputs[i] >= 0) out_info[i].constant = std::make_shared<const Tensor>(std::move(outs[i]));
    return Status::ok();
  }

  Status plan_if(const Graph& g, const Node& n, Scope& scope, const std::vector<int>& in_ids) {
    if (in_ids.size() != 1 || in_ids[0] < 0) return invalid_argument(n.describe() + ": If takes exactly one input (cond)");
    const Attribute* then_a = n.find_attr("then_branch");
    const Attribute* else_a = n.find_attr("else_branch");
    if (!then_a || !then_a->g || !else_a || !else_a->g)
      return invalid_argument(n.describe() + ": If needs graph attributes then_branch and else_branch");
    const Graph* branches[2] = {else_a->g.get(), then_a->g.get()};
    for (const Graph* b : branches)
      if (b->outputs.size() != n.outputs.size())
        return invalid_argument(n.describe() + ": branch '" + b->name + "' gives " + std::to_string(b->outputs.size()) +
                                " outputs; the node has " + std::to_string(n.outputs.size()));
    if (depth_ > 16) return invalid_argument(n.describe() + ": If nested too deeply");
    const PlanValue& cond = plan_.values[in_ids[0]];
    if (cond.dtype != DType::kBool || shape_numel(cond.shape).value() != 1)
      return invalid_argument(n.describe() + ": cond must be a bool tensor of one element, got " + dtype_name(cond.dtype) +
                              shape_to_string(cond.shape));

    if (cond.home == PlanValue::Home::kConstant) {
      // Known at plan time: plan the taken branch in place.
      const Graph& b = *branches[cond.constant->data_as<bool>()[0] ? 1 : 0];
      Scope inner;
      inner.parent = &scope;
      TSR_RETURN_IF_ERROR(plan_nodes(b, inner).with_context(n.describe() + " branch '" + b.name + "'"));
      for (size_t i = 0; i < n.outputs.size(); ++i) {
        if (n.outputs[i] < 0) continue;
        TSR_ASSIGN_OR_RETURN(int id, lookup(b.values[b.outputs[i]].name, inner));
        scope.names[g.values[n.outputs[i]].name] = id;
      }
      ++plan_.folded_nodes;
      return Status::ok();
    }

    auto ifs = std::make_unique<IfStep>();
    ifs->cond = in_ids[0];
    size_t placement_lines = 0;
    for (int k = 0; k < 2; ++k) {
      auto sub_plan = std::make_unique<Plan>();
      std::vector<int> bindings;
      Planner sub(host_opt_, *sub_plan, this, &scope, &bindings, depth_ + 1);
      Scope root;
      const Graph& b = *branches[k];
      Status s = sub.plan_nodes(b, root);
      if (s.is_ok()) s = sub.plan_outputs(b, root);
      if (s.is_ok()) s = sub.finish();
      if (!s.is_ok()) {
        ifs->branch_error[k] = s.with_context(n.describe() + " branch '" + b.name + "'");
        continue;
      }
      ifs->branch[k] = std::move(sub_plan);
      ifs->outer_bindings[k] = std::move(bindings);
      for (auto& line : ifs->branch[k]->placements) plan_.placements.push_back(line);
      placement_lines += ifs->branch[k]->placements.size();
    }
    if (!ifs->branch[0] && !ifs->branch[1]) return ifs->branch_error[1];
    const Plan* a_plan = ifs->branch[1] ? ifs->branch[1].get() : ifs->branch[0].get();
    const Plan* b_plan = ifs->branch[0] ? ifs->branch[0].get() : ifs->branch[1].get();
    Step step;
    step.node = &n;
    step.backend = "cpu";
    step.inputs = in_ids;
    step.scratch_bytes = std::max(a_plan->arena_bytes, b_plan->arena_bytes);
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      const PlanValue& a = a_plan->values[a_plan->outputs[i]];
      const PlanValue& b = b_plan->values[b_plan->outputs[i]];
      if (a.dtype != b.dtype || a.shape != b.shape)
        return unimplemented(n.describe() + ": output " + std::to_string(i) + " is " + dtype_name(a.dtype) +
                             shape_to_string(a.shape) + " in one branch and " + dtype_name(b.dtype) + shape_to_string(b.shape) +
                             " in the other; branches of different shapes are not supported yet");
      if (n.outputs[i] < 0) {
        step.outputs.push_back(-1);
        continue;
      }
      PlanValue pv;
      pv.name = g.values[n.outputs[i]].name;
      pv.dtype = a.dtype;
      pv.shape = a.shape;
      pv.bytes = static_cast<uint64_t>(shape_numel(pv.shape).value()) * dtype_size(pv.dtype);
      int id = add_value(std::move(pv));
      scope.names[plan_.values[id].name] = id;
      step.outputs.push_back(id);
    }
    plan_.placements.insert(plan_.placements.end() - static_cast<long>(placement_lines),
                            std::string(depth_ * 2, ' ') + n.describe() + " -> executor (branch chosen per run)");
    step.if_step = std::move(ifs);
    plan_.steps.push_back(std::move(step));
    return Status::ok();
  }

  // ---- Loop and Scan ----

  struct BodyPlan {
    std::unique_ptr<Plan> plan;
    std::vector<int> bindings;  // the plan value of this plan bound to each body kOuter value
  };

  /// Plans a Loop or Scan body as a sub-plan for these input dtypes and shapes; with
  /// `values` (plan-time evaluation) the inputs are constants.
  Result<BodyPlan> plan_body(const Node& n, const Graph& body, Scope& scope, const std::vector<DType>& dtypes,
                             const std::vector<Shape>& shapes, const std::vector<const Tensor*>* values) {
    if (body.inputs.size() != shapes.size())
      return internal_error(n.describe() + ": body input count was not checked");
    BodyPlan bp;
    bp.plan = std::make_unique<Plan>();
    Planner sub(host_opt_, *bp.plan, this, &scope, &bp.bindings, depth_ + 1);
    Scope root;
    Status s = sub.plan_inputs(body, shapes, root, values, &dtypes);
    if (s.is_ok()) s = sub.plan_nodes(body, root);
    if (s.is_ok()) s = sub.plan_outputs(body, root);
    if (s.is_ok()) s = sub.finish();
    if (!s.is_ok()) return s.with_context(n.describe() + " body '" + body.name + "'");
    return bp;
  }

  /// The body attribute of a Loop or Scan, with its input and output counts checked.
  Result<const Graph*> body_of(const Node& n, size_t want_inputs, size_t want_outputs, const std::string& layout) {
    const Attribute* a = n.find_attr("body");
    if (!a || a->type != AttrType::kGraph || !a->g)
      return invalid_argument(n.describe() + ": " + n.op_type + " needs the graph attribute 'body'");
    const Graph& body = *a->g;
    if (body.inputs.size() != want_inputs || body.outputs.size() != want_outputs)
      return invalid_argument(n.describe() + ": body '" + body.name + "' takes " + std::to_string(body.inputs.size()) +
                              " inputs and gives " + std::to_string(body.outputs.size()) + " outputs; this node needs " +
                              std::to_string(want_inputs) + " and " + std::to_string(want_outputs) + " (" + layout + ")");
    if (depth_ > 16) return invalid_argument(n.describe() + ": control flow nested too deeply");
    return &body;
  }

  /// Bytes of plan value `id`.
  uint64_t value_bytes(int id) const {
    const PlanValue& v = plan_.values[id];
    return static_cast<uint64_t>(shape_numel(v.shape).value()) * dtype_size(v.dtype);
  }

  /// Adds an arena value for output `i` of `n` and returns its id (-1 for an omitted output).
  int add_output(const Graph& g, const Node& n, size_t i, DType dtype, const Shape& shape, Scope& scope) {
    if (n.outputs[i] < 0) return -1;
    PlanValue pv;
    pv.name = g.values[n.outputs[i]].name;
    pv.dtype = dtype;
    pv.shape = shape;
    pv.bytes = static_cast<uint64_t>(shape_numel(shape).value()) * dtype_size(dtype);
    int id = add_value(std::move(pv));
    scope.names[plan_.values[id].name] = id;
    return id;
  }

  /// Finishes a Loop/Scan step: the body's input views and the placement lines.
  void push_loop_step(const Node& n, Step step, BodyPlan bp, const std::string& how) {
    LoopStep& ls = *step.loop_step;
    ls.body = std::move(bp.plan);
    ls.outer_bindings = std::move(bp.bindings);
    for (int id : ls.body->inputs) {
      const PlanValue& v = ls.body->values[id];
      ls.body_inputs.push_back(Tensor::wrap(v.dtype, v.shape, nullptr));
    }
    for (const Tensor& t : ls.body_inputs) ls.body_input_ptrs.push_back(&t);
    plan_.placements.push_back(std::string(depth_ * 2, ' ') + n.describe() + " -> executor (" + how + ")");
    for (const auto& line : ls.body->placements) plan_.placements.push_back(line);
    plan_.steps.push_back(std::move(step));
  }

  /// Most iterations of a Loop run at plan time (when all its inputs are known then).
  static constexpr int64_t kMaxFoldTrips = 4096;

  /// Runs a Loop whose inputs are all known at plan time, now, planning the body again
  /// every iteration (so loop-carried values may change shape between iterations). Leaves
  /// *folded false, computing nothing, when the body reads a value known only at run time,
  /// the loop runs more than kMaxFoldTrips iterations, or it runs none and has scan outputs
  /// (whose shapes then come from the run-time plan).
  Status fold_loop(const Graph& g, const Node& n, Scope& scope, const std::vector<int>& in_ids, const Graph& body,
                   size_t num_carried, size_t num_scan, bool* folded) {
    *folded = false;
    const bool has_m = in_ids[0] >= 0, has_cond = in_ids[1] >= 0;
    const int64_t m = has_m ? plan_.values[in_ids[0]].constant->data_as<int64_t>()[0] : -1;
    bool cond = has_cond ? plan_.values[in_ids[1]].constant->data_as<bool>()[0] : true;
    // Without a cond the loop runs exactly m times: give up now rather than after
    // kMaxFoldTrips iterations. With one (a while loop; PyTorch exports M = INT64_MAX) it
    // may stop early: try, within the cap below.
    if (has_m && !has_cond && m > kMaxFoldTrips) return Status::ok();
    std::vector<std::shared_ptr<const Tensor>> state;
    for (size_t i = 0; i < num_carried; ++i) state.push_back(plan_.values[in_ids[2 + i]].constant);
    std::vector<std::vector<Tensor>> scans(num_scan);
    int64_t trips = 0;
    for (; (!has_m || trips < m) && (!has_cond || cond); ++trips) {
      if (trips >= kMaxFoldTrips) return Status::ok();
      TSR_ASSIGN_OR_RETURN(Tensor iter, Tensor::allocate(DType::kInt64, {}));
      iter.data_as<int64_t>()[0] = trips;
      TSR_ASSIGN_OR_RETURN(Tensor c, Tensor::allocate(DType::kBool, {}));
      c.data_as<bool>()[0] = cond;
      std::vector<const Tensor*> ins = {&iter, &c};
      for (const auto& t : state) ins.push_back(t.get());
      std::vector<DType> dtypes;
      std::vector<Shape> shapes;
      for (const Tensor* t : ins) {
        dtypes.push_back(t->dtype());
        shapes.push_back(t->shape());
      }
      const std::string where = n.describe() + " iteration " + std::to_string(trips);
      TSR_ASSIGN_OR_RETURN(BodyPlan bp, plan_body(n, body, scope, dtypes, shapes, &ins));
      const Plan& p = *bp.plan;
      if (!p.outer.empty()) return Status::ok();  // reads a value known only at run time
      TSR_RETURN_IF_ERROR(check_loop_body(n, p, dtypes, num_carried).with_context("iteration " + std::to_string(trips)));
      TSR_ASSIGN_OR_RETURN(Tensor arena, Tensor::allocate_uninitialized(DType::kUInt8, {static_cast<int64_t>(p.arena_bytes)}));
      uint8_t* a = arena.data_as<uint8_t>();
      TSR_RETURN_IF_ERROR(execute_plan(p, a, ins).with_context(where));
      cond = plan_value_view(p, p.outputs[0], a, ins).data_as<bool>()[0];
      std::vector<std::shared_ptr<const Tensor>> next;
      for (size_t i = 0; i < num_carried; ++i) {
        TSR_ASSIGN_OR_RETURN(Tensor t, plan_value_view(p, p.outputs[1 + i], a, ins).clone());
        next.push_back(std::make_shared<const Tensor>(std::move(t)));
      }
      for (size_t k = 0; k < num_scan; ++k) {
        TSR_ASSIGN_OR_RETURN(Tensor t, plan_value_view(p, p.outputs[1 + num_carried + k], a, ins).clone());
        if (!scans[k].empty() && (t.dtype() != scans[k][0].dtype() || t.shape() != scans[k][0].shape()))
          return invalid_argument(where + ": scan output " + std::to_string(k) + " is " + t.describe() +
                                  " but was " + scans[k][0].describe() + " in iteration 0; scan outputs must keep their shape");
        scans[k].push_back(std::move(t));
      }
      state = std::move(next);
    }
    if (trips == 0 && num_scan > 0) return Status::ok();

    std::vector<std::shared_ptr<const Tensor>> outs = state;
    for (size_t k = 0; k < num_scan; ++k) {
      Shape shape = scans[k][0].shape();
      shape.insert(shape.begin(), trips);
      TSR_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate_uninitialized(scans[k][0].dtype(), shape));
      uint8_t* dst = t.data_as<uint8_t>();
      for (const Tensor& part : scans[k]) {
        if (part.nbytes()) std::memcpy(dst, part.data(), part.nbytes());
        dst += part.nbytes();
      }
      outs.push_back(std::make_shared<const Tensor>(std::move(t)));
    }
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      if (n.outputs[i] < 0) continue;
      PlanValue pv;
      pv.name = g.values[n.outputs[i]].name;
      pv.dtype = outs[i]->dtype();
      pv.shape = outs[i]->shape();
      pv.home = PlanValue::Home::kConstant;
      pv.constant = outs[i];
      std::string name = pv.name;
      scope.names[name] = add_value(std::move(pv));
    }
    ++plan_.folded_nodes;
    *folded = true;
    return Status::ok();
  }

  /// Checks a planned Loop body's outputs: cond a one-element bool, loop-carried values of
  /// the dtypes they came in with (ONNX Loop: V and the body's outputs share one type).
  static Status check_loop_body(const Node& n, const Plan& p, const std::vector<DType>& in_dtypes, size_t num_carried) {
    const PlanValue& c = p.values[p.outputs[0]];
    if (c.dtype != DType::kBool || shape_numel(c.shape).value() != 1)
      return invalid_argument(n.describe() + ": the body's first output (cond) must be a bool tensor of one element, got " +
                              dtype_name(c.dtype) + shape_to_string(c.shape));
    for (size_t i = 0; i < num_carried; ++i) {
      const PlanValue& o = p.values[p.outputs[1 + i]];
      if (o.dtype != in_dtypes[2 + i])
        return invalid_argument(n.describe() + ": loop-carried value " + std::to_string(i) + " comes in as " +
                                dtype_name(in_dtypes[2 + i]) + " but the body gives " + dtype_name(o.dtype));
    }
    return Status::ok();
  }

  /// True when the body's cond output is always its cond input (through Identity nodes) or
  /// constant true: then only M or a false cond input stops the loop.
  static bool cond_is_fixed(const Plan& p) {
    int c = p.outputs[0];
    for (int hops = 0; hops <= static_cast<int>(p.steps.size()); ++hops) {
      const PlanValue& v = p.values[c];
      if (v.home == PlanValue::Home::kConstant) return v.constant->data_as<bool>()[0];
      if (c == p.inputs[1]) return true;
      const Step* producer = nullptr;
      for (const Step& st : p.steps)
        if (!st.outputs.empty() && st.outputs[0] == c) producer = &st;
      if (!producer || producer->node->op_type != "Identity" || producer->inputs.empty()) return false;
      c = producer->inputs[0];
    }
    return false;
  }

  /// Loop (ONNX opset 1, 11, 13, 16..21, tensor values only): inputs M (int64, optional),
  /// cond (bool, optional), N loop-carried values; body (iteration number, cond, N values)
  /// -> (cond, N values, K scan outputs); outputs the N final values and the K scan outputs
  /// stacked along a new axis 0.
  Status plan_loop(const Graph& g, const Node& n, Scope& scope, const std::vector<int>& in_ids) {
    if (in_ids.size() < 2)
      return invalid_argument(n.describe() + ": Loop takes M, cond and the loop-carried values; it has " +
                              std::to_string(in_ids.size()) + " inputs");
    const size_t num_carried = in_ids.size() - 2;
    if (n.outputs.size() < num_carried)
      return invalid_argument(n.describe() + ": Loop has " + std::to_string(num_carried) + " loop-carried inputs but only " +
                              std::to_string(n.outputs.size()) + " outputs");
    const size_t num_scan = n.outputs.size() - num_carried;
    TSR_ASSIGN_OR_RETURN(const Graph* body_ptr,
                         body_of(n, num_carried + 2, 1 + num_carried + num_scan,
                                 "inputs: iteration number, cond, " + std::to_string(num_carried) +
                                     " loop-carried values; outputs: cond, the loop-carried values, " +
                                     std::to_string(num_scan) + " scan outputs"));
    const Graph& body = *body_ptr;
    const bool has_m = in_ids[0] >= 0, has_cond = in_ids[1] >= 0;
    if (!has_m && !has_cond)
      return invalid_argument(n.describe() + ": neither the trip count M nor cond is given, so the loop would never end");
    bool all_const = true;
    if (has_m) {
      const PlanValue& m = plan_.values[in_ids[0]];
      if (m.dtype != DType::kInt64 || shape_numel(m.shape).value() != 1)
        return invalid_argument(n.describe() + ": the trip count M must be an int64 tensor of one element, got " +
                                dtype_name(m.dtype) + shape_to_string(m.shape));
      if (m.home == PlanValue::Home::kConstant && m.constant->data_as<int64_t>()[0] < 0)
        return invalid_argument(n.describe() + ": the trip count M is " + std::to_string(m.constant->data_as<int64_t>()[0]) +
                                "; it must not be negative");
    }
    if (has_cond) {
      const PlanValue& c = plan_.values[in_ids[1]];
      if (c.dtype != DType::kBool || shape_numel(c.shape).value() != 1)
        return invalid_argument(n.describe() + ": cond must be a bool tensor of one element, got " + dtype_name(c.dtype) +
                                shape_to_string(c.shape));
    }
    for (size_t i = 0; i < in_ids.size(); ++i) {
      if (i >= 2 && in_ids[i] < 0)
        return invalid_argument(n.describe() + ": loop-carried input " + std::to_string(i - 2) + " is missing");
      if (in_ids[i] >= 0 && plan_.values[in_ids[i]].home != PlanValue::Home::kConstant) all_const = false;
    }
    if (all_const) {
      bool folded = false;
      TSR_RETURN_IF_ERROR(fold_loop(g, n, scope, in_ids, body, num_carried, num_scan, &folded));
      if (folded) return Status::ok();
    }

    // Run time: the body planned once for the shapes of the first iteration.
    std::vector<DType> dtypes = {DType::kInt64, DType::kBool};
    std::vector<Shape> shapes = {{}, {}};
    for (size_t i = 0; i < num_carried; ++i) {
      dtypes.push_back(plan_.values[in_ids[2 + i]].dtype);
      shapes.push_back(plan_.values[in_ids[2 + i]].shape);
    }
    TSR_ASSIGN_OR_RETURN(BodyPlan bp, plan_body(n, body, scope, dtypes, shapes, nullptr));
    const Plan& p = *bp.plan;
    TSR_RETURN_IF_ERROR(check_loop_body(n, p, dtypes, num_carried));
    for (size_t i = 0; i < num_carried; ++i) {
      const PlanValue& o = p.values[p.outputs[1 + i]];
      if (o.shape != shapes[2 + i])
        return unimplemented(n.describe() + ": loop-carried value " + std::to_string(i) + " is " + shape_to_string(shapes[2 + i]) +
                             " before the body and " + shape_to_string(o.shape) + " after it; a Loop whose loop-carried values " +
                             "change shape needs all its inputs computable before the run (and at most " +
                             std::to_string(kMaxFoldTrips) + " iterations)");
    }
    auto step = std::make_unique<LoopStep>();
    LoopStep& ls = *step;
    ls.trip_count = in_ids[0];
    ls.cond = in_ids[1];
    ls.cond_fixed = cond_is_fixed(p);
    const PlanValue* m = has_m ? &plan_.values[in_ids[0]] : nullptr;
    const PlanValue* c = has_cond ? &plan_.values[in_ids[1]] : nullptr;
    const bool m_known = m && m->home == PlanValue::Home::kConstant;
    const bool c_known = c && c->home == PlanValue::Home::kConstant;
    if (!has_m && ls.cond_fixed && c_known && c->constant->data_as<bool>()[0])
      return invalid_argument(n.describe() + ": no trip count M, cond is true and the body's cond output stays true, "
                                             "so the loop would never end");
    if (num_scan > 0) {
      // The length of the scan outputs is the number of iterations: settled here.
      const int64_t m_value = m_known ? m->constant->data_as<int64_t>()[0] : -1;
      if (c_known && !c->constant->data_as<bool>()[0]) ls.planned_trips = 0;
      else if (m_known && (m_value == 0 || !has_cond || (c_known && ls.cond_fixed))) ls.planned_trips = m_value;
      else
        return unimplemented(n.describe() + ": the number of iterations must be computable before the run (the Loop has " +
                             std::to_string(num_scan) + " scan outputs, whose length it is)");
    }

    Step st;
    st.node = &n;
    st.backend = "cpu";
    st.inputs = in_ids;
    uint64_t off = align64(p.arena_bytes);
    for (size_t i = 0; i < num_carried; ++i) {
      const int id = in_ids[2 + i];
      ls.carried_in.push_back(id);
      ls.carried_bytes.push_back(value_bytes(id));
      for (int b = 0; b < 2; ++b) {
        ls.carried_offset[b].push_back(off);
        off += align64(value_bytes(id));
      }
      int out = add_output(g, n, i, dtypes[2 + i], shapes[2 + i], scope);
      ls.carried_out.push_back(out);
      st.outputs.push_back(out);
    }
    ls.counter_offset = off;
    off += 64;  // int64 iteration number at +0, bool cond at +8
    for (size_t k = 0; k < num_scan; ++k) {
      const PlanValue& o = p.values[p.outputs[1 + num_carried + k]];
      Shape shape = o.shape;
      shape.insert(shape.begin(), ls.planned_trips);
      TSR_RETURN_IF_ERROR(shape_numel(shape).status().with_context(n.describe() + " scan output " + std::to_string(k)));
      ScanSlicing so;
      so.value = add_output(g, n, num_carried + k, o.dtype, shape, scope);
      so.inner_bytes = static_cast<uint64_t>(shape_numel(o.shape).value()) * dtype_size(o.dtype);
      ls.scan_outputs.push_back(so);
      st.outputs.push_back(so.value);
    }
    st.scratch_bytes = off;
    st.loop_step = std::move(step);
    push_loop_step(n, std::move(st), std::move(bp), "body run per iteration");
    return Status::ok();
  }

  /// Scan (ONNX opset 8, 9, 11, 16..21): N state values and M scan inputs; body (N states,
  /// M slices) -> (N states, K scan outputs); outputs the N final states and the K scan
  /// outputs stacked along their scan_output_axes. Opset 8 has a leading batch axis on every
  /// input and output, scans axis 1, and takes sequence_lens (supported only when every
  /// sequence is the full length).
  Status plan_scan(const Graph& g, const Node& n, Scope& scope, const std::vector<int>& in_ids) {
    const std::string d = n.describe();
    const Attribute* nsi = n.find_attr("num_scan_inputs");
    if (!nsi || nsi->type != AttrType::kInt) return invalid_argument(d + ": Scan needs the int attribute num_scan_inputs");
    const bool v8 = n.opset > 0 && n.opset < 9;
    const size_t first = v8 ? 1 : 0;  // Scan-8's input 0 is sequence_lens
    if (in_ids.size() <= first || nsi->i < 1 || nsi->i > static_cast<int64_t>(in_ids.size() - first))
      return invalid_argument(d + ": num_scan_inputs is " + std::to_string(nsi->i) + "; it must be 1.." +
                              std::to_string(in_ids.size() > first ? in_ids.size() - first : 0) + " (the node has " +
                              std::to_string(in_ids.size()) + " inputs)");
    const size_t num_scan_in = static_cast<size_t>(nsi->i);
    const size_t num_state = in_ids.size() - first - num_scan_in;
    if (n.outputs.size() < num_state)
      return invalid_argument(d + ": Scan has " + std::to_string(num_state) + " state inputs but only " +
                              std::to_string(n.outputs.size()) + " outputs");
    const size_t num_scan_out = n.outputs.size() - num_state;
    TSR_ASSIGN_OR_RETURN(const Graph* body_ptr,
                         body_of(n, num_state + num_scan_in, num_state + num_scan_out,
                                 "inputs: " + std::to_string(num_state) + " states, " + std::to_string(num_scan_in) +
                                     " scan slices; outputs: the states, " + std::to_string(num_scan_out) + " scan outputs"));
    const Graph& body = *body_ptr;
    for (size_t i = first; i < in_ids.size(); ++i)
      if (in_ids[i] < 0) return invalid_argument(d + ": input " + std::to_string(i) + " is missing");

    // Attributes: per scan input and output, a direction (0 forward, 1 reverse) and an axis.
    auto list = [&](const char* name, size_t count, int64_t lo, int64_t hi) -> Result<std::vector<int64_t>> {
      const Attribute* a = n.find_attr(name);
      if (!a) return std::vector<int64_t>(count, 0);
      if (a->type != AttrType::kInts) return invalid_argument(d + ": attribute '" + name + "' must be a list of ints");
      if (a->ints.size() != count)
        return invalid_argument(d + ": attribute '" + name + "' has " + std::to_string(a->ints.size()) + " entries; it needs " +
                                std::to_string(count));
      for (int64_t v : a->ints)
        if (v < lo || v > hi)
          return invalid_argument(d + ": attribute '" + name + "' has " + std::to_string(v) + "; it must be in [" +
                                  std::to_string(lo) + ", " + std::to_string(hi) + "]");
      return a->ints;
    };
    std::vector<int64_t> in_dirs, out_dirs, in_axes, out_axes;
    if (v8) {
      TSR_ASSIGN_OR_RETURN(in_dirs, list("directions", num_scan_in, 0, 1));
      out_dirs.assign(num_scan_out, 0);
      in_axes.assign(num_scan_in, 0);
      out_axes.assign(num_scan_out, 0);
    } else {
      TSR_ASSIGN_OR_RETURN(in_dirs, list("scan_input_directions", num_scan_in, 0, 1));
      TSR_ASSIGN_OR_RETURN(out_dirs, list("scan_output_directions", num_scan_out, 0, 1));
      TSR_ASSIGN_OR_RETURN(in_axes, list("scan_input_axes", num_scan_in, INT32_MIN, INT32_MAX));
      TSR_ASSIGN_OR_RETURN(out_axes, list("scan_output_axes", num_scan_out, INT32_MIN, INT32_MAX));
    }

    // Per batch element shapes (Scan-8 drops its batch axis).
    int64_t batch = 1;
    auto element_shape = [&](int id, size_t min_rank, const std::string& what) -> Result<Shape> {
      Shape s = plan_.values[id].shape;
      if (!v8) return s;
      if (s.size() < min_rank + 1)
        return invalid_argument(d + ": " + what + " is " + shape_to_string(s) + "; Scan-8 needs a batch axis" +
                                (min_rank ? " and a sequence axis" : ""));
      if (s[0] != batch)
        return invalid_argument(d + ": " + what + " has batch size " + std::to_string(s[0]) + " but input " +
                                std::to_string(first) + " has " + std::to_string(batch));
      s.erase(s.begin());
      return s;
    };
    if (v8) batch = plan_.values[in_ids[first]].shape.empty() ? 0 : plan_.values[in_ids[first]].shape[0];
    std::vector<DType> dtypes;
    std::vector<Shape> shapes;
    for (size_t i = 0; i < num_state; ++i) {
      TSR_ASSIGN_OR_RETURN(Shape s, element_shape(in_ids[first + i], 0, "state input " + std::to_string(i)));
      dtypes.push_back(plan_.values[in_ids[first + i]].dtype);
      shapes.push_back(std::move(s));
    }
    int64_t length = -1;
    auto step = std::make_unique<LoopStep>();
    LoopStep& ls = *step;
    ls.is_scan = true;
    std::vector<Shape> scan_in_shapes;
    for (size_t j = 0; j < num_scan_in; ++j) {
      const int id = in_ids[first + num_state + j];
      TSR_ASSIGN_OR_RETURN(Shape s, element_shape(id, 1, "scan input " + std::to_string(j)));
      if (s.empty()) return invalid_argument(d + ": scan input " + std::to_string(j) + " is a scalar; it needs an axis to scan");
      TSR_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(in_axes[j], static_cast<int64_t>(s.size()), n));
      if (length >= 0 && s[axis] != length)
        return invalid_argument(d + ": scan input " + std::to_string(j) + " has length " + std::to_string(s[axis]) +
                                " along its scan axis; scan input 0 has " + std::to_string(length));
      length = s[axis];
      ScanSlicing si;
      si.value = id;
      si.reverse = in_dirs[j] != 0;
      const uint64_t es = dtype_size(plan_.values[id].dtype);
      si.inner_bytes = es;
      for (size_t k = 0; k < s.size(); ++k) {
        if (static_cast<int64_t>(k) < axis) si.outer *= s[k];
        if (static_cast<int64_t>(k) > axis) si.inner_bytes *= static_cast<uint64_t>(s[k]);
      }
      if (v8) si.batch_stride = static_cast<uint64_t>(shape_numel(s).value()) * es;
      ls.scan_inputs.push_back(si);
      dtypes.push_back(plan_.values[id].dtype);
      s.erase(s.begin() + axis);
      shapes.push_back(std::move(s));
    }
    if (v8 && in_ids[0] >= 0) {
      const PlanValue& sl = plan_.values[in_ids[0]];
      bool full = sl.home == PlanValue::Home::kConstant && (sl.dtype == DType::kInt64 || sl.dtype == DType::kInt32) &&
                  shape_numel(sl.shape).value() == batch;
      for (int64_t b = 0; full && b < batch; ++b)
        full = (sl.dtype == DType::kInt64 ? sl.constant->data_as<int64_t>()[b] : sl.constant->data_as<int32_t>()[b]) == length;
      if (!full)
        return unimplemented(d + ": sequence_lens must be a constant giving every batch element the full length " +
                             std::to_string(length) + "; shorter sequences are not supported");
    }
    ls.batch = batch;
    ls.scan_length = length;

    TSR_ASSIGN_OR_RETURN(BodyPlan bp, plan_body(n, body, scope, dtypes, shapes, nullptr));
    const Plan& p = *bp.plan;
    Step st;
    st.node = &n;
    st.backend = "cpu";
    st.inputs = in_ids;
    uint64_t off = align64(p.arena_bytes);
    for (size_t i = 0; i < num_state; ++i) {
      const PlanValue& o = p.values[p.outputs[i]];
      if (o.dtype != dtypes[i])
        return invalid_argument(d + ": state " + std::to_string(i) + " comes in as " + dtype_name(dtypes[i]) +
                                " but the body gives " + dtype_name(o.dtype));
      if (o.shape != shapes[i])
        return unimplemented(d + ": state " + std::to_string(i) + " is " + shape_to_string(shapes[i]) + " before the body and " +
                             shape_to_string(o.shape) + " after it; states that change shape are not supported");
      const int id = in_ids[first + i];
      ls.carried_in.push_back(id);
      ls.carried_bytes.push_back(static_cast<uint64_t>(shape_numel(shapes[i]).value()) * dtype_size(dtypes[i]));
      for (int b = 0; b < 2; ++b) {
        ls.carried_offset[b].push_back(off);
        off += align64(ls.carried_bytes.back());
      }
      int out = add_output(g, n, i, dtypes[i], plan_.values[id].shape, scope);
      ls.carried_out.push_back(out);
      st.outputs.push_back(out);
    }
    for (ScanSlicing& si : ls.scan_inputs) {
      if (si.outer == 1) continue;  // a slice is contiguous: the body reads it in place
      si.slice_offset = off;
      off += align64(static_cast<uint64_t>(si.outer) * si.inner_bytes);
    }
    for (size_t k = 0; k < num_scan_out; ++k) {
      const PlanValue& o = p.values[p.outputs[num_state + k]];
      TSR_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(out_axes[k], static_cast<int64_t>(o.shape.size()) + 1, n));
      Shape shape = o.shape;
      shape.insert(shape.begin() + axis, length);
      ScanSlicing so;
      so.reverse = out_dirs[k] != 0;
      so.inner_bytes = dtype_size(o.dtype);
      for (size_t q = 0; q < o.shape.size(); ++q) {
        if (static_cast<int64_t>(q) < axis) so.outer *= o.shape[q];
        else so.inner_bytes *= static_cast<uint64_t>(o.shape[q]);
      }
      Result<int64_t> elems = shape_numel(shape);
      TSR_RETURN_IF_ERROR(elems.status().with_context(d + " scan output " + std::to_string(k)));
      if (v8) {
        so.batch_stride = static_cast<uint64_t>(elems.value()) * dtype_size(o.dtype);
        shape.insert(shape.begin(), batch);
        TSR_RETURN_IF_ERROR(shape_numel(shape).status().with_context(d + " scan output " + std::to_string(k)));
      }
      so.value = add_output(g, n, num_state + k, o.dtype, shape, scope);
      ls.scan_outputs.push_back(so);
      st.outputs.push_back(so.value);
    }
    st.scratch_bytes = off;
    st.loop_step = std::move(step);
    push_loop_step(n, std::move(st), std::move(bp), "body run " + std::to_string(length) + " times" +
                                                        (v8 ? " per batch element" : ""));
    return Status::ok();
  }

  const PlanOptions& opt_;
  PlanOptions host_opt_;          // opt_ without device backends: for sub-plans
  Backend* device_ = nullptr;     // the device backend of this plan (top level only)
  const Node* current_node_ = nullptr;  // the node being planned (copy steps report it)
  std::unordered_map<int, int> to_blocked_, to_plain_;  // to_layout's conversions
  std::unordered_map<int, int> to_device_, to_host_;  // value id -> its copy
  Plan& plan_;
  std::unordered_set<const Node*> absorbed_;      // nodes fused into an earlier step
  std::unordered_map<const Graph*, Uses> uses_;   // per graph, made on first use
  Planner* parent_;
  Scope* parent_scope_;
  std::vector<int>* outer_bindings_;
  int depth_;
};

Status Planner::finish() {
  const int nsteps = static_cast<int>(plan_.steps.size());
  const size_t nv = plan_.values.size();
  std::vector<int> first(nv, -1), last(nv, -1);
  for (int s = 0; s < nsteps; ++s) {
    const Step& st = plan_.steps[s];
    for (int id : st.outputs)
      if (id >= 0 && first[id] < 0) first[id] = s;
    auto use = [&](int id) {
      if (id >= 0) last[id] = std::max(last[id], s);
    };
    for (int id : st.inputs) use(id);
    if (st.if_step)
      for (int k = 0; k < 2; ++k)
        for (int id : st.if_step->outer_bindings[k]) use(id);
    if (st.loop_step)
      for (int id : st.loop_step->outer_bindings) use(id);
  }
  for (int id : plan_.outputs) last[id] = nsteps;

  // In place: a step's output takes over the block of the input its kernel accumulates
  // onto (Step::inplace_input) when that input dies at this step, is not read twice by it
  // and has the same host-arena size. share[o] = the value whose block o uses (chains
  // follow: a residual block can carry several outputs in turn); that block lives on to o's
  // last use.
  std::vector<int> share(nv);
  for (size_t i = 0; i < nv; ++i) share[i] = static_cast<int>(i);
  for (int s = 0; s < nsteps; ++s) {
    const Step& st = plan_.steps[s];
    if (st.inplace_input < 0 || static_cast<size_t>(st.inplace_input) >= st.inputs.size() || st.outputs.empty())
      continue;
    const int r = st.inputs[static_cast<size_t>(st.inplace_input)], o = st.outputs[0];
    if (r < 0 || o < 0 || last[r] != s || first[o] != s) continue;
    const PlanValue& rv = plan_.values[static_cast<size_t>(r)];
    const PlanValue& ov = plan_.values[static_cast<size_t>(o)];
    if (rv.home != PlanValue::Home::kArena || ov.home != PlanValue::Home::kArena || rv.device || ov.device ||
        rv.bytes != ov.bytes || rv.dtype != ov.dtype)
      continue;
    if (std::count(st.inputs.begin(), st.inputs.end(), r) != 1) continue;
    const int root = share[static_cast<size_t>(r)];
    share[static_cast<size_t>(o)] = root;
    last[root] = std::max(last[root], last[o]);
  }

  // Blocks to place: arena values and per-step scratch. (start, end) are step indices.
  struct Block {
    uint64_t bytes;
    int start, end;
    uint64_t* offset;
  };
  // Host and device memory are two arenas, each placed the same way.
  std::vector<Block> blocks, device_blocks;
  for (size_t i = 0; i < nv; ++i) {
    PlanValue& v = plan_.values[i];
    if (v.home != PlanValue::Home::kArena || share[i] != static_cast<int>(i)) continue;
    int s = first[i] < 0 ? 0 : first[i];
    (v.device ? device_blocks : blocks).push_back({align64(v.bytes), s, std::max(s, last[i]), &v.offset});
  }
  for (int s = 0; s < nsteps; ++s) {
    Step& st = plan_.steps[s];
    if (st.scratch_bytes)
      (st.on_device ? device_blocks : blocks).push_back({align64(st.scratch_bytes), s, s, &st.scratch_offset});
  }
  auto place_blocks = [](std::vector<Block>& bl) {
    std::stable_sort(bl.begin(), bl.end(), [](const Block& a, const Block& b) { return a.bytes > b.bytes; });
    std::vector<const Block*> placed;
    uint64_t peak = 0;
    for (Block& b : bl) {
      // Lowest offset that does not collide with a placed block alive at the same time.
      std::vector<std::pair<uint64_t, uint64_t>> busy;
      for (const Block* p : placed)
        if (p->start <= b.end && b.start <= p->end) busy.emplace_back(*p->offset, *p->offset + p->bytes);
      std::sort(busy.begin(), busy.end());
      uint64_t off = 0;
      for (const auto& [lo, hi] : busy) {
        if (off + b.bytes <= lo) break;
        off = std::max(off, hi);
      }
      *b.offset = off;
      peak = std::max(peak, off + b.bytes);
      placed.push_back(&b);
    }
    return peak;
  };
  plan_.arena_bytes = place_blocks(blocks);
  for (size_t i = 0; i < nv; ++i)
    if (share[i] != static_cast<int>(i)) plan_.values[i].offset = plan_.values[static_cast<size_t>(share[i])].offset;
  if (device_) {
    plan_.device_arena_bytes = align256(place_blocks(device_blocks));
    uint64_t off = plan_.device_arena_bytes;  // constants follow the activations
    for (const DeviceConstant& dc : plan_.device_constants) {
      PlanValue& v = plan_.values[dc.device];
      v.offset = off;
      off += align256(v.bytes);
    }
    plan_.device_bytes = off;
    // Every node fell back to host backends: the plan needs no device memory at all.
    if (plan_.device_bytes == 0) plan_.device = nullptr;
  }

  // Views and kernel contexts, built once.
  plan_.views.resize(nv);
  for (size_t i = 0; i < nv; ++i) {
    const PlanValue& v = plan_.values[i];
    void* data = v.home == PlanValue::Home::kConstant ? const_cast<void*>(v.constant->data()) : nullptr;
    // An NCHW16c value's view has the storage's shape [N, C/16, spatial..., 16]: kernels
    // that take it as it is (the elementwise ops of plan_nchwc_elementwise) see the padding
    // lanes as elements.
    plan_.views[i] = Tensor::wrap(v.dtype, v.nchwc ? nchwc_storage_shape(v.shape) : v.shape, data);
  }
  for (Step& st : plan_.steps) {
    for (int id : st.inputs) st.ctx.inputs.push_back(id < 0 ? nullptr : &plan_.views[id]);
    for (int id : st.outputs) st.ctx.outputs.push_back(id < 0 ? nullptr : &plan_.views[id]);
    st.ctx.thread_pool = opt_.thread_pool;
    if (st.if_step)
      st.if_step->outer_scratch.resize(std::max(st.if_step->outer_bindings[0].size(), st.if_step->outer_bindings[1].size()));
    if (st.loop_step) st.loop_step->outer_scratch.resize(st.loop_step->outer_bindings.size());
  }
  return Status::ok();
}

}  // namespace

bool needs_input_values(const Status& s) {
  return s.code() == StatusCode::kUnimplemented && s.message().find("before the run") != std::string::npos;
}

Result<std::unique_ptr<Plan>> plan_graph(const Graph& graph, const std::vector<Shape>& input_shapes,
                                         const PlanOptions& options, const std::vector<const Tensor*>* input_values) {
  if (input_values && input_values->size() != input_shapes.size())
    return internal_error("plan_graph: input_values and input_shapes differ in length");
  auto plan = std::make_unique<Plan>();
  Planner p(options, *plan);
  Scope root;
  TSR_RETURN_IF_ERROR(p.plan_inputs(graph, input_shapes, root, input_values));
  TSR_RETURN_IF_ERROR(p.plan_nodes(graph, root));
  TSR_RETURN_IF_ERROR(p.plan_outputs(graph, root));
  TSR_RETURN_IF_ERROR(p.finish());
  if (plan->device) {  // the device segments (Plan::segment_end)
    const size_t n = plan->steps.size();
    plan->segment_end.assign(n, 0);
    plan->segment_graphs.resize(n);
    auto on_device = [&](size_t i) { return plan->steps[i].on_device && plan->steps[i].kernel; };
    for (size_t i = 0; i < n;) {
      size_t j = i;
      while (j < n && on_device(j)) ++j;
      if (j - i >= 2) plan->segment_end[i] = j;
      i = j > i ? j : i + 1;
    }
  }
  return plan;
}

}  // namespace tessera
