// Conv (ONNX Conv-11, 2-D, NCHW, float32) through cuDNN's convolution forward:
//   Y[n, m, oy, ox] = B[m] + sum_{c < C/group, ky, kx} X[n, g*C/group + c, oy*sh - ph + ky*dh, ox*sw - pw + kx*dw]
//                     * W[m, c, ky, kx]     (g = m / (M/group); padding taps contribute 0)
// which is cuDNN's CUDNN_CROSS_CORRELATION mode. Groups (depthwise included) go to cuDNN's
// group count. Declined (the CPU runs them): other ranks, asymmetric pads (cuDNN pads both
// sides alike), other dtypes. The algorithm is cuDNN's heuristic choice (v7 API) among those
// that fit 512 MiB of workspace, which the plan gives as device scratch. TF32 is off
// (CUDNN_FMA_MATH) unless TESSERA_CUDA_ALLOW_TF32=1. The bias B and a tail the planner fused
// (residual Add, activation; see Epilogue) are applied by one launch_epilogue_f32 pass.
#include "backends/cuda/cuda_backend.h"
#include "runtime/ops/spatial_attrs.h"

namespace tessera::cuda {

namespace {

constexpr size_t kMaxWorkspace = size_t{512} << 20;

class ConvKernel final : public Kernel {
 public:
  explicit ConvKernel(const CudaContext* c) : c_(c) {}
  ~ConvKernel() override {
    if (x_) lib().cudnnDestroyTensorDescriptor(x_);
    if (y_) lib().cudnnDestroyTensorDescriptor(y_);
    if (w_) lib().cudnnDestroyFilterDescriptor(w_);
    if (conv_) lib().cudnnDestroyConvolutionDescriptor(conv_);
  }
  size_t scratch_bytes() const override { return workspace_; }

  Status init(const CompileContext& ctx, const WindowGeometry& geo, int64_t group, const CudaEpilogue& tail) {
    const Shape& xs = ctx.input(0).shape;
    const Shape& ws = ctx.input(1).shape;
    const Shape& ys = ctx.outputs[0].shape;
    TSR_RETURN_IF_ERROR(cudnn_check(lib().cudnnCreateTensorDescriptor(&x_), "tensor descriptor"));
    TSR_RETURN_IF_ERROR(cudnn_check(lib().cudnnCreateTensorDescriptor(&y_), "tensor descriptor"));
    TSR_RETURN_IF_ERROR(cudnn_check(lib().cudnnCreateFilterDescriptor(&w_), "filter descriptor"));
    TSR_RETURN_IF_ERROR(cudnn_check(lib().cudnnCreateConvolutionDescriptor(&conv_), "convolution descriptor"));
    auto i = [](int64_t v) { return static_cast<int>(v); };
    TSR_RETURN_IF_ERROR(cudnn_check(lib().cudnnSetTensor4dDescriptor(x_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, i(xs[0]), i(xs[1]),
                                                               i(xs[2]), i(xs[3])), "X descriptor"));
    TSR_RETURN_IF_ERROR(cudnn_check(lib().cudnnSetTensor4dDescriptor(y_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, i(ys[0]), i(ys[1]),
                                                               i(ys[2]), i(ys[3])), "Y descriptor"));
    TSR_RETURN_IF_ERROR(cudnn_check(lib().cudnnSetFilter4dDescriptor(w_, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, i(ws[0]), i(ws[1]),
                                                               i(ws[2]), i(ws[3])), "W descriptor"));
    TSR_RETURN_IF_ERROR(cudnn_check(
        lib().cudnnSetConvolution2dDescriptor(conv_, i(geo.pads_begin[0]), i(geo.pads_begin[1]), i(geo.strides[0]),
                                        i(geo.strides[1]), i(geo.dilations[0]), i(geo.dilations[1]),
                                        CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT), "convolution descriptor"));
    TSR_RETURN_IF_ERROR(cudnn_check(lib().cudnnSetConvolutionGroupCount(conv_, i(group)), "group count"));
    const cudnnMathType_t math = c_->allow_tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;
    TSR_RETURN_IF_ERROR(cudnn_check(lib().cudnnSetConvolutionMathType(conv_, math), "math type"));
    // cuDNN must agree with the schema on the output shape.
    int n, c, h, w;
    TSR_RETURN_IF_ERROR(cudnn_check(lib().cudnnGetConvolution2dForwardOutputDim(conv_, x_, w_, &n, &c, &h, &w), "output dims"));
    if (n != ys[0] || c != ys[1] || h != ys[2] || w != ys[3])
      return internal_error(ctx.node.describe() + ": cuDNN computes another output shape");
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int found = 0;
    TSR_RETURN_IF_ERROR(cudnn_check(lib().cudnnGetConvolutionForwardAlgorithm_v7(c_->cudnn, x_, w_, conv_, y_,
                                                                           CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found, perf),
                                    "algorithm heuristics"));
    bool chosen = false;
    for (int k = 0; k < found && !chosen; ++k) {
      if (perf[k].status != CUDNN_STATUS_SUCCESS || perf[k].memory > kMaxWorkspace) continue;
      if (!c_->allow_tf32 && (perf[k].mathType == CUDNN_TENSOR_OP_MATH ||
                              perf[k].mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION))
        continue;
      algo_ = perf[k].algo;
      chosen = true;
    }
    if (!chosen) return unimplemented(ctx.node.describe() + ": cuDNN offers no algorithm for this convolution");
    TSR_RETURN_IF_ERROR(cudnn_check(lib().cudnnSetConvolutionMathType(conv_, math), "math type"));
    TSR_RETURN_IF_ERROR(cudnn_check(lib().cudnnGetConvolutionForwardWorkspaceSize(c_->cudnn, x_, w_, conv_, y_, algo_, &workspace_),
                                    "workspace size"));
    ep_ = tail;
    if (ctx.has_input(2)) {
      ep_.chan_bias_input = 2;
      ep_.chan_inner = ys[2] * ys[3];
      ep_.chan_count = ys[1];
    }
    return Status::ok();
  }

  Status run(const KernelContext& k) const override {
    if (k.output(0).numel() == 0) return Status::ok();
    const float one = 1.f, zero = 0.f;
    TSR_RETURN_IF_ERROR(cudnn_check(lib().cudnnConvolutionForward(c_->cudnn, &one, x_, k.input(0).data(), w_, k.input(1).data(),
                                                            conv_, algo_, k.scratch, workspace_, &zero, y_,
                                                            k.output(0).data()), "convolution forward"));
    if (ep_.active()) TSR_RETURN_IF_ERROR(run_epilogue(*c_, ep_, k));
    return Status::ok();
  }

 private:
  const CudaContext* c_;
  cudnnTensorDescriptor_t x_ = nullptr, y_ = nullptr;
  cudnnFilterDescriptor_t w_ = nullptr;
  cudnnConvolutionDescriptor_t conv_ = nullptr;
  cudnnConvolutionFwdAlgo_t algo_ = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  size_t workspace_ = 0;
  CudaEpilogue ep_;  // B and the fused tail
};

Result<std::unique_ptr<Kernel>> make_conv_with(const CudaContext& c, const CompileContext& ctx, const CudaEpilogue& tail) {
  if (!all_float32(ctx) || !ctx.has_input(0) || !ctx.has_input(1)) return decline();
  const Shape& xs = ctx.input(0).shape;
  const Shape& ws = ctx.input(1).shape;
  if (xs.size() != 4 || ws.size() != 4 || ctx.outputs.size() != 1 || ctx.outputs[0].shape.size() != 4) return decline();
  for (int64_t d : xs)
    if (d <= 0 || d > INT32_MAX) return decline();
  for (int64_t d : ctx.outputs[0].shape)
    if (d <= 0) return decline();
  Result<WindowGeometry> geo = window_geometry(ctx.node, xs, {ws[2], ws[3]}, false);
  if (!geo.is_ok()) return decline();  // the CPU kernel reports the error
  const WindowGeometry& g = geo.value();
  if (g.pads_begin != g.pads_end) return decline();
  const int64_t group = ctx.node.attr_i("group", 1);
  if (group < 1 || xs[1] % group != 0 || ws[0] % group != 0 || ws[1] * group != xs[1]) return decline();
  if (ctx.has_input(2) && ctx.input(2).shape != Shape{ws[0]}) return decline();
  TSR_RETURN_IF_ERROR(ensure_cudnn(c));
  auto k = std::make_unique<ConvKernel>(&c);
  TSR_RETURN_IF_ERROR(k->init(ctx, g, group, tail));
  return std::unique_ptr<Kernel>(std::move(k));
}

Result<std::unique_ptr<Kernel>> make_conv(const CudaContext& c, const CompileContext& ctx) {
  return make_conv_with(c, ctx, CudaEpilogue{});
}

}  // namespace

Result<std::unique_ptr<Kernel>> make_conv_fused(const CudaContext& c, const CompileContext& own, const CudaEpilogue& tail) {
  return make_conv_with(c, own, tail);
}

void add_conv_ops(std::vector<CudaOp>& ops) { ops.push_back({"Conv", &make_conv}); }

}  // namespace tessera::cuda
