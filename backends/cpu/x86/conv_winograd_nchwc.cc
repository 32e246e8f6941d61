// Conv (ONNX Conv-1/11), 2-D 3x3, stride 1, dilation 1, one group, float32, on the CPU's
// blocked layout NCHW16c (X, Y and the fused residual Z as [N, C/16, H, W, 16]), by
// Winograd's minimal filtering F(4x4, 3x3) (Lavin & Gray, "Fast Algorithms for
// Convolutional Neural Networks", CVPR 2016), with the same transforms as the NCHW kernel
// (conv_winograd.cc, winograd_f43.h) but vectorized over channels instead of tiles, so that
// it reads and writes the blocked layout as it is (no conversion on either side):
//
//   V[xi] (T x C)  = (B^T d B)[xi]            per tile and block of 16 input channels,
//   M[xi] (T x M)  = V[xi] * U[xi]^T          36 GEMMs (the SGEMM; U[xi]^T packed once at
//                                             load as its B operand),
//   Y tile (4x4)   = A^T M A + bias (+ Z), then the fused activation, per tile and block
//                                             of 16 output channels,
//
// with T the tiles of a block of tiles (4x4 outputs each, row by row over the image), d the
// 6x6 input patch (zero in the padding) whose top-left corner is (4 ty - pad_top, 4 tx -
// pad_left), and xi = 6 r + c the position in the 6x6 transformed tile. It takes 36 C M
// multiplications per 16 outputs where the direct kernel takes 9 * 16 C M: 4x fewer; the
// transforms and the GEMMs' packing of V cost about O(36 (C + M)) per tile.
//
// Blocking: a block's V and M (36 T (C + M) floats) are kept near kBlockBytes (the L2);
// T is rounded to whole MR-row panels of the SGEMM. Threads: each block is one unit of work
// (transforms and GEMMs on one thread, in that thread's own V, M and SGEMM scratch), units
// claimed at run time; when an image has too few tiles for that (under 12 a thread: a
// 14 x 14 output has 16), each block's three steps are split over the threads instead
// (input tiles, the 36 GEMMs, output tiles), one shared V and M.
//
// Error: as the NCHW kernel's (a few times the direct sum's rounding error; about 1e-6 of
// sum |x||w| on random data). Inf, NaN and overflow: as the NCHW kernel, weights must be
// finite, and a run whose X holds Inf, NaN or a magnitude past winograd_input_limit runs
// the direct NCHW16c kernel instead (conv_winograd.h).
//
// The vector code is written on GCC vectors of 16 floats (v16.h), built for AVX-512F and
// AVX2 (the NCHW16c layout's ISAs) with TSR_V16_VARIANTS.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "backends/cpu/thread_pool.h"
#include "backends/cpu/x86/conv_nchwc.h"
#include "backends/cpu/x86/conv_winograd.h"
#include "backends/cpu/x86/fused_tail.h"
#include "backends/cpu/x86/parallel_x86.h"
#include "backends/cpu/x86/sgemm.h"
#include "backends/cpu/x86/v16.h"
#include "backends/cpu/x86/winograd_f43.h"
#include "runtime/ops/spatial_attrs.h"

namespace tessera::x86 {

namespace {

constexpr int64_t kXi = 36;                // positions of the 6x6 transformed tile
constexpr int64_t kB = 16;                 // channels per NCHW16c block
constexpr size_t kBlockBytes = 512u << 10;  // target bytes of one block's V and M

inline size_t align64(size_t bytes) { return (bytes + 63) / 64 * 64; }

// One image's geometry: tiles t = ty * tw + tx, ty < th, tx < tw.
struct WncGeometry {
  int64_t c_in = 0, c_out = 0, ih = 0, iw = 0, oh = 0, ow = 0, pad_t = 0, pad_l = 0, th = 0, tw = 0;
};

// Input transform of the tiles [t0, t1) of one image x (NCHW16c): V[xi] row t - t_base,
// columns [16 cb, 16 cb + 16) = (B^T d B)[xi] of channel block cb; V[xi] starts xi * v_xi
// floats after v, rows c_in floats apart.
template <class V>
__attribute__((always_inline)) inline void input_tiles_body(const float* x, const WncGeometry& g, int64_t t0,
                                                            int64_t t1, int64_t t_base, float* v, int64_t v_xi) {
  const int64_t blocks = g.c_in / kB, plane = g.ih * g.iw * kB;
  const V zero = {};
  for (int64_t t = t0; t < t1; ++t) {
    const int64_t ty = t / g.tw, tx = t % g.tw;
    const int64_t y0 = 4 * ty - g.pad_t, x0 = 4 * tx - g.pad_l;
    // The patch's rows [i0, i1) and columns [j0, j1) inside X.
    const int i0 = static_cast<int>(std::max<int64_t>(0, -y0)), i1 = static_cast<int>(std::min<int64_t>(6, g.ih - y0));
    const int j0 = static_cast<int>(std::max<int64_t>(0, -x0)), j1 = static_cast<int>(std::min<int64_t>(6, g.iw - x0));
    const bool inside = i0 == 0 && j0 == 0 && i1 == 6 && j1 == 6;
    float* vt = v + (t - t_base) * g.c_in;
    for (int64_t cb = 0; cb < blocks; ++cb) {
      const float* xb = x + cb * plane;
      V r[6][6];  // r[i] = (d B)[i]: B^T along row i
      for (int i = 0; i < 6; ++i) {
        V d[6];
        if (inside) {
          const float* xr = xb + ((y0 + i) * g.iw + x0) * kB;
          for (int j = 0; j < 6; ++j) d[j] = load<V>(xr + j * kB);
        } else {
          for (int j = 0; j < 6; ++j)
            d[j] = i >= i0 && i < i1 && j >= j0 && j < j1 ? load<V>(xb + ((y0 + i) * g.iw + x0 + j) * kB) : zero;
        }
        bt6(d[0], d[1], d[2], d[3], d[4], d[5], r[i]);
      }
      for (int c = 0; c < 6; ++c) {
        V z[6];
        bt6(r[0][c], r[1][c], r[2][c], r[3][c], r[4][c], r[5][c], z);
        for (int k = 0; k < 6; ++k) store16(vt + (6 * k + c) * v_xi + cb * kB, z[k]);
      }
    }
  }
}
TSR_V16_VARIANTS(, void, input_tiles,
                 (const float* x, const WncGeometry& g, int64_t t0, int64_t t1, int64_t t_base, float* v, int64_t v_xi),
                 (x, g, t0, t1, t_base, v, v_xi))

// The fused activation (and its affine map) on one vector; kinds without a vector form
// (LeakyRelu, Sigmoid, HardSigmoid, Tanh, Gelu) are applied after the store (`scalar`).
template <class V>
__attribute__((always_inline)) inline V activate_vec(const FusedActivation& a, V v) {
  using K = FusedActivation::Kind;
  const V zero = {};
  if (a.kind == K::kRelu) {
    v = lt_select(v, zero, zero, v);
  } else if (a.kind == K::kClip) {
    const V lo = zero + a.alpha, hi = zero + a.beta;
    v = lt_select(v, lo, lo, v);
    v = gt_select(v, hi, hi, v);
  } else if (a.kind == K::kHardSwish) {
    const V one = zero + 1.f;
    V u = v / 6.f + 0.5f;
    u = lt_select(u, zero, zero, u);
    u = gt_select(u, one, one, u);
    v = v * u;
  }
  return a.has_affine() ? v * a.scale + a.shift : v;
}

// Output transform of the tiles [t0, t1) of one image: Y (NCHW16c) tile = A^T M A + bias
// (+ Z, same layout; may be Y itself: each element is read before it is written), then the
// activation; M[xi] row t - t_base, columns [16 ob, 16 ob + 16) for output block ob, M[xi]
// m_xi floats after M[xi - 1], rows c_out floats apart. Outputs past the plane's edge (the
// last tile row and column when oh or ow is not a multiple of 4) are not written.
template <class V>
__attribute__((always_inline)) inline void output_tiles_body(const float* m, int64_t m_xi, const WncGeometry& g,
                                                             int64_t t0, int64_t t1, int64_t t_base, const float* bias,
                                                             const float* z, float* y, const FusedActivation& act) {
  using K = FusedActivation::Kind;
  const int64_t blocks = g.c_out / kB, plane = g.oh * g.ow * kB;
  const bool vec_act = act.kind == K::kNone || act.kind == K::kRelu || act.kind == K::kClip || act.kind == K::kHardSwish;
  const bool any_act = act.kind != K::kNone || act.has_affine();
  for (int64_t t = t0; t < t1; ++t) {
    const int64_t ty = t / g.tw, tx = t % g.tw;
    const int ni = static_cast<int>(std::min<int64_t>(4, g.oh - 4 * ty)), nj = static_cast<int>(std::min<int64_t>(4, g.ow - 4 * tx));
    const float* mt = m + (t - t_base) * g.c_out;
    for (int64_t ob = 0; ob < blocks; ++ob) {
      const float* mb = mt + ob * kB;
      V s[6][4];  // s[r] = (M A)[r]: A^T along row r
      for (int r = 0; r < 6; ++r) {
        const float* mr = mb + 6 * r * m_xi;
        at6(load<V>(mr), load<V>(mr + m_xi), load<V>(mr + 2 * m_xi), load<V>(mr + 3 * m_xi), load<V>(mr + 4 * m_xi),
            load<V>(mr + 5 * m_xi), s[r]);
      }
      const V bv = load<V>(bias + ob * kB);
      float* yb = y + ob * plane + (4 * ty * g.ow + 4 * tx) * kB;
      const float* zb = z ? z + ob * plane + (4 * ty * g.ow + 4 * tx) * kB : nullptr;
      for (int j = 0; j < nj; ++j) {
        V o[4];  // o[i]: output row i, column j of the tile
        at6(s[0][j], s[1][j], s[2][j], s[3][j], s[4][j], s[5][j], o);
        for (int i = 0; i < ni; ++i) {
          const int64_t off = (i * g.ow + j) * kB;
          V val = o[i] + bv;
          if (zb) val += load<V>(zb + off);
          if (vec_act) {
            if (any_act) val = activate_vec(act, val);
            store16(yb + off, val);
          } else {
            store16(yb + off, val);
            act.apply(yb + off, kB);
          }
        }
      }
    }
  }
}
TSR_V16_VARIANTS(, void, output_tiles,
                 (const float* m, int64_t m_xi, const WncGeometry& g, int64_t t0, int64_t t1, int64_t t_base,
                  const float* bias, const float* z, float* y, const FusedActivation& act),
                 (m, m_xi, g, t0, t1, t_base, bias, z, y, act))

class WinogradNchwcKernel final : public Kernel {
 public:
  WncGeometry g;
  int64_t batch = 1, tiles = 0;  // tiles per image: th * tw
  int64_t tb = 0;                // tiles per block
  bool tile_split = true;        // blocks as units of work (else each block's steps split)
  int addend_input = -1;
  FusedActivation act;
  int threads = 1;
  cpu::SgemmIsa isa = cpu::SgemmIsa::kAuto;
  std::vector<float> bias;  // c_out values (0 without B)
  std::unique_ptr<float, void (*)(void*)> packed_u{nullptr, &std::free};
  size_t u_xi = 0;  // floats per packed U[xi]^T (64-byte multiple)
  size_t v_bytes = 0, m_bytes = 0, g_bytes = 0, scratch = 0;
  float x_limit = 0.f;               // winograd_input_limit: larger |X| runs the fallback
  std::unique_ptr<Kernel> fallback;  // the direct NCHW16c kernel: for X with Inf, NaN or too large

  size_t scratch_bytes() const override { return std::max(scratch, fallback->scratch_bytes()); }
  // Z is read per output element just before that element is written, by the same thread.
  int output_may_alias_input() const override { return addend_input; }
  const char* algorithm() const override { return "Winograd F(4x4, 3x3) on NCHW16c"; }

  void gemm(int64_t xi, int64_t rows, const float* v, float* m, void* gs) const {
    cpu::SgemmArgs a;
    a.m = rows;
    a.n = g.c_out;
    a.k = g.c_in;
    a.a = v + xi * tb * g.c_in;
    a.lda = g.c_in;
    a.packed_b = packed_u.get() + static_cast<size_t>(xi) * u_xi;
    a.c = m + xi * tb * g.c_out;
    a.ldc = g.c_out;
    a.isa = isa;
    cpu::sgemm(a, gs, nullptr, 1);
  }

  Status run(const KernelContext& ctx) const override {
    const float* x = ctx.input(0).data_as<float>();
    if (!winograd_all_within(x, batch * g.c_in * g.ih * g.iw, x_limit)) return fallback->run(ctx);
    const float* z = addend_input >= 0 ? ctx.input(static_cast<size_t>(addend_input)).data_as<float>() : nullptr;
    float* y = ctx.output(0).data_as<float>();
    ThreadPool* pool = threads > 1 ? ctx.thread_pool : nullptr;
    const int slots = pool ? threads : 1;
    char* base = static_cast<char*>(ctx.scratch);
    const int64_t x_image = g.c_in * g.ih * g.iw, y_image = g.c_out * g.oh * g.ow;
    const int64_t v_xi = tb * g.c_in, m_xi = tb * g.c_out;
    for (int64_t n = 0; n < batch; ++n) {
      const float* xn = x + n * x_image;
      const float* zn = z ? z + n * y_image : nullptr;
      float* yn = y + n * y_image;
      if (tile_split || !pool) {
        run_slots_claimed(pool, slots, tiles, tb, [&](int64_t slot, int64_t t0, int64_t t1) {
          char* s = base + static_cast<size_t>(slot) * (v_bytes + m_bytes + g_bytes);
          float* v = reinterpret_cast<float*>(s);
          float* m = reinterpret_cast<float*>(s + v_bytes);
          void* gs = s + v_bytes + m_bytes;
          for (int64_t b0 = t0; b0 < t1; b0 += tb) {
            const int64_t b1 = std::min(t1, b0 + tb);
            input_tiles(xn, g, b0, b1, b0, v, v_xi);
            for (int64_t xi = 0; xi < kXi; ++xi) gemm(xi, b1 - b0, v, m, gs);
            output_tiles(m, m_xi, g, b0, b1, b0, bias.data(), zn, yn, act);
          }
        });
        continue;
      }
      float* v = reinterpret_cast<float*>(base);
      float* m = reinterpret_cast<float*>(base + v_bytes);
      char* gslots = base + v_bytes + m_bytes;
      for (int64_t b0 = 0; b0 < tiles; b0 += tb) {
        const int64_t b1 = std::min(tiles, b0 + tb);
        run_slots_claimed(pool, slots, b1 - b0, 2, [&](int64_t, int64_t i0, int64_t i1) {
          input_tiles(xn, g, b0 + i0, b0 + i1, b0, v, v_xi);
        });
        run_slots_claimed(pool, slots, kXi, 1, [&](int64_t slot, int64_t x0, int64_t x1) {
          for (int64_t xi = x0; xi < x1; ++xi) gemm(xi, b1 - b0, v, m, gslots + static_cast<size_t>(slot) * g_bytes);
        });
        run_slots_claimed(pool, slots, b1 - b0, 2, [&](int64_t, int64_t i0, int64_t i1) {
          output_tiles(m, m_xi, g, b0 + i0, b0 + i1, b0, bias.data(), zn, yn, act);
        });
      }
    }
    return Status::ok();
  }
};

// The node's geometry when the NCHW16c Winograd kernel takes it (see conv_winograd.h), else
// false.
bool winograd_nchwc_form(const CompileContext& ctx, WncGeometry* g, int64_t* batch) {
  const Isa isa = best_isa();
  if (isa != Isa::kAvx512 && isa != Isa::kAvx2) return false;
  for (const char* var : {"TESSERA_WINOGRAD", "TESSERA_WINOGRAD_NCHWC"})
    if (const char* env = std::getenv(var); env && std::strcmp(env, "0") == 0) return false;
  if (!ctx.has_input(0) || !ctx.has_input(1) || !ctx.input(1).constant) return false;
  const ValueInfo& xi = ctx.input(0);
  const ValueInfo& wi = ctx.input(1);
  if (xi.dtype != DType::kFloat32 || wi.dtype != DType::kFloat32 || xi.shape.size() != 4 || wi.shape.size() != 4) return false;
  const Shape& xs = xi.shape;
  const Shape& ws = wi.shape;
  if (ws[2] != 3 || ws[3] != 3 || ctx.node.attr_i("group", 1) != 1 || ws[1] != xs[1]) return false;
  if (xs[0] < 1 || xs[1] % kB != 0 || ws[0] % kB != 0 || xs[1] < kB || ws[0] < kB) return false;
  auto geom = window_geometry(ctx.node, xs, {3, 3}, false);
  if (!geom.is_ok()) return false;
  const WindowGeometry& wg = geom.value();
  for (int d = 0; d < 2; ++d)
    if (wg.strides[d] != 1 || wg.dilations[d] != 1 || wg.out[d] < 1) return false;
  g->c_in = xs[1];
  g->c_out = ws[0];
  g->ih = wg.in[0];
  g->iw = wg.in[1];
  g->oh = wg.out[0];
  g->ow = wg.out[1];
  g->pad_t = wg.pads_begin[0];
  g->pad_l = wg.pads_begin[1];
  g->th = (g->oh + 3) / 4;
  g->tw = (g->ow + 3) / 4;
  *batch = xs[0];
  // At least 16 tiles (a 13 x 13 output): on smaller planes the GEMMs' rows are too few for
  // reading the 4x larger transformed weights to pay (ResNet-50's 7 x 7 layers, 4 tiles).
  return g->th * g->tw >= 16;
}

}  // namespace

bool winograd_nchwc_takes(const CompileContext& ctx) {
  WncGeometry g;
  int64_t batch = 0;
  return winograd_nchwc_form(ctx, &g, &batch);
}

Result<std::unique_ptr<Kernel>> make_Conv_winograd_nchwc(const CompileContext& ctx, std::unique_ptr<Kernel> direct) {
  auto k = std::make_unique<WinogradNchwcKernel>();
  if (!direct || !winograd_nchwc_form(ctx, &k->g, &k->batch))
    return internal_error(ctx.node.describe() + ": the NCHW16c Winograd kernel was asked for a Conv it does not take");
  const float* w = ctx.input(1).constant->data_as<float>();
  const WncGeometry& g = k->g;
  if (!winograd_all_within(w, g.c_out * g.c_in * 9, std::numeric_limits<float>::max())) return direct;  // see conv_winograd.h
  FusedTail tail;
  if (!read_fused_tail(ctx, /*allow_col_bias=*/false, &tail)) return direct;
  k->fallback = std::move(direct);
  k->addend_input = tail.addend;
  k->act = tail.act;
  k->threads = std::max(1, ctx.threads);
  k->isa = cpu::sgemm_best_isa();
  k->tiles = g.th * g.tw;
  k->bias.assign(static_cast<size_t>(g.c_out), 0.f);
  if (ctx.node.inputs.size() > 2 && ctx.has_input(2)) {
    const float* b = ctx.input(2).constant->data_as<float>();  // constant: make_Conv_nchwc's checks
    std::copy(b, b + g.c_out, k->bias.begin());
  }
  // Tiles per block. Each block reads all of U (36 C M floats, from L3 or memory: in a
  // whole model other layers' weights evict it between runs), so blocks small enough for
  // their V and M to stay in L2 (kBlockBytes, in whole MR-row panels) pay U's traffic once
  // per block; one block per image (per thread's share of the tiles) pays it once but
  // writes and reads V and M beyond L2. The cheaper in bytes moved: ResNet-50's 64-channel
  // 56 x 56 layers take L2 blocks (U 0.6 MB, V and M 3.6 MB), the 128-channel 28 x 28
  // (U 2.4 MB) and 256-channel 14 x 14 (U 9.4 MB) one block; the 14 x 14 in blocks of 6
  // tiles ran 1.3x slower than in NCHW in the whole model (U read 3 times a run).
  k->tile_split = k->tiles >= 12 * k->threads;
  const int64_t mr = cpu::sgemm_blocking(k->isa).mr;
  const double per_tile = static_cast<double>(kXi * (g.c_in + g.c_out) * sizeof(float));
  const double u_bytes = static_cast<double>(kXi * g.c_in * g.c_out * sizeof(float));
  const int64_t share = k->tile_split ? (k->tiles + k->threads - 1) / k->threads : k->tiles;  // tiles of one unit of work
  const int64_t tb_l2 = std::max<int64_t>(mr, static_cast<int64_t>(kBlockBytes / per_tile) / mr * mr);
  const double l2_cost = static_cast<double>((share + tb_l2 - 1) / tb_l2) * u_bytes;
  const double one_cost = u_bytes + (static_cast<double>(share) * per_tile > kBlockBytes ? 2 * share * per_tile : 0.0);
  k->tb = std::min(one_cost < l2_cost ? share : tb_l2, k->tiles);
  k->v_bytes = align64(static_cast<size_t>(kXi * k->tb * g.c_in) * sizeof(float));
  k->m_bytes = align64(static_cast<size_t>(kXi * k->tb * g.c_out) * sizeof(float));
  k->g_bytes = align64(cpu::sgemm_scratch_bytes(k->tb, g.c_out, g.c_in, 1, k->isa, /*b_prepacked=*/true));
  const size_t slots = static_cast<size_t>(k->threads);
  k->scratch = k->tile_split ? slots * (k->v_bytes + k->m_bytes + k->g_bytes) : k->v_bytes + k->m_bytes + slots * k->g_bytes;
  // U[xi] (c_out x c_in), then U[xi]^T packed as the SGEMM's B (c_in x c_out) per xi.
  const size_t plane = static_cast<size_t>(g.c_out * g.c_in);
  std::unique_ptr<float, void (*)(void*)> u{static_cast<float*>(std::malloc(kXi * plane * sizeof(float))), &std::free};
  k->u_xi = align64(cpu::sgemm_packed_b_floats(g.c_out, g.c_in, k->isa) * sizeof(float)) / sizeof(float);
  k->packed_u.reset(static_cast<float*>(std::aligned_alloc(64, kXi * k->u_xi * sizeof(float))));
  if (!u || !k->packed_u) return out_of_memory(ctx.node.describe() + ": cannot allocate the Winograd-transformed weights");
  winograd_f43_weights(w, g.c_out, g.c_in, u.get());
  k->x_limit = winograd_input_limit(u.get(), kXi * g.c_out * g.c_in, g.c_in);
  if (!(k->x_limit > 0.f)) return std::move(k->fallback);
  for (int64_t xi = 0; xi < kXi; ++xi)
    cpu::sgemm_pack_b(u.get() + xi * plane, g.c_in, /*trans_b=*/true, g.c_in, g.c_out, k->isa,
                      k->packed_u.get() + xi * k->u_xi);
  return std::unique_ptr<Kernel>(std::move(k));
}

}  // namespace tessera::x86
