// x86 LayerNormalization (ONNX LayerNormalization-17), float32: rows of
// inner = prod(X.shape[axis:]) elements, Scale (and B) of exactly `inner` elements (the
// normalized shape; other suffix broadcasts decline to ref/layer_normalization.cc), the
// optional Mean and InvStdDev outputs (one float per row). Float two-pass statistics instead
// of the reference's double: error within 2^-20 * (|x - mean| * inv_std * |scale| + |B| + 1)
// for rows up to 4 Ki (tests/unit/x86_norm_test.cc). Rows split over the plan's threads.
// Math: softmax_x86.h (LayerNormArgs).
#include <memory>

#include "backends/cpu/x86/isa_x86.h"
#include "backends/cpu/x86/parallel_x86.h"
#include "backends/cpu/x86/softmax_x86.h"
#include "backends/cpu/x86/x86_kernels.h"

namespace tessera::x86 {

Result<std::unique_ptr<Kernel>> make_LayerNormalization(const CompileContext& ctx) {
  const Isa isa = best_isa();
  if (isa == Isa::kScalar || !ctx.has_input(0) || !ctx.has_input(1) || ctx.input(0).dtype != DType::kFloat32 ||
      ctx.input(1).dtype != DType::kFloat32 || (ctx.has_input(2) && ctx.input(2).dtype != DType::kFloat32))
    return std::unique_ptr<Kernel>();
  const Shape& xs = ctx.input(0).shape;
  const int64_t rank = static_cast<int64_t>(xs.size());
  int64_t axis = ctx.node.attr_i("axis", -1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return std::unique_ptr<Kernel>();  // the reference reports it
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i) (i < axis ? outer : inner) *= xs[static_cast<size_t>(i)];
  auto numel = [](const Shape& s) {
    int64_t n = 1;
    for (int64_t d : s) n *= d;
    return n;
  };
  const bool has_b = ctx.has_input(2);
  if (inner == 0 || outer == 0 || numel(ctx.input(1).shape) != inner || (has_b && numel(ctx.input(2).shape) != inner))
    return std::unique_ptr<Kernel>();
  auto wants = [&](size_t i) { return ctx.node.outputs.size() > i && ctx.node.outputs[i] >= 0; };
  const bool want_mean = wants(1), want_inv = wants(2);
  const float epsilon = ctx.node.attr_f("epsilon", 1e-5f);
  const int threads = ctx.threads;
  return make_fn_kernel([=](const KernelContext& k) {
    LayerNormArgs a;
    a.x = k.input(0).data_as<float>();
    a.scale = k.input(1).data_as<float>();
    a.bias = has_b ? k.input(2).data_as<float>() : nullptr;
    a.y = k.output(0).data_as<float>();
    a.mean_out = want_mean && k.outputs.size() > 1 && k.outputs[1] ? k.output(1).data_as<float>() : nullptr;
    a.inv_std_out = want_inv && k.outputs.size() > 2 && k.outputs[2] ? k.output(2).data_as<float>() : nullptr;
    a.n = inner;
    a.epsilon = epsilon;
    run_slots(k.thread_pool, threads_for(4 * outer * inner, threads), outer, [&](int64_t, int64_t b, int64_t e) {
      TSR_ISA_DISPATCH(isa, layer_norm(a, b, e));
    });
    return Status::ok();
  });
}

}  // namespace tessera::x86
