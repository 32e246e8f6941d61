// Col2Im reference kernel (runtime/ops/col2im.cc), as the ONNX reference implementation
// (after PyTorch's col2im): Y = 0, then for every batch n, channel c, block offset k
// (row-major over block_shape) and block position b (row-major over the block counts):
//   image index along dim d: i_d = b_d * strides[d] - pads_begin[d] + k_d * dilations[d],
//   Y[n, c, i] += input[n, c * prod(block_shape) + k, b]   when every i_d is inside the image.
#include <cstring>

#include "backends/cpu/ref/ref_kernels.h"
#include "runtime/ops/col2im.h"

namespace tessera::ref {


Result<std::unique_ptr<Kernel>> make_Col2Im(const CompileContext& ctx) {
  TSR_ASSIGN_OR_RETURN(std::vector<int64_t> image, ctx.constant_ints(1));
  TSR_ASSIGN_OR_RETURN(std::vector<int64_t> block, ctx.constant_ints(2));
  TSR_ASSIGN_OR_RETURN(const Col2ImGeometry g, col2im_geometry(ctx.node, ctx.input(0).shape, image, block));
  const int64_t N = ctx.input(0).shape[0], L = ctx.input(0).shape[2];
  const DType dt = ctx.input(0).dtype;
  return make_fn_kernel([=](const KernelContext& k) -> Status {
    auto run = [&](auto tag) -> Status {
      using T = decltype(tag);
      const int64_t nd = static_cast<int64_t>(g.image.size());
      int64_t K = 1, IMG = 1;
      for (int64_t d = 0; d < nd; ++d) {
        K *= g.block[d];
        IMG *= g.image[d];
      }
      const T* x = k.input(0).data_as<T>();
      T* y = k.output(0).data_as<T>();
      if (k.output(0).nbytes()) std::memset(y, 0, k.output(0).nbytes());
      for (int64_t nc = 0; nc < N * g.channels; ++nc)
        for (int64_t kf = 0; kf < K; ++kf)
          for (int64_t bf = 0; bf < L; ++bf) {
            // Row-major digits of kf (over block) and bf (over blocks), last dim first.
            int64_t kr = kf, br = bf, off = 0, mul = 1;
            bool inside = true;
            for (int64_t d = nd - 1; d >= 0 && inside; --d) {
              const int64_t kd = kr % g.block[d], bd = br % g.blocks[d];
              kr /= g.block[d];
              br /= g.blocks[d];
              const int64_t i = bd * g.strides[d] - g.pads_begin[d] + kd * g.dilations[d];
              inside = i >= 0 && i < g.image[d];
              off += i * mul;
              mul *= g.image[d];
            }
            if (inside) y[nc * IMG + off] += x[(nc * K + kf) * L + bf];
          }
      return Status::ok();
    };
    return dt == DType::kFloat32 ? run(float{}) : run(double{});
  });
}

}  // namespace tessera::ref
