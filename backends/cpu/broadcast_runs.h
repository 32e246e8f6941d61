// The output of a broadcasting binary op (numpy broadcasting, as ONNX Add/Mul/... follow)
// walked as contiguous runs, for the optimized CPU kernels of every ISA:
//
//   BroadcastRuns br;
//   if (!br.init(y.shape(), a.shape(), b.shape())) ...;      // shapes do not broadcast
//   br.for_each_run(begin, end, [&](int64_t ia, int64_t ib, int64_t iy, int64_t n, int64_t sa, int64_t sb) {
//     for (int64_t i = 0; i < n; ++i) y[iy + i] = a[ia + i * sa] op b[ib + i * sb];
//   });
//
// init() right-aligns the shapes, drops the output's size-1 dims and merges neighbouring
// dims in which each input is either present or broadcast in the same way, so that
//   [N,C,H,W] op [C,1,1]   becomes  [N | C | H*W] with b's strides [0 | 1 | 0]:
//                                   runs of H*W elements with one b element each;
//   [M,K] op [K]           becomes  [M | K] with b's strides [0 | 1]: runs of K, b reread;
//   same shapes            become   one run of numel; a scalar side has stride 0.
// Each run's inner strides sa, sb are 0 (the input's element is repeated) or 1 (contiguous),
// so an ISA kernel only needs "op over n floats, each side contiguous or one value".
// Nothing here allocates (fixed arrays), so kernels may call init() at run time.
#pragma once

#include <cstdint>

#include "tessera/tensor.h"

namespace tessera::cpu {

class BroadcastRuns {
 public:
  /// Merged dims kept at most; init() fails beyond (only alternating broadcast patterns over
  /// more than 16 dims reach it).
  static constexpr int kMaxDims = 16;

  /// Plans `out` = broadcast(a, b). Returns false if a or b does not broadcast to `out`
  /// (each input dim, right-aligned, must be 1 or equal to out's) or kMaxDims is exceeded.
  bool init(const Shape& out, const Shape& a, const Shape& b) {
    const int r = static_cast<int>(out.size());
    if (static_cast<int>(a.size()) > r || static_cast<int>(b.size()) > r) return false;
    numel_ = 1;
    for (int64_t d : out) numel_ *= d;
    rank_ = 0;
    int prev_cls = -1;
    // Walk from the innermost dim outwards, keeping the inputs' running element strides.
    int64_t sa = 1, sb = 1;
    for (int i = r - 1; i >= 0; --i) {
      const int ai = i - (r - static_cast<int>(a.size())), bi = i - (r - static_cast<int>(b.size()));
      const int64_t od = out[static_cast<size_t>(i)];
      const int64_t ad = ai >= 0 ? a[static_cast<size_t>(ai)] : 1, bd = bi >= 0 ? b[static_cast<size_t>(bi)] : 1;
      if ((ad != od && ad != 1) || (bd != od && bd != 1)) return false;
      if (od == 1) continue;  // size-1 output dim: nothing to walk, no stride to keep
      const bool ha = ad == od, hb = bd == od;
      const int cls = (ha ? 1 : 0) | (hb ? 2 : 0);
      if (cls == prev_cls) {
        dims_[rank_ - 1] *= od;  // merged into the (inner) previous dim: strides stay those of the inner one
      } else {
        if (rank_ == kMaxDims) return false;
        dims_[rank_] = od;
        astr_[rank_] = ha ? sa : 0;
        bstr_[rank_] = hb ? sb : 0;
        ++rank_;
        prev_cls = cls;
      }
      if (ha) sa *= od;
      if (hb) sb *= od;
    }
    // dims_[0] is now the innermost merged dim; a scalar output (or all dims 1) is one run of 1.
    if (rank_ == 0) {
      dims_[0] = 1;
      astr_[0] = bstr_[0] = 0;
      rank_ = 1;
    }
    return true;
  }

  int64_t numel() const { return numel_; }
  /// Elements per run (the innermost merged dim) and the inputs' strides along it (0 or 1).
  int64_t inner() const { return dims_[0]; }
  int64_t inner_stride_a() const { return astr_[0]; }
  int64_t inner_stride_b() const { return bstr_[0]; }
  /// Merged dims, innermost first (tests and reports).
  int rank() const { return rank_; }

  /// Calls f(ia, ib, iy, n, sa, sb) for the runs covering output elements [begin, end)
  /// (0 <= begin <= end <= numel()), in order: n elements y[iy ..], reading a[ia + i*sa] and
  /// b[ib + i*sb]. The first and last run may be parts of a full run.
  template <typename F>
  void for_each_run(int64_t begin, int64_t end, F&& f) const {
    if (begin >= end) return;
    const int64_t inner = dims_[0], sa = astr_[0], sb = bstr_[0];
    int64_t outer = begin / inner, within = begin - outer * inner;
    int64_t idx[kMaxDims];
    int64_t ra = 0, rb = 0;  // offsets of the current outer index's run start (within == 0)
    for (int d = 1; d < rank_; ++d) {
      idx[d] = outer % dims_[d];
      outer /= dims_[d];
      ra += idx[d] * astr_[d];
      rb += idx[d] * bstr_[d];
    }
    int64_t iy = begin;
    while (iy < end) {
      const int64_t n = inner - within < end - iy ? inner - within : end - iy;
      f(ra + within * sa, rb + within * sb, iy, n, sa, sb);
      iy += n;
      if (iy >= end) break;
      within = 0;
      for (int d = 1; d < rank_; ++d) {  // odometer step over the outer dims
        ra += astr_[d];
        rb += bstr_[d];
        if (++idx[d] < dims_[d]) break;
        ra -= dims_[d] * astr_[d];
        rb -= dims_[d] * bstr_[d];
        idx[d] = 0;
      }
    }
  }

 private:
  int rank_ = 0;
  int64_t numel_ = 0;
  int64_t dims_[kMaxDims] = {};
  int64_t astr_[kMaxDims] = {}, bstr_[kMaxDims] = {};
};

}  // namespace tessera::cpu
