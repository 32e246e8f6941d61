// x86 ReduceSum, ReduceMean and ReduceMax (ONNX Reduce*-1/11/13/18), float32, when the
// reduced axes are a suffix of the input's axes (size-1 axes ignored), keepdims 0 or 1:
// the input is then [rows, size] and each output element reduces one contiguous row
// (pool_x86.h reduce_rows), rows split over the plan's threads. Axes and noop_with_empty_axes
// are resolved by resolve_reduce, as in the reference (ref/reduce.cc). Sums in float lanes
// instead of double: error <= (size / 32 + 5) ulp of sum |x|; max is exact (NaN aside: the
// reference propagates NaN, maxps may not). Declines other axes, dtypes, the noop case,
// empty reductions and CPUs without AVX2+FMA.
#include <memory>

#include "backends/cpu/ref/ref_util.h"
#include "backends/cpu/x86/isa_x86.h"
#include "backends/cpu/x86/parallel_x86.h"
#include "backends/cpu/x86/pool_x86.h"
#include "backends/cpu/x86/x86_kernels.h"
#include "runtime/ops/shape_params.h"

namespace tessera::x86 {

namespace {

Result<std::unique_ptr<Kernel>> make_reduce(const CompileContext& ctx, RowReduce op) {
  const Isa isa = best_isa();
  if (isa == Isa::kScalar || !ctx.has_input(0) || ctx.input(0).dtype != DType::kFloat32)
    return std::unique_ptr<Kernel>();
  const Shape& in = ctx.input(0).shape;
  TSR_ASSIGN_OR_RETURN(ReduceParams p, resolve_reduce(ctx.node, in, ref::const_inputs_of(ctx)));
  if (p.noop) return std::unique_ptr<Kernel>();
  int64_t rows = 1, size = 1;
  bool in_suffix = false;
  for (size_t a = 0; a < in.size(); ++a) {
    if (in[a] == 1) continue;
    if (p.reduced[a]) {
      in_suffix = true;
      size *= in[a];
    } else {
      if (in_suffix) return std::unique_ptr<Kernel>();  // a kept axis after a reduced one
      rows *= in[a];
    }
  }
  if (size == 0 || rows == 0) return std::unique_ptr<Kernel>();
  const int threads = ctx.threads;
  return make_fn_kernel([=](const KernelContext& k) {
    const float* x = k.input(0).data_as<float>();
    float* y = k.output(0).data_as<float>();
    run_slots(k.thread_pool, threads_for(rows * size, threads), rows, [&](int64_t, int64_t b, int64_t e) {
      TSR_ISA_DISPATCH(isa, reduce_rows(op, x, y, size, b, e));
    });
    return Status::ok();
  });
}

}  // namespace

Result<std::unique_ptr<Kernel>> make_ReduceSum(const CompileContext& ctx) { return make_reduce(ctx, RowReduce::kSum); }
Result<std::unique_ptr<Kernel>> make_ReduceMean(const CompileContext& ctx) { return make_reduce(ctx, RowReduce::kMean); }
Result<std::unique_ptr<Kernel>> make_ReduceMax(const CompileContext& ctx) { return make_reduce(ctx, RowReduce::kMax); }

}  // namespace tessera::x86
