// The integer convolution shared by the ConvInteger and QLinearConv reference kernels:
// Conv's direct N-d loop (backends/cpu/ref/conv.cc) over zero-point-shifted 8-bit operands,
//   acc[n, m, o] = sum_{c < C/group, k} (X[n, g*C/group + c, tap(o, k)] - x_zp) * (W[m, c, k] - w_zp[m])
// with g = m / (M/group); taps in the padding contribute 0 (X padded with its zero point, as
// the ONNX reference and onnxruntime do). Accumulated in int64, reported as int32 (ONNX's
// accumulator type; the sum wraps modulo 2^32 if it overflows).
#pragma once

#include <cstdint>

#include "backends/cpu/ref/nd_index.h"
#include "backends/cpu/ref/quant_util.h"

namespace tessera::ref {

/// Conv geometry of X [N, C, D...] and W [M, C/group, k...], fixed at compile time.
struct IntConvGeometry {
  WindowGeometry g;
  int64_t batch = 0, c_in = 0, m_out = 0, group = 1;

  static Result<IntConvGeometry> of(const CompileContext& ctx, size_t xi, size_t wi) {
    const Shape& xs = ctx.input(xi).shape;
    const Shape& ws = ctx.input(wi).shape;
    IntConvGeometry r;
    TSR_ASSIGN_OR_RETURN(r.g, window_geometry(ctx.node, xs, std::vector<int64_t>(ws.begin() + 2, ws.end()), false));
    r.batch = xs[0];
    r.c_in = xs[1];
    r.m_out = ws[0];
    r.group = ctx.node.attr_i("group", 1);
    return r;
  }

  /// Calls emit(m, y_index, acc) for every element of Y [N, M, O...], in row-major order.
  /// `x_zp` is X's zero point; `w_zp` W's (null: 0; 1 element: per-tensor; M: per channel).
  template <typename TX, typename TW, typename Emit>
  void run(const TX* x, const TW* w, int64_t x_zp, const Tensor* w_zp, Emit&& emit) const {
    const int nd = g.rank;
    const int64_t cg = c_in / group, mg = m_out / group;
    const int64_t in_size = product(g.in), out_size = product(g.out), k_size = product(g.kernel);
    for (int64_t n = 0; n < batch; ++n) {
      for (int64_t m = 0; m < m_out; ++m) {
        const int64_t grp = m / mg;
        const int64_t wz = w_zp ? int_at(*w_zp, w_zp->numel() == 1 ? 0 : m) : 0;
        SpatialIndex o{};
        int64_t o_lin = 0;
        do {
          int64_t acc = 0;
          for (int64_t c = 0; c < cg; ++c) {
            const TX* x_nc = x + (n * c_in + grp * cg + c) * in_size;
            const TW* w_mc = w + (m * cg + c) * k_size;
            SpatialIndex kk{};
            int64_t k_lin = 0;
            do {
              const int64_t x_lin = window_tap(o, kk, g, g.in, nd);
              if (x_lin >= 0) acc += (static_cast<int64_t>(x_nc[x_lin]) - x_zp) * (static_cast<int64_t>(w_mc[k_lin]) - wz);
              ++k_lin;
            } while (next_index(kk, g.kernel, nd));
          }
          emit(m, (n * m_out + m) * out_size + o_lin, static_cast<int32_t>(static_cast<uint32_t>(acc)));
          ++o_lin;
        } while (next_index(o, g.out, nd));
      }
    }
  }
};

}  // namespace tessera::ref
