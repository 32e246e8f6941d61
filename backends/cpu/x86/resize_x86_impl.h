// ISA-templated body of resize_x86.h; included once by resize_avx512.cc and resize_avx2.cc
// after simd_x86.h.
#include "backends/cpu/x86/resize_x86.h"

namespace tessera::x86::TSR_X86_ISA {

void resize2d_rows(const Resize2dPlan& p, const float* x, float* y, float* t, int64_t begin, int64_t end) {
  constexpr int kW = Vec::kW;
  for (int64_t r = begin; r < end; ++r) {
    const int64_t plane = r / p.oh, o = r % p.oh;
    const float* xp = x + plane * p.h * p.w;
    const float* src = t;
    if (p.copy_rows) {
      src = xp + static_cast<int64_t>(p.ih[o]) * p.w;
    } else {
      // t = sum_j wh[o, j] * X[ih[o, j], :]
      const int32_t* ih = p.ih + o * p.th;
      const float* wh = p.wh + o * p.th;
      int64_t c = 0;
      for (; c + kW <= p.w; c += kW) {
        Vec::T acc = Vec::mul(Vec::set1(wh[0]), Vec::load(xp + static_cast<int64_t>(ih[0]) * p.w + c));
        for (int j = 1; j < p.th; ++j)
          acc = Vec::fmadd(Vec::set1(wh[j]), Vec::load(xp + static_cast<int64_t>(ih[j]) * p.w + c), acc);
        Vec::store(t + c, acc);
      }
      for (; c < p.w; ++c) {
        float acc = wh[0] * xp[static_cast<int64_t>(ih[0]) * p.w + c];
        for (int j = 1; j < p.th; ++j) acc += wh[j] * xp[static_cast<int64_t>(ih[j]) * p.w + c];
        t[c] = acc;
      }
    }
    // Y[o, :] = sum_j ww[j, :] * src[iw[j, :]]
    float* yr = y + r * p.ow;
    int64_t c = 0;
    if (p.copy_cols) {
      for (; c + kW <= p.ow; c += kW) Vec::store(yr + c, Vec::gather(src, p.iw + c));
      for (; c < p.ow; ++c) yr[c] = src[p.iw[c]];
    } else {
      for (; c + kW <= p.ow; c += kW) {
        Vec::T acc = Vec::mul(Vec::load(p.ww + c), Vec::gather(src, p.iw + c));
        for (int j = 1; j < p.tw; ++j)
          acc = Vec::fmadd(Vec::load(p.ww + j * p.ow + c), Vec::gather(src, p.iw + j * p.ow + c), acc);
        Vec::store(yr + c, acc);
      }
      for (; c < p.ow; ++c) {
        float acc = p.ww[c] * src[p.iw[c]];
        for (int j = 1; j < p.tw; ++j) acc += p.ww[j * p.ow + c] * src[p.iw[j * p.ow + c]];
        yr[c] = acc;
      }
    }
  }
}

}  // namespace tessera::x86::TSR_X86_ISA
