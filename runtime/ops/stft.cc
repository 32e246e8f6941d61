// STFT (ONNX opset 17): the short-time Fourier transform of a batch of real or complex
// signals.
//   signal       [batch, signal_length, 1] (real) or [batch, signal_length, 2] (complex),
//                float or double.
//   frame_step   input 1, scalar int >= 1: samples between the starts of two frames.
//   window       optional input 2, [window_length] of the signal's dtype: multiplies each
//                frame (default: all ones).
//   frame_length optional input 3, scalar int (default: window_length; one of the two must
//                be given, and they must agree when both are).
//   onesided     attribute (default 1): keep bins 0 .. floor(frame_length / 2); real
//                signals only.
//   output       [batch, frames, bins, 2] with frames = (signal_length - frame_length) /
//                frame_step + 1 (integer division; frames that would run past the end are
//                not taken), bins = frame_length or floor(frame_length / 2) + 1;
//                Y[b, f, k] = sum_n signal[b, f * frame_step + n] * window[n]
//                             * exp(-2 pi i k n / frame_length).
// frame_step and frame_length must be known at plan time.
#include "runtime/ops/op_schema.h"
#include "runtime/ops/stft_params.h"

namespace tessera {

namespace {
Status infer(InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  if (x.dtype != DType::kFloat32 && x.dtype != DType::kFloat64)
    return ctx.unsupported(std::string("signal dtype ") + dtype_name(x.dtype) + " is not supported (float, double)");
  TSR_ASSIGN_OR_RETURN(std::vector<int64_t> step, ctx.const_ints(1));
  if (step.size() != 1) return ctx.error("frame_step must be a scalar");
  std::optional<int64_t> frame_length;
  if (ctx.num_inputs() > 3 && ctx.has_input(3)) {
    TSR_ASSIGN_OR_RETURN(std::vector<int64_t> v, ctx.const_ints(3));
    if (v.size() != 1) return ctx.error("frame_length must be a scalar");
    frame_length = v[0];
  }
  const Shape* window = nullptr;
  if (ctx.num_inputs() > 2 && ctx.has_input(2)) {
    if (ctx.input(2).dtype != x.dtype)
      return ctx.error(std::string("window has dtype ") + dtype_name(ctx.input(2).dtype) + ", the signal " + dtype_name(x.dtype));
    window = &ctx.input(2).shape;
  }
  TSR_ASSIGN_OR_RETURN(StftParams p, stft_params(ctx.node(), x.shape, step[0], window, frame_length));
  ctx.output(0) = {x.dtype, Shape{x.shape[0], p.frames, p.bins, 2}, nullptr};
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_STFT = {"STFT", 2, 4, 1, 1, infer};

}  // namespace tessera
