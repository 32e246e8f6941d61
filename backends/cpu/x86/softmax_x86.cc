// x86 Softmax and LogSoftmax (ONNX Softmax-1/11/13, LogSoftmax-1/11/13), float32: the
// [outer, axis_len, inner] view of softmax_layout (the reference's, ref/softmax_common.h),
// rows split over the plan's threads. Math and error: softmax_x86.h (exp: vec_math.h).
// Against the reference (double sums and exp): softmax within (8 + axis_len / 8) * 2^-23
// relative, logsoftmax within 2^-20 * (|x - m| + |log s| + 1) absolute
// (tests/unit/x86_softmax_test.cc). Declines other dtypes and CPUs without AVX2+FMA.
#include <memory>

#include "backends/cpu/x86/isa_x86.h"
#include "backends/cpu/x86/parallel_x86.h"
#include "backends/cpu/x86/softmax_x86.h"
#include "backends/cpu/x86/x86_kernels.h"
#include "runtime/ops/softmax_layout.h"

namespace tessera::x86 {

namespace {

Result<std::unique_ptr<Kernel>> make_softmax(const CompileContext& ctx, bool log) {
  const Isa isa = best_isa();
  if (isa == Isa::kScalar || !ctx.has_input(0) || ctx.input(0).dtype != DType::kFloat32)
    return std::unique_ptr<Kernel>();
  TSR_ASSIGN_OR_RETURN(SoftmaxLayout l, softmax_layout(ctx.node, ctx.input(0).shape));
  if (l.outer * l.axis_len * l.inner == 0) return std::unique_ptr<Kernel>();
  const int threads = ctx.threads;
  return make_fn_kernel([=](const KernelContext& k) {
    SoftmaxArgs a;
    a.x = k.input(0).data_as<float>();
    a.y = k.output(0).data_as<float>();
    a.n = l.axis_len;
    a.inner = l.inner;
    a.log = log;
    // exp costs about 8 flops per element: a thread per 4 Ki elements.
    const int slots = threads_for(8 * l.outer * l.axis_len * l.inner, threads);
    run_slots(k.thread_pool, slots, l.outer, [&](int64_t, int64_t b, int64_t e) {
      TSR_ISA_DISPATCH(isa, softmax(a, b, e));
    });
    return Status::ok();
  });
}

}  // namespace

Result<std::unique_ptr<Kernel>> make_Softmax(const CompileContext& ctx) { return make_softmax(ctx, false); }
Result<std::unique_ptr<Kernel>> make_LogSoftmax(const CompileContext& ctx) { return make_softmax(ctx, true); }

}  // namespace tessera::x86
