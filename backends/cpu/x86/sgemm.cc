// SGEMM driver: ISA choice, packing, the five loops around the micro-kernel, threads.
// See sgemm.h for the algorithm and its sources.
#include "backends/cpu/x86/sgemm.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "backends/cpu/thread_pool.h"
#include "backends/cpu/x86/parallel_x86.h"
#include "backends/cpu/x86/sgemm_kernels.h"
#include "backends/cpu/x86/sgemm_small_m.h"
#ifdef TSR_SGEMM_NEON
#include "backends/cpu/arm/cpu_features.h"
#endif

namespace tessera::cpu {

namespace {

// ---- the portable micro-kernel (any CPU): 4 x 8, plain C++ the compiler may vectorize ----
constexpr int kGenMr = 4, kGenNr = 8;

void ukernel_generic(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, const SgemmEpilogue& ep) {
  float acc[kGenMr][kGenNr] = {};
  for (int64_t p = 0; p < kc; ++p) {
    for (int i = 0; i < kGenMr; ++i)
      for (int j = 0; j < kGenNr; ++j) acc[i][j] += a[i] * b[j];
    a += kGenMr;
    b += kGenNr;
  }
  for (int i = 0; i < kGenMr && i < ep.rows; ++i) {
    for (int j = 0; j < kGenNr; ++j) {
      float r = ep.alpha * acc[i][j] + (ep.bias ? ep.bias[j] : 0.f);
      if (ep.beta != 0.f) r += ep.beta * c[i * ldc + j];
      if (ep.row_bias) r += ep.row_bias[i];
      if (ep.addend) r += ep.addend[i * ep.ld_addend + j];
      c[i * ldc + j] = ep.act.apply(r);
    }
  }
}

SgemmKernelInfo generic_kernel() { return {kGenMr, kGenNr, 128, 256, 2048, &ukernel_generic}; }

SgemmIsa resolve(SgemmIsa isa) { return isa == SgemmIsa::kAuto ? sgemm_best_isa() : isa; }

SgemmKernelInfo kernel_for(SgemmIsa isa) {
  switch (resolve(isa)) {
#ifdef TSR_SGEMM_X86
    case SgemmIsa::kAvx512: return sgemm_avx512_kernel();
    case SgemmIsa::kAvx2: return sgemm_avx2_kernel();
#endif
#ifdef TSR_SGEMM_NEON
    case SgemmIsa::kNeon: return sgemm_neon_kernel();
#endif
    default: return generic_kernel();
  }
}

constexpr size_t kAlign = 64;
size_t align_up(size_t v) { return (v + kAlign - 1) / kAlign * kAlign; }
int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

// Per-thread scratch: packed A block, packed B block, one MR x NR edge tile.
struct ScratchLayout {
  size_t a_bytes, b_bytes, tile_bytes;
  size_t per_thread() const { return a_bytes + b_bytes + tile_bytes; }
};

// The largest MC block for a part of m rows: ki.mc, or all m rows (rounded up to MR) when
// they are at most a quarter more, so that each B panel is streamed once rather than twice
// (BERT's 128-row products with 9 MiB weights at MC 120: two blocks of 66 and 62 rows).
int64_t mc_limit(const SgemmKernelInfo& ki, int64_t m) {
  const int64_t all = round_up(std::max<int64_t>(m, 1), ki.mr);
  return all <= round_up(ki.mc + ki.mc / 4, ki.mr) ? all : ki.mc;
}

// Sizes for a thread whose part of C is at most m x n; no packed B block when B comes
// pre-packed (SgemmArgs::packed_b).
ScratchLayout layout_for(const SgemmKernelInfo& ki, int64_t m, int64_t n, int64_t k, bool b_prepacked) {
  const int64_t kc = std::min<int64_t>(ki.kc, std::max<int64_t>(k, 1));
  // Room for the MC of any part of at most m rows (mc_limit, monotonic here).
  const int64_t mc = std::min<int64_t>(round_up(ki.mc + ki.mc / 4, ki.mr), round_up(std::max<int64_t>(m, 1), ki.mr));
  const int64_t nc = std::min<int64_t>(ki.nc, round_up(std::max<int64_t>(n, 1), ki.nr));
  return {align_up(static_cast<size_t>(mc * kc) * sizeof(float)),
          b_prepacked ? 0 : align_up(static_cast<size_t>(kc * nc) * sizeof(float)),
          align_up(static_cast<size_t>(ki.mr * ki.nr) * sizeof(float))};
}

// How the M x N output is cut among `parts` threads: ranges of whole NR columns or of whole
// MR rows. A thread reads all of A (M x K) and its columns of B when the cut is by columns,
// its rows of A and all of B when it is by rows, so with T threads the traffic per thread
// is K (M + N / T) against K (M / T + N): columns when N >= M, rows when M > N (e.g. a
// late ResNet-50 conv, W 512 x 4608 times a 4608 x 49 col: by columns each thread would
// stream all 9 MiB of W). Either needs at least `threads` units; else the one with more.
struct Split {
  bool by_columns;
  int parts;
  int64_t unit;  // NR or MR
  int64_t units;
};

Split split_for(const SgemmKernelInfo& ki, int64_t m, int64_t n, int threads) {
  const int64_t col_units = (n + ki.nr - 1) / ki.nr, row_units = (m + ki.mr - 1) / ki.mr;
  Split s;
  if (n >= m) s.by_columns = col_units >= threads || col_units >= row_units;
  else s.by_columns = row_units < threads && col_units >= row_units;
  s.unit = s.by_columns ? ki.nr : ki.mr;
  s.units = s.by_columns ? col_units : row_units;
  s.parts = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(threads, s.units)));
  return s;
}

// Largest part (elements along the split dimension) of a split.
int64_t max_part(const Split& s, int64_t extent) {
  return std::min(extent, (s.units + s.parts - 1) / s.parts * s.unit);
}

// One MR-tall panel, portably (SgemmPackAPanel).
void pack_a_panel_generic(const float* src, int64_t rs, int64_t cs, int64_t kc, int rows, float* dst, int mr) {
  if (cs == 1) {  // A not transposed: read each row contiguously, write with stride MR
    for (int r = 0; r < rows; ++r) {
      const float* s = src + r * rs;
      for (int64_t p = 0; p < kc; ++p) dst[p * mr + r] = s[p];
    }
  } else {  // A transposed (rs == 1): each p gives MR contiguous values
    for (int64_t p = 0; p < kc; ++p) {
      const float* s = src + p * cs;
      for (int r = 0; r < rows; ++r) dst[p * mr + r] = s[r];
    }
  }
  if (rows < mr)
    for (int64_t p = 0; p < kc; ++p)
      for (int r = rows; r < mr; ++r) dst[p * mr + r] = 0.f;
}

// Element (i, p) of op(A), i < m rows, p < k columns, is src[i * rs + p * cs].
// Packs rows [0, mc) x columns [0, kc) into MR-tall panels: dst[(panel * kc + p) * MR + r],
// rows past mc zero; with the ISA's panel packer when it has one.
void pack_a(const float* src, int64_t rs, int64_t cs, int64_t mc, int64_t kc, const SgemmKernelInfo& ki, float* dst) {
  const int mr = ki.mr;
  for (int64_t i0 = 0; i0 < mc; i0 += mr, dst += kc * mr) {
    const int rows = static_cast<int>(std::min<int64_t>(mr, mc - i0));
    if (ki.pack_a_panel) ki.pack_a_panel(src + i0 * rs, rs, cs, kc, rows, dst);
    else pack_a_panel_generic(src + i0 * rs, rs, cs, kc, rows, dst, mr);
  }
}

// One NR-wide panel, portably (SgemmPackBPanel).
void pack_b_panel_generic(const float* src, int64_t rs, int64_t cs, int64_t kc, int cols, float* dst, int nr) {
  if (cs == 1) {  // B not transposed: each p gives NR contiguous values
    for (int64_t p = 0; p < kc; ++p) {
      std::memcpy(dst + p * nr, src + p * rs, static_cast<size_t>(cols) * sizeof(float));
      for (int c = cols; c < nr; ++c) dst[p * nr + c] = 0.f;
    }
  } else {  // B transposed (rs == 1): read each column of op(B) contiguously
    for (int c = 0; c < cols; ++c) {
      const float* s = src + c * cs;
      for (int64_t p = 0; p < kc; ++p) dst[p * nr + c] = s[p];
    }
    for (int64_t p = 0; p < kc; ++p)
      for (int c = cols; c < nr; ++c) dst[p * nr + c] = 0.f;
  }
}

// Element (p, j) of op(B) is src[p * rs + j * cs]. Packs rows [0, kc) x columns [0, nc) into
// NR-wide panels: dst[(panel * kc + p) * NR + c], columns past nc zero; with the ISA's panel
// packer when it has one.
void pack_b(const float* src, int64_t rs, int64_t cs, int64_t kc, int64_t nc, const SgemmKernelInfo& ki, float* dst) {
  const int nr = ki.nr;
  for (int64_t j0 = 0; j0 < nc; j0 += nr, dst += kc * nr) {
    const int cols = static_cast<int>(std::min<int64_t>(nr, nc - j0));
    if (ki.pack_b_panel) ki.pack_b_panel(src + j0 * cs, rs, cs, kc, cols, dst);
    else pack_b_panel_generic(src + j0 * cs, rs, cs, kc, cols, dst, nr);
  }
}

// k == 0: C = act(beta * C + bias + row_bias + addend).
void scale_only(const SgemmArgs& g, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
  for (int64_t i = m0; i < m1; ++i) {
    float* ci = g.c + i * g.ldc;
    for (int64_t j = n0; j < n1; ++j) {
      float r = (g.beta != 0.f ? g.beta * ci[j] : 0.f) + (g.bias ? g.bias[j] : 0.f);
      if (g.row_bias) r += g.row_bias[i];
      if (g.addend) r += g.addend[i * g.ld_addend + j];
      ci[j] = g.act.apply(r);
    }
  }
}

// The block size for `extent` elements in blocks of at most `max_block` (a multiple of
// `unit`): as few blocks as that allows, of nearly equal sizes rounded up to the unit, so
// no block is a sliver (M = 1024 with MC = 336: 266, 266, 266, 226, not 336, 336, 336, 16,
// whose last block would load every packed panel of B for 16 rows).
int64_t balanced_block(int64_t extent, int64_t max_block, int64_t unit) {
  if (extent <= max_block) return max_block;
  const int64_t blocks = (extent + max_block - 1) / max_block;
  return round_up((extent + blocks - 1) / blocks, unit);
}

// The claimed-columns path (sgemm): A packed once for all threads, at most this many bytes
// of it (BERT-base's 128 x 3072 A of the second feed-forward product: 1.6 MB).
constexpr size_t kSharedABytes = size_t{2} << 20;

// Bytes of op(A) packed whole (sgemm_pack_a's layout), 64-byte aligned.
size_t shared_a_bytes(const SgemmKernelInfo& ki, int64_t m, int64_t k) {
  return align_up(static_cast<size_t>(round_up(std::max<int64_t>(m, 1), ki.mr) * std::max<int64_t>(k, 1)) * sizeof(float));
}

// Column chunks per thread on the claimed-columns path: enough that a thread slowed for
// part of the product hands over a share of its columns, few enough that each chunk still
// covers many NR panels (each chunk reads all of the packed A).
constexpr int64_t kChunksPerThread = 3;

// C[m0:m1, n0:n1] on one thread with its own packing buffers.
void sgemm_part(const SgemmArgs& g, const SgemmKernelInfo& ki, const ScratchLayout& lay, uint8_t* scratch, int64_t m0,
                int64_t m1, int64_t n0, int64_t n1) {
  if (g.k == 0) return scale_only(g, m0, m1, n0, n1);
  float* pa = reinterpret_cast<float*>(scratch);
  float* pb = reinterpret_cast<float*>(scratch + lay.a_bytes);
  float* tile = reinterpret_cast<float*>(scratch + lay.a_bytes + lay.b_bytes);
  const int mr = ki.mr, nr = ki.nr;
  // Strides of op(A) (i, p) and op(B) (p, j) in the stored matrices.
  const int64_t a_rs = g.trans_a ? 1 : g.lda, a_cs = g.trans_a ? g.lda : 1;
  const int64_t b_rs = g.trans_b ? 1 : g.ldb, b_cs = g.trans_b ? g.ldb : 1;
  // Sigmoid and Tanh are applied after the micro-kernel; the other activations inside it.
  const bool post_act = !kernel_applies(g.act.kind);
  // MC and NC balanced over this part (KC stays fixed: pre-packed operands are laid out
  // in KC blocks).
  const int64_t mc_max = balanced_block(m1 - m0, mc_limit(ki, m1 - m0), mr), nc_max = balanced_block(n1 - n0, ki.nc, nr);
  // A row-major B that only a few row panels read (a 1x1 Conv to 16 or 24 channels: X is
  // B, 32 x 12544) is read in place by a kernel that can: packing it would cost as much as
  // the product (MobileNetV2's 32 -> 16 at 112 x 112: 0.31 -> 0.23 ms; allowing more than
  // 3 panels gained nothing).
  const bool direct_b = ki.strided_b && ki.masked_cols && !g.packed_b && !g.trans_b && m1 - m0 <= 3 * mr;
  for (int64_t jc = n0; jc < n1; jc += nc_max) {
    const int64_t nc = std::min<int64_t>(nc_max, n1 - jc);
    for (int64_t pc = 0; pc < g.k; pc += ki.kc) {
      const int64_t kc = std::min<int64_t>(ki.kc, g.k - pc);
      const bool first = pc == 0, last = pc + kc == g.k;
      const float* bblock = pb;
      if (g.packed_b) bblock = g.packed_b + pc * round_up(g.n, nr) + jc * kc;  // see sgemm_pack_b
      else if (direct_b) bblock = g.b + pc * g.ldb + jc;
      else pack_b(g.b + pc * b_rs + jc * b_cs, b_rs, b_cs, kc, nc, ki, pb);
      for (int64_t ic = m0; ic < m1; ic += mc_max) {
        const int64_t mc = std::min<int64_t>(mc_max, m1 - ic);
        const float* ablock = pa;
        if (g.packed_a) ablock = g.packed_a + pc * round_up(g.m, mr) + ic * kc;  // see sgemm_pack_a
        else pack_a(g.a + ic * a_rs + pc * a_cs, a_rs, a_cs, mc, kc, ki, pa);
        for (int64_t jr = 0; jr < nc; jr += nr) {
          const int64_t cols = std::min<int64_t>(nr, nc - jr);
          const float* bpanel = direct_b ? bblock + jr : bblock + jr * kc;
          // The next micro-panel of B (kc x NR floats) is prefetched towards L2 while this
          // one is used, a slice per micro-kernel call, spread over the call's kc steps (a
          // pre-packed B, BERT's 9 MiB weights, streams from memory; a burst of kc x NR / 16
          // prefetches before the calls held them up until the lines arrived: 128 x 768 x
          // 3072 with a pre-packed B went from 70% to 80% of peak).
          const int64_t n_ir = (mc + mr - 1) / mr, panel = kc * nr;
          for (int64_t ir = 0; ir < mc; ir += mr) {
            const int64_t rows = std::min<int64_t>(mr, mc - ir);
            const float* apanel = ablock + ir * kc;
            float* c = g.c + (ic + ir) * g.ldc + jc + jr;
            SgemmEpilogue ep;
            if (direct_b) {
              ep.b_stride = g.ldb;
              if (jr + nr < nc && ir == 0) {  // the next panel's rows, a line each
                ep.prefetch = bpanel + nr;
                ep.prefetch_step = g.ldb;
              }
            } else if (jr + nr < nc) {
              const int64_t q = ir / mr, lo = panel * q / n_ir, hi = panel * (q + 1) / n_ir;
              ep.prefetch = bpanel + panel + lo;
              ep.prefetch_step = std::max<int64_t>(1, (hi - lo + kc - 1) / kc);
            }
            ep.alpha = g.alpha;
            ep.beta = first ? g.beta : 1.f;
            ep.bias = first && g.bias ? g.bias + jc + jr : nullptr;
            if (last) {  // the terms that need the whole sum
              ep.row_bias = g.row_bias ? g.row_bias + ic + ir : nullptr;
              ep.addend = g.addend ? g.addend + (ic + ir) * g.ld_addend + jc + jr : nullptr;
              ep.ld_addend = g.ld_addend;
              if (!post_act) ep.act = g.act;
            }
            if (cols == nr || ki.masked_cols) {
              // Full width, or edge columns on a kernel with masked stores (all or the
              // first `rows` rows): the micro-kernel writes C.
              ep.rows = static_cast<int>(rows);
              ep.cols = static_cast<int>(cols);
              ki.kernel(kc, apanel, bpanel, c, g.ldc, ep);
            } else {
              // Edge columns: products into the local tile, then the epilogue on the valid
              // part, row by row.
              ki.kernel(kc, apanel, bpanel, tile, nr, SgemmEpilogue{});
              for (int64_t i = 0; i < rows; ++i) {
                float* ci = c + i * g.ldc;
                const float* ti = tile + i * nr;
                const float rb = ep.row_bias ? ep.row_bias[i] : 0.f;
                const float* zi = ep.addend ? ep.addend + i * ep.ld_addend : nullptr;
                for (int64_t j = 0; j < cols; ++j) {
                  float r = ep.alpha * ti[j] + (ep.bias ? ep.bias[j] : 0.f);
                  if (ep.beta != 0.f) r += ep.beta * ci[j];
                  ci[j] = r + rb + (zi ? zi[j] : 0.f);
                }
                ep.act.apply(ci, cols);
              }
            }
          }
        }
        // Sigmoid, Tanh, Gelu: on the finished mc x nc block, still in cache, a row of nc
        // at a time (per micro-tile row, 16 floats a call, the call overhead and the
        // one-register tail of the elementwise loop cost BERT's Gelu 2x: 128 x 768 x 3072
        // + Gelu, 1 thread, minimum of 100 runs: 7.85 -> 7.35 ms, the product alone 6.8).
        if (last && post_act)
          for (int64_t i = 0; i < mc; ++i) g.act.apply(g.c + (ic + i) * g.ldc + jc, nc);
      }
    }
  }
}

}  // namespace

const char* sgemm_isa_name(SgemmIsa isa) {
  switch (isa) {
    case SgemmIsa::kAuto: return "auto";
    case SgemmIsa::kAvx512: return "avx512";
    case SgemmIsa::kAvx2: return "avx2";
    case SgemmIsa::kGeneric: return "generic";
    case SgemmIsa::kNeon: return "neon";
  }
  return "?";
}

bool sgemm_isa_available(SgemmIsa isa) {
  switch (isa) {
    case SgemmIsa::kAuto:
    case SgemmIsa::kGeneric: return true;
#ifdef TSR_SGEMM_X86
    case SgemmIsa::kAvx512: return __builtin_cpu_supports("avx512f");
    case SgemmIsa::kAvx2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
#ifdef TSR_SGEMM_NEON
    case SgemmIsa::kNeon: return arm::cpu_features().asimd;
#endif
    default: return false;
  }
}

SgemmIsa sgemm_best_isa() {
  static const SgemmIsa best = [] {
    // TESSERA_X86_ISA narrows the choice as it does the other kernels' (isa_x86.cc): avx2
    // runs the AVX2 micro-kernel on an AVX-512 CPU, scalar the portable one.
    if (const char* e = std::getenv("TESSERA_X86_ISA")) {
      if (std::strcmp(e, "avx2") == 0 && sgemm_isa_available(SgemmIsa::kAvx2)) return SgemmIsa::kAvx2;
      if (std::strcmp(e, "scalar") == 0) return SgemmIsa::kGeneric;
    }
    if (sgemm_isa_available(SgemmIsa::kAvx512)) return SgemmIsa::kAvx512;
    if (sgemm_isa_available(SgemmIsa::kAvx2)) return SgemmIsa::kAvx2;
    if (sgemm_isa_available(SgemmIsa::kNeon)) return SgemmIsa::kNeon;
    return SgemmIsa::kGeneric;
  }();
  return best;
}

// The small-M path's unit of columns: whole NR panels and whole 16-column vectors (the
// least common multiple). With a row-major B a part's columns past its last whole 16 are
// summed by a scalar loop, in another order than the vector code; cut at 8 columns (the
// portable path's NR), 8 columns in the middle of the product took that loop at 2 threads
// and differed in the last bits from 1 thread (m = 2, n = 786, k = 3,696).
int64_t small_m_unit(const SgemmKernelInfo& ki) {
  int64_t a = ki.nr, b = 16;
  while (b) {
    const int64_t r = a % b;
    a = b;
    b = r;
  }
  return ki.nr / a * 16;
}

// The small-M path's split of N: whole units (small_m_unit), at most `threads` parts.
Split small_m_split(const SgemmKernelInfo& ki, int64_t n, int threads) {
  Split s;
  s.by_columns = true;
  s.unit = small_m_unit(ki);
  s.units = (n + s.unit - 1) / s.unit;
  s.parts = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(threads, s.units)));
  return s;
}

// Its accumulators: part t of a split into `parts` takes sgemm_small_m_acc_floats(m, its
// columns) <= m * (its units * unit + 16) floats, the parts one after another.
size_t small_m_bytes(const SgemmKernelInfo& ki, int64_t m, int64_t n, int parts) {
  const int64_t unit = small_m_unit(ki);
  return align_up(static_cast<size_t>(m * ((n + unit - 1) / unit * unit + 16 * parts)) * sizeof(float));
}

// Every part's blocks are at most the whole product's (A: MC x KC, B: KC x NC, both capped
// by m, n, k), so `parts` slices of the whole product's layout hold any split, by rows or by
// columns, of any product no larger in m, n and k on at most `threads` threads. (Sizing by
// the split of (m, n) itself was not enough: a Conv's last, narrower tile, 100 x 97 after
// tiles of 100 x 128, is cut by rows where the full tiles were cut by columns, and needed
// more than the scratch had: memory corruption at 2 threads.)
size_t sgemm_scratch_bytes(int64_t m, int64_t n, int64_t k, int threads, SgemmIsa isa, bool b_prepacked) {
  const SgemmKernelInfo ki = kernel_for(isa);
  const int64_t units = std::max((m + ki.mr - 1) / ki.mr, (n + ki.nr - 1) / ki.nr);
  const int64_t parts = std::max<int64_t>(1, std::min<int64_t>(std::max(threads, 1), units));
  size_t bytes = layout_for(ki, m, n, k, b_prepacked).per_thread() * static_cast<size_t>(parts);
  // After the parts, the claimed-columns path's shared packed A: as large as the largest A
  // that path takes (at most kSharedABytes), for any product no larger than this one.
  if (threads > 1) bytes += std::min(kSharedABytes, shared_a_bytes(ki, m, k));
  if (m >= 1) {  // the small-M path may run instead (its own split), for up to kSmallM rows
    const Split sm = small_m_split(ki, n, std::max(threads, 1));
    bytes = std::max(bytes, small_m_bytes(ki, std::min<int64_t>(m, kSmallM), n, sm.parts));
  }
  return bytes;
}

size_t sgemm_packed_b_floats(int64_t n, int64_t k, SgemmIsa isa) {
  const SgemmKernelInfo ki = kernel_for(isa);
  return static_cast<size_t>(round_up(n, ki.nr) * k);
}

void sgemm_pack_b(const float* b, int64_t ldb, bool trans_b, int64_t k, int64_t n, SgemmIsa isa, float* dst) {
  const SgemmKernelInfo ki = kernel_for(isa);
  const int64_t rs = trans_b ? 1 : ldb, cs = trans_b ? ldb : 1;
  for (int64_t pc = 0; pc < k; pc += ki.kc) {
    const int64_t kc = std::min<int64_t>(ki.kc, k - pc);
    pack_b(b + pc * rs, rs, cs, kc, n, ki, dst + pc * round_up(n, ki.nr));
  }
}

SgemmBlocking sgemm_blocking(SgemmIsa isa) {
  const SgemmKernelInfo ki = kernel_for(isa);
  return {ki.mr, ki.nr, ki.kc};
}

int64_t sgemm_tile_area(int64_t m, int64_t n, SgemmIsa isa) {
  const SgemmKernelInfo ki = kernel_for(isa);
  const int64_t edge = m % ki.mr;
  const int64_t rows = m / ki.mr * ki.mr + (edge == 0 ? 0 : ki.edge_rows ? ki.edge_rows(static_cast<int>(edge)) : ki.mr);
  return rows * round_up(n, ki.nr);
}

size_t sgemm_packed_a_floats(int64_t m, int64_t k, SgemmIsa isa) {
  const SgemmKernelInfo ki = kernel_for(isa);
  return static_cast<size_t>(round_up(m, ki.mr) * k);
}

void sgemm_pack_a(const float* a, int64_t lda, bool trans_a, int64_t m, int64_t k, SgemmIsa isa, float* dst) {
  const SgemmKernelInfo ki = kernel_for(isa);
  const int64_t rs = trans_a ? 1 : lda, cs = trans_a ? lda : 1;
  for (int64_t pc = 0; pc < k; pc += ki.kc) {
    const int64_t kc = std::min<int64_t>(ki.kc, k - pc);
    pack_a(a + pc * cs, rs, cs, m, kc, ki, dst + pc * round_up(m, ki.mr));
  }
}

Status PackedGroups::pack(const float* a, int64_t groups, int64_t group_stride, int64_t lda, bool trans_a, int64_t m,
                          int64_t k, SgemmIsa isa, const std::string& what) {
  group_floats = sgemm_packed_a_floats(m, k, isa);
  const size_t bytes = align_up(group_floats * static_cast<size_t>(groups) * sizeof(float));
  void* mem = std::aligned_alloc(kAlign, std::max<size_t>(bytes, kAlign));
  if (!mem) return out_of_memory(what + ": cannot allocate the packed weights");
  data.reset(static_cast<float*>(mem));
  for (int64_t gi = 0; gi < groups; ++gi) sgemm_pack_a(a + gi * group_stride, lda, trans_a, m, k, isa, data.get() + gi * group_floats);
  return Status::ok();
}

void sgemm(const SgemmArgs& args, void* scratch, ThreadPool* pool, int max_threads) {
  if (args.m <= 0 || args.n <= 0) return;
  SgemmArgs g = args;
  if (g.relu && g.act.kind == FusedActivation::Kind::kNone) g.act.kind = FusedActivation::Kind::kRelu;
  g.relu = false;
  const SgemmKernelInfo ki = kernel_for(g.isa);
  int threads = std::max(max_threads, 1);
  if (pool) threads = std::min(threads, pool->num_threads());
  else threads = 1;
  // Small products are not worth waking threads for (~2 MFLOP per extra thread); the
  // small-M path is bound by reading B, so there ~256 KiB of B per thread (MobileNetV2's
  // batch-1 classifier, 1280 x 1000: 5 MiB, which one thread streamed at half the speed).
  const double flops = 2.0 * static_cast<double>(g.m) * static_cast<double>(g.n) * static_cast<double>(g.k);
  const double b_bytes = 4.0 * static_cast<double>(g.n) * static_cast<double>(g.k);
  const bool small_m = sgemm_small_m_applies(g, ki.nr);
  const double per_thread = small_m ? std::max(flops / 2e6, b_bytes / (256.0 * 1024)) : flops / 2e6;
  threads = static_cast<int>(std::max<double>(1, std::min<double>(threads, per_thread)));
  if (small_m) {
    // Few rows: each part accumulates its panels' columns of every row (sgemm_small_m.cc).
    // Scratch was sized for max_threads parts (small_m_bytes); this run uses at most as many.
    const Split use = small_m_split(ki, g.n, threads);
    float* acc = static_cast<float*>(scratch);
    auto run_parts = [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        const int64_t u0 = use.units * t / use.parts, u1 = use.units * (t + 1) / use.parts;
        sgemm_small_m(g, ki.nr, ki.kc, u0 * use.unit, std::min(g.n, u1 * use.unit), acc + g.m * (u0 * use.unit + 16 * t));
      }
    };
    if (use.parts == 1 || !pool) run_parts(0, use.parts);
    else pool->parallel_for(use.parts, run_parts);
    return;
  }
  // This run's split on at most max_threads threads: its parts and their blocks fit the
  // scratch (sgemm_scratch_bytes).
  const Split use = split_for(ki, g.m, g.n, threads);
  const ScratchLayout lay =
      layout_for(ki, use.by_columns ? g.m : max_part(use, g.m), use.by_columns ? max_part(use, g.n) : g.n, g.k,
                 g.packed_b != nullptr);
  uint8_t* base = static_cast<uint8_t*>(scratch);
  // Columns claimed at run time: with the output cut by columns over 2+ threads and an A
  // of at most kSharedABytes packed (each chunk reads all of it, so a larger A, a Conv's
  // weights, keeps the static shares), packed once for all threads unless it already is,
  // the threads take chunks of about units / (parts x kChunksPerThread) NR panels in order
  // from a counter, so a thread whose core is slowed (this machine's busy sibling
  // hyperthreads) takes fewer instead of holding up the product with an equal share. Every
  // element is computed as on the static path (same KC blocks, same kernels): the results
  // are bit-identical. (Chunks that each packed A again were 10-20% slower.)
  const bool claim = pool && use.parts > 1 && use.by_columns && g.k > 0 &&
                     shared_a_bytes(ki, g.m, g.k) <= kSharedABytes &&
                     use.units >= 2 * static_cast<int64_t>(use.parts);
  if (claim) {
    SgemmArgs gs = g;
    if (!g.packed_a) {
      // A packed whole after the parts' scratch (sgemm_scratch_bytes), sgemm_pack_a's
      // layout, in tasks of (KC block, 8 MR panels) spread over the threads.
      float* pa = reinterpret_cast<float*>(base + lay.per_thread() * static_cast<size_t>(use.parts));
      const int64_t a_rs = g.trans_a ? 1 : g.lda, a_cs = g.trans_a ? g.lda : 1, mp = round_up(g.m, ki.mr);
      const int64_t kblocks = (g.k + ki.kc - 1) / ki.kc, rows_per_task = 8 * ki.mr;
      const int64_t row_tasks = (g.m + rows_per_task - 1) / rows_per_task;
      // In use.parts ranges of the tasks: at most this run's threads (max_threads), as the
      // products below.
      x86::run_slots(pool, use.parts, kblocks * row_tasks, [&](int64_t, int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) {
          const int64_t pc = t / row_tasks * ki.kc, i0 = t % row_tasks * rows_per_task;
          const int64_t kc = std::min<int64_t>(ki.kc, g.k - pc), rows = std::min<int64_t>(rows_per_task, g.m - i0);
          pack_a(g.a + i0 * a_rs + pc * a_cs, a_rs, a_cs, rows, kc, ki, pa + pc * mp + i0 * kc);
        }
      });
      gs.packed_a = pa;
    }
    const int64_t chunk = std::max<int64_t>(1, use.units / (use.parts * kChunksPerThread));
    x86::run_slots_claimed(pool, use.parts, use.units, chunk, [&](int64_t slot, int64_t u0, int64_t u1) {
      sgemm_part(gs, ki, lay, base + lay.per_thread() * static_cast<size_t>(slot), 0, g.m, u0 * use.unit,
                 std::min(g.n, u1 * use.unit));
    });
    return;
  }
  auto run_parts = [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t u0 = use.units * t / use.parts, u1 = use.units * (t + 1) / use.parts;
      uint8_t* mine = base + lay.per_thread() * static_cast<size_t>(t);
      if (use.by_columns)
        sgemm_part(g, ki, lay, mine, 0, g.m, u0 * use.unit, std::min(g.n, u1 * use.unit));
      else
        sgemm_part(g, ki, lay, mine, u0 * use.unit, std::min(g.m, u1 * use.unit), 0, g.n);
    }
  };
  if (use.parts == 1 || !pool) run_parts(0, use.parts);
  else pool->parallel_for(use.parts, run_parts);
}

}  // namespace tessera::cpu
