// CastLike reference kernel (runtime/ops/cast_like.cc): the Cast kernel, which converts
// input 0 to the output's dtype (here input 1's) and never reads input 1.
#include "backends/cpu/ref/ref_kernels.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_CastLike(const CompileContext& ctx) { return make_Cast(ctx); }

}  // namespace tessera::ref
