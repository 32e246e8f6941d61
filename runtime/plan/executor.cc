// The executor: binds the run's bytes to the plan's views and runs the steps in order.
// It allocates nothing: views and kernel contexts were built by the planner.
#include <cstring>

#include "runtime/plan/plan.h"

namespace tessera {

namespace {

void* home_of(const Plan& plan, const PlanValue& v, uint8_t* arena, const std::vector<const Tensor*>& inputs,
              const std::vector<const Tensor*>& outer) {
  switch (v.home) {
    case PlanValue::Home::kConstant: return const_cast<void*>(v.constant->data());
    case PlanValue::Home::kInput: return const_cast<void*>(inputs[v.index]->data());
    case PlanValue::Home::kOuter: return const_cast<void*>(outer[v.index]->data());
    case PlanValue::Home::kArena: return arena + v.offset;
  }
  return nullptr;
}

}  // namespace

Tensor plan_value_view(const Plan& plan, int id, uint8_t* arena, const std::vector<const Tensor*>& inputs,
                       const std::vector<const Tensor*>& outer) {
  const PlanValue& v = plan.values[id];
  return Tensor::wrap(v.dtype, v.shape, home_of(plan, v, arena, inputs, outer));
}

Status execute_plan(const Plan& plan, uint8_t* arena, const std::vector<const Tensor*>& inputs,
                    const std::vector<const Tensor*>& outer) {
  if (inputs.size() != plan.inputs.size()) return internal_error("execute_plan: wrong number of inputs");
  if (outer.size() != plan.outer.size()) return internal_error("execute_plan: wrong number of outer bindings");
  for (size_t i = 0; i < plan.values.size(); ++i)
    plan.views[i].set_data(home_of(plan, plan.values[i], arena, inputs, outer));

  for (const Step& st : plan.steps) {
    st.ctx.scratch = arena + st.scratch_offset;
    if (st.kernel) {
      Status s = st.kernel->run(st.ctx);
      if (!s.is_ok()) return s.with_context(st.node->describe());
      continue;
    }
    const IfStep& ifs = *st.if_step;
    int k = plan.views[ifs.cond].data_as<bool>()[0] ? 1 : 0;
    if (!ifs.branch[k]) return ifs.branch_error[k];
    const Plan& branch = *ifs.branch[k];
    const std::vector<int>& binds = ifs.outer_bindings[k];
    ifs.outer_scratch.resize(binds.size());
    for (size_t i = 0; i < binds.size(); ++i) ifs.outer_scratch[i] = &plan.views[binds[i]];
    static const std::vector<const Tensor*> kNoInputs;
    TSR_RETURN_IF_ERROR(execute_plan(branch, arena + st.scratch_offset, kNoInputs, ifs.outer_scratch)
                            .with_context(st.node->describe()));
    for (size_t i = 0; i < st.outputs.size(); ++i) {
      if (st.outputs[i] < 0) continue;
      const Tensor& src = branch.views[branch.outputs[i]];
      Tensor& dst = plan.views[st.outputs[i]];
      if (src.nbytes()) std::memmove(dst.data(), src.data(), src.nbytes());
    }
  }
  return Status::ok();
}

}  // namespace tessera
