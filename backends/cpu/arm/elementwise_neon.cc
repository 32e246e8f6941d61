// NEON (AdvSIMD, aarch64) core of the float32 elementwise kernels
// (backends/cpu/x86/elementwise_x86.cc, built on aarch64 too): the vector type the
// ISA-neutral templates of backends/cpu/elementwise_simd.h are instantiated with, 4 floats
// per q register. Tails go through a small buffer (no read or write past the end).
// max and min keep the x86 semantics the templates were written for (a > b ? a : b and
// a < b ? a : b: the second operand when either is NaN), not NEON's FMAX/FMIN (NaN if
// either is NaN), so that results equal the reference kernels' (and the x86 paths') on NaN.
#include <arm_neon.h>

#include <cstring>

#include "backends/cpu/elementwise_simd.h"
#include "backends/cpu/x86/elementwise_x86.h"

namespace tessera::cpu {

namespace {

struct VecNeon {
  using F = float32x4_t;
  using M = uint32x4_t;
  static constexpr int kWidth = 4;

  static F load(const float* p) { return vld1q_f32(p); }
  static F load_partial(const float* p, int n) {
    float t[4] = {0.f, 0.f, 0.f, 0.f};
    std::memcpy(t, p, static_cast<size_t>(n) * sizeof(float));
    return vld1q_f32(t);
  }
  static void store(float* p, F v) { vst1q_f32(p, v); }
  static void store_partial(float* p, F v, int n) {
    float t[4];
    vst1q_f32(t, v);
    std::memcpy(p, t, static_cast<size_t>(n) * sizeof(float));
  }
  static F set1(float f) { return vdupq_n_f32(f); }
  static F add(F a, F b) { return vaddq_f32(a, b); }
  static F sub(F a, F b) { return vsubq_f32(a, b); }
  static F mul(F a, F b) { return vmulq_f32(a, b); }
  static F div(F a, F b) { return vdivq_f32(a, b); }
  static F fmadd(F a, F b, F c) { return vfmaq_f32(c, a, b); }  // a * b + c, one rounding
  static F sqrt(F a) { return vsqrtq_f32(a); }
  static F max(F a, F b) { return vbslq_f32(vcgtq_f32(a, b), a, b); }  // a > b ? a : b
  static F min(F a, F b) { return vbslq_f32(vcltq_f32(a, b), a, b); }  // a < b ? a : b
  static F round(F a) { return vrndnq_f32(a); }                        // to nearest, ties to even
  static M lt(F a, F b) { return vcltq_f32(a, b); }
  static M ge(F a, F b) { return vcgeq_f32(a, b); }
  static M eq(F a, F b) { return vceqq_f32(a, b); }
  static M unord(F a, F b) { return vmvnq_u32(vandq_u32(vceqq_f32(a, a), vceqq_f32(b, b))); }
  static F select(M m, F t, F f) { return vbslq_f32(m, t, f); }
  static F and_(F a, F b) { return vreinterpretq_f32_u32(vandq_u32(vreinterpretq_u32_f32(a), vreinterpretq_u32_f32(b))); }
  static F or_(F a, F b) { return vreinterpretq_f32_u32(vorrq_u32(vreinterpretq_u32_f32(a), vreinterpretq_u32_f32(b))); }
  static F xor_(F a, F b) { return vreinterpretq_f32_u32(veorq_u32(vreinterpretq_u32_f32(a), vreinterpretq_u32_f32(b))); }
  // (~a) & b, as x86's andnot.
  static F andnot_(F a, F b) { return vreinterpretq_f32_u32(vbicq_u32(vreinterpretq_u32_f32(b), vreinterpretq_u32_f32(a))); }
  /// y * 2^n, n integral in [-150, 130]: two factors 2^(n/2) and 2^(n - n/2), each a normal float.
  static F scale_pow2(F y, F n) {
    const int32x4_t ni = vcvtnq_s32_f32(n);
    const int32x4_t n1 = vshrq_n_s32(ni, 1), n2 = vsubq_s32(ni, n1);
    const int32x4_t bias = vdupq_n_s32(127);
    const F s1 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n1, bias), 23));
    const F s2 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n2, bias), 23));
    return vmulq_f32(vmulq_f32(y, s1), s2);
  }
};

}  // namespace

ElementwiseCore elementwise_core_neon() { return {&simd::binary<VecNeon>, &simd::unary<VecNeon>}; }

}  // namespace tessera::cpu
