// The executor: binds the run's bytes to the plan's views and runs the steps in order.
// It allocates nothing: views and kernel contexts were built by the planner.
#include <chrono>
#include <cstring>
#include <string>

#include "runtime/plan/plan.h"

namespace tessera {

namespace {

void* home_of(const Plan& plan, const PlanValue& v, uint8_t* arena, const std::vector<const Tensor*>& inputs,
              const std::vector<const Tensor*>& outer) {
  switch (v.home) {
    case PlanValue::Home::kConstant: return const_cast<void*>(v.constant->data());
    case PlanValue::Home::kInput: return const_cast<void*>(inputs[v.index]->data());
    case PlanValue::Home::kOuter: return const_cast<void*>(outer[v.index]->data());
    case PlanValue::Home::kArena: return (v.device ? plan.device_arena : arena) + v.offset;
    case PlanValue::Home::kDeviceConstant: return plan.device_arena + v.offset;
  }
  return nullptr;
}

/// Runs a Loop or Scan step (see LoopStep): per iteration, points the body's inputs at the
/// current loop-carried buffers and scan slices, runs the body plan, copies its loop-carried
/// outputs into the other buffers and its scan outputs into the node's outputs.
/// Semantics: ONNX Loop-11..21 and Scan-8..21.
Status run_loop(const Plan& plan, const Step& st, uint8_t* arena) {
  const LoopStep& ls = *st.loop_step;
  const Plan& body = *ls.body;
  auto where = [&] { return st.node->describe(); };  // only on errors: a run allocates nothing
  uint8_t* scratch = arena + st.scratch_offset;
  uint8_t* body_arena = scratch + ls.body_arena_offset;
  auto bytes_of = [&](int id) { return static_cast<uint8_t*>(plan.views[id].data()); };
  for (size_t i = 0; i < ls.outer_bindings.size(); ++i) ls.outer_scratch[i] = &plan.views[ls.outer_bindings[i]];
  const size_t n_carried = ls.carried_in.size();
  const size_t carried_in0 = ls.is_scan ? 0 : 2;   // body inputs: [iteration, cond,] carried..., slices...
  const size_t carried_out0 = ls.is_scan ? 0 : 1;  // body outputs: [cond,] carried..., scan outputs...

  // One iteration with the loop-carried values in buffer set `p`; leaves them in set 1 - p.
  auto run_body = [&](int p, int64_t t) -> Status {
    for (size_t i = 0; i < n_carried; ++i) ls.body_inputs[carried_in0 + i].set_data(scratch + ls.carried_offset[p][i]);
    Status s = execute_plan(body, body_arena, ls.body_input_ptrs, ls.outer_scratch);
    if (!s.is_ok()) return s.with_context(where() + " iteration " + std::to_string(t));
    for (size_t i = 0; i < n_carried; ++i)
      if (ls.carried_bytes[i])
        std::memmove(scratch + ls.carried_offset[1 - p][i], body.views[body.outputs[carried_out0 + i]].data(), ls.carried_bytes[i]);
    return Status::ok();
  };
  // Scan output k of iteration t goes to slice t (or length-1-t) of the node's output k.
  auto write_scan_outputs = [&](int64_t t, int64_t length, int64_t batch_index) {
    for (size_t k = 0; k < ls.scan_outputs.size(); ++k) {
      const ScanSlicing& so = ls.scan_outputs[k];
      if (so.value < 0 || so.inner_bytes == 0) continue;
      const uint8_t* src = static_cast<const uint8_t*>(body.views[body.outputs[carried_out0 + n_carried + k]].data());
      uint8_t* dst = bytes_of(so.value) + batch_index * so.batch_stride;
      const int64_t idx = so.reverse ? length - 1 - t : t;
      for (int64_t o = 0; o < so.outer; ++o)
        std::memcpy(dst + (o * length + idx) * so.inner_bytes, src + o * so.inner_bytes, so.inner_bytes);
    }
  };
  auto load_carried = [&](int64_t b) {
    for (size_t i = 0; i < n_carried; ++i)
      if (ls.carried_bytes[i])
        std::memmove(scratch + ls.carried_offset[0][i], bytes_of(ls.carried_in[i]) + b * ls.carried_bytes[i], ls.carried_bytes[i]);
  };
  auto store_carried = [&](int p, int64_t b) {
    for (size_t i = 0; i < n_carried; ++i)
      if (ls.carried_out[i] >= 0 && ls.carried_bytes[i])
        std::memmove(bytes_of(ls.carried_out[i]) + b * ls.carried_bytes[i], scratch + ls.carried_offset[p][i], ls.carried_bytes[i]);
  };

  if (!ls.is_scan) {
    const bool has_m = ls.trip_count >= 0;
    const int64_t m = has_m ? plan.views[ls.trip_count].data_as<int64_t>()[0] : -1;
    if (has_m && m < 0) return invalid_argument(where() + ": the trip count M is " + std::to_string(m) + "; it must not be negative");
    bool cond = ls.cond >= 0 ? plan.views[ls.cond].data_as<bool>()[0] : true;
    if (!has_m && ls.cond_fixed && cond)
      return invalid_argument(where() + ": no trip count M, cond is true and the body's cond output stays true, so the loop "
                                      "would never end");
    auto* iter = reinterpret_cast<int64_t*>(scratch + ls.counter_offset);
    auto* cond_in = reinterpret_cast<bool*>(scratch + ls.counter_offset + 8);
    ls.body_inputs[0].set_data(iter);
    ls.body_inputs[1].set_data(cond_in);
    load_carried(0);
    int p = 0;
    int64_t t = 0;
    for (; (!has_m || t < m) && cond; ++t) {
      if (ls.planned_trips >= 0 && t >= ls.planned_trips)
        return internal_error(where() + ": runs more iterations than the " + std::to_string(ls.planned_trips) + " planned");
      *iter = t;
      *cond_in = cond;
      TSR_RETURN_IF_ERROR(run_body(p, t));
      // Without a cond input the body's cond output is ignored (ONNX Loop: "for" form).
      if (ls.cond >= 0) cond = body.views[body.outputs[0]].data_as<bool>()[0];
      write_scan_outputs(t, ls.planned_trips, 0);
      p = 1 - p;
    }
    if (ls.planned_trips >= 0 && t != ls.planned_trips)
      return internal_error(where() + ": ran " + std::to_string(t) + " iterations; " + std::to_string(ls.planned_trips) + " were planned");
    store_carried(p, 0);
    return Status::ok();
  }

  const int64_t length = ls.scan_length;
  for (int64_t b = 0; b < ls.batch; ++b) {
    load_carried(b);
    int p = 0;
    for (int64_t t = 0; t < length; ++t) {
      for (size_t j = 0; j < ls.scan_inputs.size(); ++j) {
        const ScanSlicing& si = ls.scan_inputs[j];
        const int64_t idx = si.reverse ? length - 1 - t : t;
        uint8_t* base = bytes_of(si.value) + b * si.batch_stride;
        uint8_t* slice = base + idx * si.inner_bytes;
        if (si.outer != 1) {
          slice = scratch + si.slice_offset;
          for (int64_t o = 0; o < si.outer; ++o)
            std::memcpy(slice + o * si.inner_bytes, base + (o * length + idx) * si.inner_bytes, si.inner_bytes);
        }
        ls.body_inputs[n_carried + j].set_data(slice);
      }
      TSR_RETURN_IF_ERROR(run_body(p, t));
      write_scan_outputs(t, length, b);
      p = 1 - p;
    }
    store_carried(p, b);
  }
  return Status::ok();
}

/// Runs one step of `plan`: a kernel, a Loop/Scan, or an If.
Status run_step(const Plan& plan, const Step& st, uint8_t* arena) {
  st.ctx.scratch = (st.on_device ? plan.device_arena : arena) + st.scratch_offset;
  if (st.kernel) {
    Status s = st.kernel->run(st.ctx);
    return s.is_ok() ? s : s.with_context(st.node->describe());
  }
  if (st.loop_step) return run_loop(plan, st, arena);
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
  return Status::ok();
}

}  // namespace

Status bind_device_arena(const Plan& plan, uint8_t* device_buffer) {
  if (!plan.device) return Status::ok();
  if (!device_buffer && plan.device_bytes) return internal_error("bind_device_arena: no device buffer");
  for (const DeviceConstant& dc : plan.device_constants) {
    const PlanValue& h = plan.values[dc.host];
    const PlanValue& d = plan.values[dc.device];
    if (d.bytes == 0) continue;
    TSR_RETURN_IF_ERROR(plan.device->copy_to_device(device_buffer + d.offset, h.constant->data(), d.bytes)
                            .with_context("uploading constant '" + h.name + "'"));
  }
  TSR_RETURN_IF_ERROR(plan.device->synchronize());
  plan.device_arena = device_buffer;
  return Status::ok();
}

Tensor plan_value_view(const Plan& plan, int id, uint8_t* arena, const std::vector<const Tensor*>& inputs,
                       const std::vector<const Tensor*>& outer) {
  const PlanValue& v = plan.values[id];
  return Tensor::wrap(v.dtype, v.shape, home_of(plan, v, arena, inputs, outer));
}

void set_plan_profiling(Plan& plan, bool on) {
  plan.profiling = on;
  plan.step_ns.assign(plan.steps.size(), 0);
  plan.profiled_runs = 0;
  for (Step& st : plan.steps) {
    if (st.if_step)
      for (auto& b : st.if_step->branch)
        if (b) set_plan_profiling(*b, on);
    if (st.loop_step && st.loop_step->body) set_plan_profiling(*st.loop_step->body, on);
  }
}

Status execute_plan(const Plan& plan, uint8_t* arena, const std::vector<const Tensor*>& inputs,
                    const std::vector<const Tensor*>& outer) {
  if (inputs.size() != plan.inputs.size()) return internal_error("execute_plan: wrong number of inputs");
  if (outer.size() != plan.outer.size()) return internal_error("execute_plan: wrong number of outer bindings");
  for (size_t i = 0; i < plan.values.size(); ++i)
    plan.views[i].set_data(home_of(plan, plan.values[i], arena, inputs, outer));

  if (plan.device && !plan.device_arena) return internal_error("execute_plan: the plan's device arena is not bound");
  if (plan.profiling) ++plan.profiled_runs;
  // A device segment: its steps, for Backend::run_recorded (one pointer captured, so the
  // std::function holds it without allocating).
  struct Segment {
    const Plan* plan;
    uint8_t* arena;
    size_t first, end;
  } seg{&plan, arena, 0, 0};
  auto run_segment = [&seg]() -> Status {
    for (size_t j = seg.first; j < seg.end; ++j) TSR_RETURN_IF_ERROR(run_step(*seg.plan, seg.plan->steps[j], seg.arena));
    return Status::ok();
  };
  for (size_t si = 0; si < plan.steps.size(); ++si) {
    const Step& st = plan.steps[si];
    if (!plan.profiling && !plan.segment_end.empty() && plan.segment_end[si]) {
      seg.first = si;
      seg.end = plan.segment_end[si];
      TSR_RETURN_IF_ERROR(plan.device->run_recorded(plan.segment_graphs[si], run_segment));
      si = seg.end - 1;
      continue;
    }
    if (!plan.profiling) {
      TSR_RETURN_IF_ERROR(run_step(plan, st, arena));
      continue;
    }
    auto t0 = std::chrono::steady_clock::now();
    Status s = run_step(plan, st, arena);
    // A device step only enqueues its work: wait for it, so that its time is its own.
    if (s.is_ok() && plan.device) s = plan.device->synchronize();
    plan.step_ns[si] += static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count());
    TSR_RETURN_IF_ERROR(s);
  }
  return Status::ok();
}

}  // namespace tessera
