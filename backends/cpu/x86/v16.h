// 16 floats as one GCC vector (V16), two of 8 (V16x2) or four of 4 (V16x4), and the fused
// activation on a row of them: shared by the x86 Conv kernels (conv_x86.cc,
// conv_winograd.cc; compiled for aarch64 too) and the small-M SGEMM, whose hot loops are
// written as templates on the vector type because the build's -O2 does not vectorize them
// by itself; TSR_V16_VARIANTS builds each for AVX-512F (V16), AVX2+FMA (V16x2) and the
// baseline (V16) and picks one per call, or on aarch64 builds the NEON one (V16x4).
//
// Not GCC's target_clones: GCC dispatches an "arch=haswell" clone by processor model
// (__builtin_cpu_is), which no AMD CPU matches, so a Zen 3 ran the SSE2 baseline; and a
// V16 variable in a clone without AVX-512 has no machine mode and lives on the stack.
#pragma once

#include <cstdint>

#include "backends/backend.h"
#include "backends/cpu/x86/isa_x86.h"

// V16 is passed by value only to always-inline helpers, so the vector ABI of a build without
// AVX-512 never applies.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace tessera::x86 {

// 16 floats as one GCC vector: a zmm in the AVX-512 instances, where local variables of
// this type stay in registers (an array of floats did not: the compiler kept it on the
// stack and every tap stored and reloaded it).
typedef float V16 __attribute__((vector_size(64)));

// 16 floats as two GCC vectors of 8: the vector type of the AVX2 instances of the kernels
// written as templates on their vector type (the depthwise Conv, the small-M SGEMM, the
// fused activation). V16 cannot serve there: GCC (12) has no machine mode for a 64-byte
// vector without AVX-512, so every V16 variable of an AVX2 build lives on the stack (the
// arithmetic is split into ymm operations, but each one loads and stores its operands,
// and a store goes out 16 bytes at a time): the AVX2 clones of these loops ran slower than
// scalar code. The two halves of V16x2 are ordinary ymm registers. The operators are
// always inlined, so they take the ISA of the function they are inlined into.
typedef float V8 __attribute__((vector_size(32)));
struct V16x2 {
  V8 lo, hi;
};
#define TSR_V16X2_OP(op)                                                                          \
  __attribute__((always_inline)) inline V16x2 operator op(V16x2 a, V16x2 b) {                     \
    return {a.lo op b.lo, a.hi op b.hi};                                                          \
  }                                                                                               \
  __attribute__((always_inline)) inline V16x2 operator op(V16x2 a, float b) { return {a.lo op b, a.hi op b}; } \
  __attribute__((always_inline)) inline V16x2 operator op(float a, V16x2 b) { return {a op b.lo, a op b.hi}; } \
  __attribute__((always_inline)) inline V16x2& operator op##=(V16x2& a, V16x2 b) { return a = a op b; }       \
  __attribute__((always_inline)) inline V16x2& operator op##=(V16x2& a, float b) { return a = a op b; }
TSR_V16X2_OP(+)
TSR_V16X2_OP(-)
TSR_V16X2_OP(*)
TSR_V16X2_OP(/)
#undef TSR_V16X2_OP

// 16 floats as four GCC vectors of 4: the vector type of the aarch64 (NEON) instances, for
// the same reason as V16x2 (a 64-byte vector has no machine mode on NEON either: the V16
// build kept its variables on the stack, q registers loaded and stored around each
// operation). The four quarters are ordinary q registers.
typedef float V4 __attribute__((vector_size(16)));
struct V16x4 {
  V4 a, b, c, d;
};
#define TSR_V16X4_OP(op)                                                                          \
  __attribute__((always_inline)) inline V16x4 operator op(V16x4 x, V16x4 y) {                     \
    return {x.a op y.a, x.b op y.b, x.c op y.c, x.d op y.d};                                      \
  }                                                                                               \
  __attribute__((always_inline)) inline V16x4 operator op(V16x4 x, float y) {                     \
    return {x.a op y, x.b op y, x.c op y, x.d op y};                                              \
  }                                                                                               \
  __attribute__((always_inline)) inline V16x4 operator op(float x, V16x4 y) {                     \
    return {x op y.a, x op y.b, x op y.c, x op y.d};                                              \
  }                                                                                               \
  __attribute__((always_inline)) inline V16x4& operator op##=(V16x4& x, V16x4 y) { return x = x op y; } \
  __attribute__((always_inline)) inline V16x4& operator op##=(V16x4& x, float y) { return x = x op y; }
TSR_V16X4_OP(+)
TSR_V16X4_OP(-)
TSR_V16X4_OP(*)
TSR_V16X4_OP(/)
#undef TSR_V16X4_OP

// Loads and stores of 16 floats at any alignment, for either vector type.
__attribute__((always_inline)) inline void store16(float* p, V16 v) { __builtin_memcpy(p, &v, sizeof v); }
__attribute__((always_inline)) inline void store16(float* p, V16x2 v) {
  __builtin_memcpy(p, &v.lo, sizeof v.lo);
  __builtin_memcpy(p + 8, &v.hi, sizeof v.hi);
}
__attribute__((always_inline)) inline void store16(float* p, V16x4 v) {
  __builtin_memcpy(p, &v.a, sizeof v.a);
  __builtin_memcpy(p + 4, &v.b, sizeof v.b);
  __builtin_memcpy(p + 8, &v.c, sizeof v.c);
  __builtin_memcpy(p + 12, &v.d, sizeof v.d);
}
template <class V>
__attribute__((always_inline)) inline V load(const float* p);
template <>
__attribute__((always_inline)) inline V16 load<V16>(const float* p) {
  V16 v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}
template <>
__attribute__((always_inline)) inline V16x2 load<V16x2>(const float* p) {
  V16x2 v;
  __builtin_memcpy(&v.lo, p, sizeof v.lo);
  __builtin_memcpy(&v.hi, p + 8, sizeof v.hi);
  return v;
}

template <>
__attribute__((always_inline)) inline V16x4 load<V16x4>(const float* p) {
  V16x4 v;
  __builtin_memcpy(&v.a, p, sizeof v.a);
  __builtin_memcpy(&v.b, p + 4, sizeof v.b);
  __builtin_memcpy(&v.c, p + 8, sizeof v.c);
  __builtin_memcpy(&v.d, p + 12, sizeof v.d);
  return v;
}

// a < b ? x : y and a > b ? x : y, lane by lane (false where a or b is NaN).
__attribute__((always_inline)) inline V16 lt_select(V16 a, V16 b, V16 x, V16 y) { return a < b ? x : y; }
__attribute__((always_inline)) inline V16 gt_select(V16 a, V16 b, V16 x, V16 y) { return a > b ? x : y; }
__attribute__((always_inline)) inline V16x2 lt_select(V16x2 a, V16x2 b, V16x2 x, V16x2 y) {
  return {a.lo < b.lo ? x.lo : y.lo, a.hi < b.hi ? x.hi : y.hi};
}
__attribute__((always_inline)) inline V16x2 gt_select(V16x2 a, V16x2 b, V16x2 x, V16x2 y) {
  return {a.lo > b.lo ? x.lo : y.lo, a.hi > b.hi ? x.hi : y.hi};
}

__attribute__((always_inline)) inline V16x4 lt_select(V16x4 a, V16x4 b, V16x4 x, V16x4 y) {
  return {a.a < b.a ? x.a : y.a, a.b < b.b ? x.b : y.b, a.c < b.c ? x.c : y.c, a.d < b.d ? x.d : y.d};
}
__attribute__((always_inline)) inline V16x4 gt_select(V16x4 a, V16x4 b, V16x4 x, V16x4 y) {
  return {a.a > b.a ? x.a : y.a, a.b > b.b ? x.b : y.b, a.c > b.c ? x.c : y.c, a.d > b.d ? x.d : y.d};
}

// Lanes 0, 2, .., 30 (parity 0) or 1, 3, .., 31 (parity 1) of the 32 floats a, b.
template <int Parity>
__attribute__((always_inline)) inline V16 pick_lanes(V16 a, V16 b) {
  typedef int32_t I16 __attribute__((vector_size(64)));
  const I16 even = {0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30};
  return __builtin_shuffle(a, b, even + Parity);
}
template <int Parity>
__attribute__((always_inline)) inline V16x2 pick_lanes(V16x2 a, V16x2 b) {
  typedef int32_t I8 __attribute__((vector_size(32)));
  const I8 even = {0, 2, 4, 6, 8, 10, 12, 14};
  return {__builtin_shuffle(a.lo, a.hi, even + Parity), __builtin_shuffle(b.lo, b.hi, even + Parity)};
}

template <int Parity>
__attribute__((always_inline)) inline V16x4 pick_lanes(V16x4 a, V16x4 b) {
  typedef int32_t I4 __attribute__((vector_size(16)));
  const I4 even = {0, 2, 4, 6};
  return {__builtin_shuffle(a.a, a.b, even + Parity), __builtin_shuffle(a.c, a.d, even + Parity),
          __builtin_shuffle(b.a, b.b, even + Parity), __builtin_shuffle(b.c, b.d, even + Parity)};
}

// Defines `attrs ret name params`, which runs the always-inline template name##_body<V>(args)
// as built for the best path (best_isa(), per call): with V = V16 in an AVX-512F instance,
// V16x2 in an AVX2+FMA one, V16 in the baseline otherwise; on aarch64 the one instance,
// with V16x4.
#if defined(__x86_64__) || defined(_M_X64)
#define TSR_V16_VARIANTS(attrs, ret, name, params, args)                                       \
  __attribute__((target("avx512f,fma"))) attrs ret name##_avx512 params { return name##_body<V16> args; } \
  __attribute__((target("avx2,fma"))) attrs ret name##_avx2 params { return name##_body<V16x2> args; }    \
  attrs ret name params {                                                                        \
    switch (::tessera::x86::best_isa()) {                                                        \
      case ::tessera::x86::Isa::kAvx512: return name##_avx512 args;                             \
      case ::tessera::x86::Isa::kAvx2: return name##_avx2 args;                                 \
      default: return name##_body<V16> args;                                                     \
    }                                                                                            \
  }
#elif defined(__aarch64__)
#define TSR_V16_VARIANTS(attrs, ret, name, params, args) \
  attrs ret name params { return name##_body<V16x4> args; }
#else
#define TSR_V16_VARIANTS(attrs, ret, name, params, args) \
  attrs ret name params { return name##_body<V16> args; }
#endif

// The fused activation (and affine map) on one output row, inlined into each ISA instance of
// the depthwise kernel: the common kinds on V16 vectors (the build's -O2 does not
// vectorize such loops by itself), the rest and the row's tail through
// FusedActivation::apply. NaN propagates as in the reference kernels (comparisons with NaN
// are false, so a NaN passes through the selects).
template <class V>
__attribute__((always_inline)) inline void activate_row(const FusedActivation& a, float* y, int64_t n) {
  using K = FusedActivation::Kind;
  const bool vec = a.kind == K::kRelu || a.kind == K::kClip || a.kind == K::kHardSwish || a.kind == K::kNone;
  int64_t i = 0;
  if (vec) {
    const V zero = {}, one = zero + 1.f, lo = zero + a.alpha, hi = zero + a.beta, sc = zero + a.scale,
            sh = zero + a.shift;
    const bool affine = a.has_affine();
    for (; i + 16 <= n; i += 16) {
      V v = load<V>(y + i);
      if (a.kind == K::kRelu) {
        v = lt_select(v, zero, zero, v);
      } else if (a.kind == K::kClip) {
        v = lt_select(v, lo, lo, v);
        v = gt_select(v, hi, hi, v);
      } else if (a.kind == K::kHardSwish) {
        V u = v / 6.f + 0.5f;
        u = lt_select(u, zero, zero, u);
        u = gt_select(u, one, one, u);
        v = v * u;
      }
      if (affine) v = v * sc + sh;
      store16(y + i, v);
    }
  }
  if (i < n) a.apply(y + i, n - i);
}

}  // namespace tessera::x86
