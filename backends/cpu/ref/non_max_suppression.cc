// NonMaxSuppression reference kernel (runtime/ops/non_max_suppression.cc): resolves the
// parameters from the run's inputs and runs the shared non_max_suppression(), which writes
// selected_indices [count, 3] directly; the count must be the one planned (the plan is keyed
// on the input values).
#include "backends/cpu/ref/ref_kernels.h"
#include "runtime/ops/non_max_suppression.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_NonMaxSuppression(const CompileContext& ctx) {
  const Node node = ctx.node;
  const int64_t planned = ctx.outputs[0].shape[0];
  const int64_t num_boxes = ctx.input(0).shape[1];
  // order and kept (see non_max_suppression()).
  const size_t scratch = static_cast<size_t>(num_boxes) * 2 * sizeof(int64_t);
  return make_fn_kernel(
      [=](const KernelContext& k) -> Status {
        auto opt = [&](size_t i) { return k.has_input(i) ? &k.input(i) : nullptr; };
        TSR_ASSIGN_OR_RETURN(NmsParams p, nms_params(node, k.input(0), k.input(1), opt(2), opt(3), opt(4)));
        const int64_t n = non_max_suppression(k.input(0).data_as<float>(), k.input(1).data_as<float>(), p,
                                              k.output(0).data_as<int64_t>(), planned, static_cast<int64_t*>(k.scratch));
        if (n != planned)
          return internal_error("NonMaxSuppression: " + std::to_string(n) + " boxes selected, " + std::to_string(planned) +
                                " planned (the inputs changed since planning)");
        return Status::ok();
      },
      scratch);
}

}  // namespace tessera::ref
