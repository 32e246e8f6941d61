// DepthToSpace and SpaceToDepth reference kernels (runtime/ops/depth_to_space.cc), as
// element copies between the large (space) and small (depth) layouts:
//   space[n, c, h*b + i, w*b + j] = depth[n, ch, h, w] with
//   ch = (i*b + j) * C' + c (DCR, and SpaceToDepth)  or  c * b*b + i*b + j (CRD),
//   C' = the space tensor's channels.
#include "backends/cpu/ref/ref_util.h"

namespace tessera::ref {

namespace {
Result<std::unique_ptr<Kernel>> make_rearrange(const CompileContext& ctx, bool to_space, bool crd) {
  const int64_t b = ctx.node.attr_i("blocksize", 1);
  // Shapes of the space-side and depth-side tensors.
  const Shape space = to_space ? ctx.outputs[0].shape : ctx.input(0).shape;
  const Shape depth = to_space ? ctx.input(0).shape : ctx.outputs[0].shape;
  return make_fn_kernel([=](const KernelContext& k) -> Status {
    const int64_t N = space[0], C = space[1], H = depth[2], W = depth[3];
    return dispatch_bytes(dtype_size(k.input(0).dtype()), [&](auto tag) -> Status {
      using E = decltype(tag);
      const E* src = k.input(0).data_as<E>();
      E* dst = k.output(0).data_as<E>();
      for (int64_t n = 0; n < N; ++n)
        for (int64_t c = 0; c < C; ++c)
          for (int64_t h = 0; h < H; ++h)
            for (int64_t i = 0; i < b; ++i)
              for (int64_t w = 0; w < W; ++w)
                for (int64_t j = 0; j < b; ++j) {
                  const int64_t ch = crd ? c * b * b + i * b + j : (i * b + j) * C + c;
                  const int64_t s = ((n * C + c) * H * b + h * b + i) * W * b + w * b + j;
                  const int64_t d = ((n * C * b * b + ch) * H + h) * W + w;
                  if (to_space) dst[s] = src[d];
                  else dst[d] = src[s];
                }
      return Status::ok();
    });
  });
}
}  // namespace

Result<std::unique_ptr<Kernel>> make_DepthToSpace(const CompileContext& ctx) {
  return make_rearrange(ctx, /*to_space=*/true, ctx.node.opset >= 11 && ctx.node.attr_s("mode", "DCR") == "CRD");
}
Result<std::unique_ptr<Kernel>> make_SpaceToDepth(const CompileContext& ctx) {
  return make_rearrange(ctx, /*to_space=*/false, /*crd=*/false);
}

}  // namespace tessera::ref
