// The SGEMM's path for products with few rows (M <= kSmallM: a fully connected layer at
// batch 1, a GEMV), where the micro-kernel's MR-row tiles would compute mostly padding
// (14 rows for one on AVX-512). Each row of C is accumulated over 16 columns at a time:
//   acc[i][j .. j+15] += op(A)[i, p] * op(B)[p, j .. j+15]
// over B's rows, read from the pre-packed panels (sgemm_pack_b's layout, zero-padded to NR
// columns) or from a row-major B; the work is memory-bound on B, which is read once.
// Built per ISA (TSR_V16_VARIANTS: AVX-512F, AVX2, baseline) on x86-64; once on aarch64.
#include "backends/cpu/x86/sgemm_small_m.h"

#include <algorithm>

#include "backends/cpu/x86/v16.h"

namespace tessera::cpu {

namespace {

using x86::load;
using x86::store16;
using x86::V16;
using x86::V16x2;
using x86::V16x4;

// acc (m rows, row stride ld) columns [0, width) += op(A)[:, 0 .. kc) * B[0 .. kc, 0 .. width):
// width a multiple of 16, row p of B at b + p * ldb with `width` readable floats; op(A)[i, p]
// at a[i * a_rs + p * a_cs].
template <int M, class V>
__attribute__((always_inline)) inline void accumulate(const float* a, int64_t a_rs, int64_t a_cs, int64_t kc,
                                                      const float* b, int64_t ldb, int64_t width, float* acc,
                                                      int64_t ld) {
  for (int64_t j = 0; j < width; j += 32) {
    const bool two = j + 32 <= width;
    V c0[M], c1[M];
    for (int i = 0; i < M; ++i) {
      c0[i] = load<V>(acc + i * ld + j);
      c1[i] = two ? load<V>(acc + i * ld + j + 16) : V{};
    }
    // Two rows of B per step into two sets of sums (with M = 1, one set is a chain of FMAs
    // each waiting for the last); B's rows 32 ahead prefetched: the hardware prefetcher
    // stops at each 4 KiB page, and a batch-1 fully connected layer streams its weights.
    V d0[M], d1[M];
    for (int i = 0; i < M; ++i) d0[i] = d1[i] = V{};
    int64_t p = 0;
    for (; p + 2 <= kc; p += 2) {
      const float* br = b + p * ldb + j;
      __builtin_prefetch(br + 32 * ldb);
      __builtin_prefetch(br + 33 * ldb);
      const V b0 = load<V>(br), b1 = two ? load<V>(br + 16) : V{};
      const V e0 = load<V>(br + ldb), e1 = two ? load<V>(br + ldb + 16) : V{};
      for (int i = 0; i < M; ++i) {
        const float ai = a[i * a_rs + p * a_cs], ak = a[i * a_rs + (p + 1) * a_cs];
        c0[i] += ai * b0;
        d0[i] += ak * e0;
        if (two) c1[i] += ai * b1, d1[i] += ak * e1;
      }
    }
    for (; p < kc; ++p) {
      const float* br = b + p * ldb + j;
      const V b0 = load<V>(br), b1 = two ? load<V>(br + 16) : V{};
      for (int i = 0; i < M; ++i) {
        const float ai = a[i * a_rs + p * a_cs];
        c0[i] += ai * b0;
        if (two) c1[i] += ai * b1;
      }
    }
    for (int i = 0; i < M; ++i) {
      store16(acc + i * ld + j, c0[i] + d0[i]);
      if (two) store16(acc + i * ld + j + 16, c1[i] + d1[i]);
    }
  }
}

template <class V>
__attribute__((always_inline)) inline void accumulate_rows_body(int m, const float* a, int64_t a_rs, int64_t a_cs,
                                                                int64_t kc, const float* b, int64_t ldb, int64_t width,
                                                                float* acc, int64_t ld) {
  switch (m) {
    case 1: return accumulate<1, V>(a, a_rs, a_cs, kc, b, ldb, width, acc, ld);
    case 2: return accumulate<2, V>(a, a_rs, a_cs, kc, b, ldb, width, acc, ld);
    case 3: return accumulate<3, V>(a, a_rs, a_cs, kc, b, ldb, width, acc, ld);
    default: return accumulate<4, V>(a, a_rs, a_cs, kc, b, ldb, width, acc, ld);
  }
}
TSR_V16_VARIANTS(, void, accumulate_rows,
                 (int m, const float* a, int64_t a_rs, int64_t a_cs, int64_t kc, const float* b, int64_t ldb,
                  int64_t width, float* acc, int64_t ld),
                 (m, a, a_rs, a_cs, kc, b, ldb, width, acc, ld))

}  // namespace

bool sgemm_small_m_applies(const SgemmArgs& g, int nr) {
  // Packed panels must be whole vectors; an unpacked B must be row-major (op(B) = B).
  // op(A) is read unpacked: a caller that passes only packed_a takes the tiled path.
  return g.m >= 1 && g.m <= kSmallM && g.k > 0 && g.a && (g.packed_b ? nr % 16 == 0 : !g.trans_b);
}

size_t sgemm_small_m_acc_floats(int64_t m, int64_t cols, int nr) {
  return static_cast<size_t>(m * ((cols + nr - 1) / nr * nr + 16));
}

void sgemm_small_m(const SgemmArgs& g, int nr, int kc_block, int64_t n0, int64_t n1, float* acc) {
  const int m = static_cast<int>(g.m);
  const int64_t a_rs = g.trans_a ? 1 : g.lda, a_cs = g.trans_a ? g.lda : 1;
  const int64_t cols = n1 - n0;
  const int64_t ld = (cols + nr - 1) / nr * nr + 16;  // >= whole panels, and >= cols rounded to 16
  std::fill(acc, acc + m * ld, 0.f);
  if (g.packed_b) {
    // n0 is a panel boundary; the panels are zero-padded to NR columns.
    const int64_t n_pad = (g.n + nr - 1) / nr * nr;
    for (int64_t pc = 0; pc < g.k; pc += kc_block) {
      const int64_t kc = std::min<int64_t>(kc_block, g.k - pc);
      const float* block = g.packed_b + pc * n_pad;
      for (int64_t j0 = n0; j0 < n1; j0 += nr)
        accumulate_rows(m, g.a + pc * a_cs, a_rs, a_cs, kc, block + (j0 / nr) * kc * nr, nr, nr, acc + (j0 - n0), ld);
    }
  } else {
    // Row-major B: whole vectors of columns straight from B, the last few by a scalar loop.
    const int64_t vec = cols / 16 * 16;
    if (vec > 0) accumulate_rows(m, g.a, a_rs, a_cs, g.k, g.b + n0, g.ldb, vec, acc, ld);
    for (int i = 0; i < m; ++i)
      for (int64_t c = vec; c < cols; ++c) {
        float s = 0.f;
        for (int64_t p = 0; p < g.k; ++p) s += g.a[i * a_rs + p * a_cs] * g.b[p * g.ldb + n0 + c];
        acc[i * ld + c] = s;
      }
  }
  // C = act(alpha * acc + bias[j] + beta * C + row_bias[i] + addend[i][j]).
  for (int i = 0; i < m; ++i) {
    float* ci = g.c + i * g.ldc + n0;
    const float* ai = acc + i * ld;
    const float rb = g.row_bias ? g.row_bias[i] : 0.f;
    const float* zi = g.addend ? g.addend + i * g.ld_addend + n0 : nullptr;
    for (int64_t j = 0; j < cols; ++j) {
      float r = g.alpha * ai[j] + (g.bias ? g.bias[n0 + j] : 0.f);
      if (g.beta != 0.f) r += g.beta * ci[j];
      ci[j] = r + rb + (zi ? zi[j] : 0.f);
    }
    if (g.act.kind != FusedActivation::Kind::kNone || g.act.has_affine()) g.act.apply(ci, cols);
  }
}

}  // namespace tessera::cpu
