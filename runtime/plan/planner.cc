// The planner: shape inference with concrete input shapes, plan-time folding of shape
// computations, backend choice per node, and the memory plan (liveness-based reuse of one
// arena, greedy by size as in TFLite's arena planner).
#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "runtime/plan/evaluate.h"
#include "runtime/plan/plan.h"

namespace tessera {

namespace {

uint64_t align64(uint64_t x) { return (x + 63) / 64 * 64; }

struct Scope {
  std::unordered_map<std::string, int> names;  // value name -> plan value id
  Scope* parent = nullptr;
};

class Planner {
 public:
  Planner(const PlanOptions& opt, Plan& plan, Planner* parent = nullptr, Scope* parent_scope = nullptr,
          std::vector<int>* outer_bindings = nullptr, int depth = 0)
      : opt_(opt), plan_(plan), parent_(parent), parent_scope_(parent_scope), outer_bindings_(outer_bindings),
        depth_(depth) {}

  Status plan_inputs(const Graph& g, const std::vector<Shape>& shapes, Scope& scope,
                     const std::vector<const Tensor*>* values) {
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
      if (dtype_size(v.dtype) == 0)
        return unimplemented("input '" + v.name + "' has unsupported dtype " + dtype_name(v.dtype));
      PlanValue pv;
      pv.name = v.name;
      pv.dtype = v.dtype;
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
    for (const Node& n : g.nodes) TSR_RETURN_IF_ERROR(plan_node(g, n, scope));
    return Status::ok();
  }

  Status plan_outputs(const Graph& g, Scope& scope) {
    for (int o : g.outputs) {
      TSR_ASSIGN_OR_RETURN(int id, lookup(g.values[o].name, scope));
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

  Result<int> lookup(const std::string& name, Scope& scope) {
    for (Scope* s = &scope; s; s = s->parent) {
      auto it = s->names.find(name);
      if (it != s->names.end()) return it->second;
    }
    if (parent_) {
      TSR_ASSIGN_OR_RETURN(int pid, parent_->lookup(name, *parent_scope_));
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

  Status plan_node(const Graph& g, const Node& n, Scope& scope) {
    std::vector<int> in_ids;
    for (int i : n.inputs) {
      if (i < 0) {
        in_ids.push_back(-1);
        continue;
      }
      TSR_ASSIGN_OR_RETURN(int id, lookup(g.values[i].name, scope));
      in_ids.push_back(id);
    }
    if ((n.domain.empty() || n.domain == "ai.onnx") && n.op_type == "If") return plan_if(g, n, scope, in_ids);

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

    Step step;
    step.node = &n;
    step.inputs = in_ids;
    CompileContext cctx{n, in_ptrs, out_info};
    for (Backend* b : opt_.backends) {
      if (!b->supports(cctx)) continue;
      TSR_ASSIGN_OR_RETURN(step.kernel, b->compile(cctx));
      step.backend = b->name();
      break;
    }
    if (!step.kernel)
      return unimplemented(n.describe() + ": no backend can run op " + n.op_type + " with these inputs");
    step.scratch_bytes = step.kernel->scratch_bytes();
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      if (n.outputs[i] < 0) {
        step.outputs.push_back(-1);
        continue;
      }
      PlanValue pv;
      pv.name = g.values[n.outputs[i]].name;
      pv.dtype = out_info[i].dtype;
      pv.shape = out_info[i].shape;
      pv.home = PlanValue::Home::kArena;
      pv.bytes = static_cast<uint64_t>(shape_numel(pv.shape).value()) * dtype_size(pv.dtype);
      int id = add_value(std::move(pv));
      scope.names[plan_.values[id].name] = id;
      step.outputs.push_back(id);
    }
    plan_.placements.push_back(std::string(depth_ * 2, ' ') + n.describe() + " -> " + step.backend);
    plan_.steps.push_back(std::move(step));
    return Status::ok();
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
      Planner sub(opt_, *sub_plan, this, &scope, &bindings, depth_ + 1);
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

  const PlanOptions& opt_;
  Plan& plan_;
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
  }
  for (int id : plan_.outputs) last[id] = nsteps;

  // Blocks to place: arena values and per-step scratch. (start, end) are step indices.
  struct Block {
    uint64_t bytes;
    int start, end;
    uint64_t* offset;
  };
  std::vector<Block> blocks;
  for (size_t i = 0; i < nv; ++i) {
    PlanValue& v = plan_.values[i];
    if (v.home != PlanValue::Home::kArena) continue;
    int s = first[i] < 0 ? 0 : first[i];
    blocks.push_back({align64(v.bytes), s, std::max(s, last[i]), &v.offset});
  }
  for (int s = 0; s < nsteps; ++s) {
    Step& st = plan_.steps[s];
    if (st.scratch_bytes) blocks.push_back({align64(st.scratch_bytes), s, s, &st.scratch_offset});
  }
  std::stable_sort(blocks.begin(), blocks.end(), [](const Block& a, const Block& b) { return a.bytes > b.bytes; });
  std::vector<const Block*> placed;
  uint64_t peak = 0;
  for (Block& b : blocks) {
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
  plan_.arena_bytes = peak;

  // Views and kernel contexts, built once.
  plan_.views.resize(nv);
  for (size_t i = 0; i < nv; ++i) {
    const PlanValue& v = plan_.values[i];
    void* data = v.home == PlanValue::Home::kConstant ? const_cast<void*>(v.constant->data()) : nullptr;
    plan_.views[i] = Tensor::wrap(v.dtype, v.shape, data);
  }
  for (Step& st : plan_.steps) {
    for (int id : st.inputs) st.ctx.inputs.push_back(id < 0 ? nullptr : &plan_.views[id]);
    for (int id : st.outputs) st.ctx.outputs.push_back(id < 0 ? nullptr : &plan_.views[id]);
    if (st.if_step)
      st.if_step->outer_scratch.resize(std::max(st.if_step->outer_bindings[0].size(), st.if_step->outer_bindings[1].size()));
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
  return plan;
}

}  // namespace tessera
