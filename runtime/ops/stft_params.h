// Shared by the STFT schema and its reference kernel: the frame geometry of an STFT node
// (ONNX STFT-17).
#pragma once

#include <optional>
#include <string>

#include "tessera/graph.h"
#include "tessera/status.h"

namespace tessera {

struct StftParams {
  int64_t step = 1;          // frame_step, samples
  int64_t frame_length = 0;  // samples per frame, also the DFT length
  int64_t frames = 0;        // (signal_length - frame_length) / step + 1
  int64_t bins = 0;          // frame_length, or floor(frame_length / 2) + 1 when onesided
};

/// Resolves an STFT node for signal shape `x` ([batch, signal_length, 1 or 2]), frame_step
/// `step`, the window's shape (nullptr: no window) and frame_length (nullopt: omitted).
/// Errors (invalid_argument naming the node): bad ranks or last dim, step < 1, no window and
/// no frame_length, a window that is not 1-D of frame_length, a frame longer than the
/// signal, onesided with a complex signal.
inline Result<StftParams> stft_params(const Node& n, const Shape& x, int64_t step, const Shape* window,
                                      std::optional<int64_t> frame_length) {
  const std::string who = n.describe() + ": ";
  if (x.size() != 3 || (x[2] != 1 && x[2] != 2))
    return invalid_argument(who + "signal must be [batch, signal_length, 1 or 2], got " + shape_to_string(x));
  if (step < 1) return invalid_argument(who + "frame_step must be >= 1, got " + std::to_string(step));
  if (window && window->size() != 1) return invalid_argument(who + "window must be 1-D, got " + shape_to_string(*window));
  if (!window && !frame_length) return invalid_argument(who + "needs a window or a frame_length");
  StftParams p;
  p.step = step;
  p.frame_length = frame_length ? *frame_length : (*window)[0];
  if (window && (*window)[0] != p.frame_length)
    return invalid_argument(who + "window has " + std::to_string((*window)[0]) + " samples but frame_length is " +
                            std::to_string(p.frame_length));
  if (p.frame_length < 1 || p.frame_length > x[1])
    return invalid_argument(who + "frame_length " + std::to_string(p.frame_length) + " must be in [1, signal_length " +
                            std::to_string(x[1]) + "]");
  const bool onesided = n.attr_i("onesided", 1) != 0;
  if (onesided && x[2] == 2) return invalid_argument(who + "onesided = 1 needs a real signal (last dim 1)");
  p.frames = (x[1] - p.frame_length) / step + 1;
  p.bins = onesided ? p.frame_length / 2 + 1 : p.frame_length;
  return p;
}

}  // namespace tessera
