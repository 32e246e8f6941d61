// Internal to the SGEMM (sgemm.cc): the path for products with at most kSmallM rows. See
// sgemm_small_m.cc.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/cpu/x86/sgemm.h"

namespace tessera::cpu {

/// Rows up to which sgemm() takes the small-M path.
constexpr int64_t kSmallM = 4;

/// True if sgemm_small_m can compute `g` with the ISA path's panel width `nr`: 1 <= m <=
/// kSmallM, k > 0, op(A) given unpacked (g.a), and B either pre-packed (nr a multiple of
/// 16) or row-major (not trans_b).
bool sgemm_small_m_applies(const SgemmArgs& g, int nr);

/// Floats of accumulator scratch sgemm_small_m needs for m rows and `cols` columns.
size_t sgemm_small_m_acc_floats(int64_t m, int64_t cols, int nr);

/// Columns [n0, n1) of C (all g.m rows) with the epilogue of SgemmArgs, on the calling
/// thread. n0 is a multiple of nr (the panel width of g.packed_b); acc holds
/// sgemm_small_m_acc_floats(m, n1 - n0, nr) floats. kc_block: the KC of the packed layout.
void sgemm_small_m(const SgemmArgs& g, int nr, int kc_block, int64_t n0, int64_t n1, float* acc);

}  // namespace tessera::cpu
