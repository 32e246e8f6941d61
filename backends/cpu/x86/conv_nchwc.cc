// The NCHW16c Conv kernel (conv_nchwc.h): its plan, made once at compile time, and its
// tasks spread over the thread pool. ISA-independent code; the micro-tiles are in
// conv_nchwc_impl.h, instanced by conv_nchwc_avx512.cc and conv_nchwc_avx2.cc.
#include "backends/cpu/x86/conv_nchwc.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "backends/cpu/thread_pool.h"
#include "backends/cpu/x86/conv_winograd.h"
#include "backends/cpu/x86/fused_tail.h"
#include "backends/cpu/x86/isa_x86.h"
#include "backends/cpu/x86/parallel_x86.h"
#include "backends/cpu/x86/x86_kernels.h"
#include "runtime/ops/spatial_attrs.h"

namespace tessera::cpu {
namespace {

constexpr int64_t kFlatRowPixels = 112;          // a 1x1 conv's plane in rows of 8 micro-tiles
constexpr int64_t kTaskInputBytes = 256 * 1024;  // input rows a task reads: about half of L2
constexpr int64_t kWeightBlockBytes = 256 * 1024;  // weights per pass (kc_groups)
constexpr int64_t kRowsOuterWeightBytes = 192 * 1024;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The largest thread's share of the work over the mean share, for tasks of rows_per_task
// rows x ocb_per_task channel blocks (task t = rows (t % row tasks), blocks (t / row
// tasks); work = rows x blocks) dealt out as equal contiguous ranges of tasks: the shares
// of equally fast threads. (run() lets the threads claim tasks in order at run time, so
// that a slowed thread takes fewer; with equal speeds and tasks of unequal size it ends
// no better balanced than this.)
double task_imbalance(int64_t oh, int64_t rows_per_task, int64_t ocb, int64_t ocb_per_task, int threads) {
  const int64_t rt = ceil_div(oh, rows_per_task), total = rt * ceil_div(ocb, ocb_per_task);
  double most = 0, sum = 0;
  for (int s = 0; s < threads; ++s) {
    double w = 0;
    for (int64_t t = total * s / threads; t < total * (s + 1) / threads; ++t) {
      const int64_t r = t % rt, o = t / rt;
      w += static_cast<double>(std::min(oh, (r + 1) * rows_per_task) - r * rows_per_task) *
           static_cast<double>(std::min(ocb, (o + 1) * ocb_per_task) - o * ocb_per_task);
    }
    most = std::max(most, w);
    sum += w;
  }
  return sum > 0 ? most * threads / sum : 1.0;
}

}  // namespace

int64_t NchwcConvPlan::tile_floats() const {
  if (!tiled) return 0;
  const int64_t planes = depthwise ? ocb_per_task : (x_blocked ? icb : c_in);
  return planes * src_plane;
}

int64_t nchwc_conv_tasks(const NchwcConvPlan& p) {
  return ceil_div(p.g.oh, p.rows_per_task) * ceil_div(p.ocb, p.ocb_per_task);
}

void nchwc_conv_task(const NchwcConvPlan& p, const float* x, const float* z, float* y, int64_t t, float* tile) {
  if (p.isa == x86::Isa::kAvx512) nchwc_conv_task_avx512(p, x, z, y, t, tile);
  else nchwc_conv_task_avx2(p, x, z, y, t, tile);
}

bool make_nchwc_conv_plan(x86::Isa isa, const Conv2dGeometry& g0, int64_t c_in, int64_t c_out, int64_t group,
                          bool x_blocked, const float* w, const float* b, const FusedActivation& act, int threads, NchwcConvPlan* p) {
  const bool depthwise = group > 1 && group == c_in && group == c_out;
  if ((group != 1 && !depthwise) || (depthwise && !x_blocked) || c_in < 1 || c_out < 1 || !w) return false;
  if (depthwise && (g0.sw > 2 || g0.kh * g0.kw > kNchwcDwMaxTaps)) return false;
  if (g0.oh < 1 || g0.ow < 1 || g0.kh < 1 || g0.kw < 1 || g0.sh < 1 || g0.sw < 1) return false;
  if (isa != x86::Isa::kAvx512 && isa != x86::Isa::kAvx2) return false;
  NchwcConvPlan& q = *p;
  q.isa = isa;
  q.g = g0;
  Conv2dGeometry& g = q.g;
  q.c_in = c_in;
  q.c_out = c_out;
  q.icb = ceil_div(c_in, kNchwcBlock);
  q.ocb = ceil_div(c_out, kNchwcBlock);
  q.x_blocked = x_blocked;
  q.depthwise = depthwise;
  const int64_t pitch = x_blocked ? kNchwcBlock : 1;
  q.src_pitch = pitch;
  const bool flat = g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 && g.pw == 0 && g.oh == g.ih &&
                    g.ow == g.iw && !depthwise;
  if (flat) {
    const int64_t hw = g.ih * g.iw;
    g.ow = std::min(hw, kFlatRowPixels);
    g.oh = ceil_div(hw, g.ow);
    g.ih = g.oh;
    g.iw = g.ow;
    q.last_ow = hw - (g.oh - 1) * g.ow;
    q.pixels = hw;
    q.tiled = false;
  } else {
    q.last_ow = g.ow;
    q.pixels = g.oh * g.ow;
    const int64_t need_rows = (g.oh - 1) * g.sh + (g.kh - 1) * g.dh + 1;
    const int64_t need_cols = (g.ow - 1) * g.sw + (g.kw - 1) * g.dw + 1;
    // Depthwise reads X in place (padding handled per row and pixel).
    q.tiled = !depthwise && (g.ph > 0 || g.pw > 0 || need_rows > g.ih || need_cols > g.iw);
    q.tile_cols = need_cols;
  }
  const int64_t in_plane = flat ? q.pixels * pitch : g.ih * g.iw * pitch;

  // Micro-tile. AVX-512: 2 blocks x 14 pixels on rows of 14 or more, else as many blocks as
  // the row's pixels leave accumulators for (7 x 7 planes: 4 blocks x 7 pixels). AVX2: 1
  // block x 6 pixels (MobileNetV2 at 1 thread, alternated runs: 2 blocks x 3 pixels 10%
  // slower, 3 x 2 70%).
  if (isa == x86::Isa::kAvx2) q.nob = 1;
  else if (g.ow >= 10) q.nob = 2;
  else if (g.ow >= 8) q.nob = 3;
  else q.nob = 4;
  q.nob = static_cast<int>(std::min<int64_t>(q.nob, q.ocb));
  const int* max_pw = isa == x86::Isa::kAvx512 ? kNchwcMaxPw512 : kNchwcMaxPwAvx2;
  q.pw = static_cast<int>(std::min<int64_t>(max_pw[q.nob], g.ow));
  // AVX2: tiles that wrap rows when rows of fewer than 4 tiles are not a multiple of the
  // tile, so that only the task's last tile is short (ResNet-50's 512-channel 3x3 on 7 x 7
  // had tiles of 6 + 1 per row, the 1-pixel one at a third of the FMA rate: alternated
  // runs, minimum 3.6 -> 3.0 ms, median 4.0 -> 3.3). Wider rows lose little to their last
  // tile, and the pixel offsets cost more there (56 x 56, one alternated run: median 3.1
  // -> 4.1 ms, minimum unchanged).
  q.wrap_rows = isa == x86::Isa::kAvx2 && !flat && g.ow % max_pw[q.nob] != 0 && g.ow < 4 * max_pw[q.nob];
  if (q.wrap_rows) q.pw = static_cast<int>(std::min<int64_t>(max_pw[q.nob], g.oh * g.ow));

  // Tasks: rows whose input fits kTaskInputBytes, all channel blocks; then, for threads,
  // at least 2 tasks per thread, splitting the channel blocks when the weights outweigh
  // the input (each row range reads all the weights) and the rows otherwise.
  const int64_t row_floats = (q.tiled ? q.tile_cols : g.iw) * pitch;
  const int64_t planes = depthwise ? 1 : (x_blocked ? q.icb : c_in);
  const int64_t bytes_per_row = std::max<int64_t>(1, planes * row_floats * g.sh * 4);
  q.rows_per_task = std::clamp<int64_t>(kTaskInputBytes / bytes_per_row, 1, g.oh);
  // Weights outweighing the input (ResNet-50's 14 -> 7 layers: 8 MB against 0.8): every
  // range of rows would read all of them again, so a task takes every row.
  const int64_t taps = g.kh * g.kw;
  const int64_t k = depthwise ? taps : taps * (x_blocked ? q.icb * kNchwcBlock : c_in);
  const int64_t w_bytes = q.ocb * k * kNchwcBlock * 4, x_bytes = planes * in_plane * 4;
  if (!depthwise && w_bytes > x_bytes) q.rows_per_task = g.oh;
  // A tile also copies the kh - 1 rows below its last output row: at least 4 times as many
  // output rows keep that overhead within 25%.
  if (q.tiled) q.rows_per_task = std::min(g.oh, std::max(q.rows_per_task, 4 * ((g.kh - 1) * g.dh + 1 - g.sh)));
  q.ocb_per_task = depthwise ? 1 : q.ocb;
  if (threads > 1) {
    const int64_t want = 2 * threads;
    auto tasks = [&] { return ceil_div(g.oh, q.rows_per_task) * ceil_div(q.ocb, q.ocb_per_task); };
    if (tasks() < want && !depthwise && w_bytes > x_bytes) {
      const int64_t parts = ceil_div(want, ceil_div(g.oh, q.rows_per_task));
      q.ocb_per_task = std::max<int64_t>(1, ceil_div(q.ocb, parts));
    }
    if (tasks() < want) q.rows_per_task = std::max<int64_t>(1, std::min(q.rows_per_task, g.oh * ceil_div(q.ocb, q.ocb_per_task) / want));
    if (tasks() < want && !depthwise) q.ocb_per_task = std::max<int64_t>(1, ceil_div(q.ocb, ceil_div(want, ceil_div(g.oh, q.rows_per_task))));
    // Equal shares: a task count the threads divide (56 rows in tasks of 17 would give one
    // thread 34 rows and the other 22).
    const int64_t ocb_tasks = ceil_div(q.ocb, q.ocb_per_task);
    for (int64_t rt = ceil_div(g.oh, q.rows_per_task); rt <= g.oh && (ceil_div(g.oh, q.rows_per_task) * ocb_tasks) % threads; ++rt)
      q.rows_per_task = ceil_div(g.oh, rt);
  }
  q.rows_per_task = ceil_div(g.oh, ceil_div(g.oh, q.rows_per_task));  // the rows spread evenly
  // Rows that no task count divides evenly among the threads (a 1x1 on 28 x 28 runs as 7
  // rows of 112 pixels: 4 rows on one thread, 3 on the other): split the channel blocks
  // among the threads as well, or in other sizes, when that balances better (ResNet-50's
  // 1x1 128 -> 512 on 28 x 28 at 2 threads: imbalance 1.14 -> 1.00; MobileNetV2's 1x1 to
  // 160 channels on 7 x 7, 10 blocks in tasks of 3: 1.2 -> 1.0 in tasks of 1).
  // Per image: run() deals batch x tasks, which only evens out further with more images.
  // A split whose task weights would outgrow the rows-outer order's budget is not taken
  // where the current one fits it (that order is worth ~25% on small-weight layers; a
  // review found 24 -> 512 3x3 on 56 x 56 at 3 threads losing it for 1.125 -> 1.03).
  if (threads > 1 && !depthwise) {
    double best = task_imbalance(g.oh, q.rows_per_task, q.ocb, q.ocb_per_task, threads);
    const int64_t keep = q.ocb_per_task;
    auto outer_fits = [&](int64_t opt) { return opt * k * kNchwcBlock * 4 <= kRowsOuterWeightBytes; };
    for (int64_t parts = threads; best > 1.02 && parts <= std::max<int64_t>(4 * threads, q.ocb); parts += threads) {
      const int64_t opt = std::max<int64_t>(1, ceil_div(q.ocb, parts));
      if (opt == keep || (outer_fits(keep) && !outer_fits(opt))) continue;
      const double v = task_imbalance(g.oh, q.rows_per_task, q.ocb, opt, threads);
      if (v < best - 0.01) {
        best = v;
        q.ocb_per_task = opt;
      }
    }
  }
  if (q.tiled) {
    q.tile_rows = (q.rows_per_task - 1) * g.sh + (g.kh - 1) * g.dh + 1;
    q.src_plane = q.tile_rows * q.tile_cols * pitch;
    q.src_row = q.tile_cols * pitch;
  } else {
    q.src_plane = in_plane;
    q.src_row = g.iw * pitch;
  }

  // Taps and packed weights.
  q.goff.clear();
  const int64_t cg = depthwise ? 1 : c_in;
  auto W = [&](int64_t oc, int64_t ic, int64_t ky, int64_t kx) -> float {
    if (oc >= c_out || ic >= cg) return 0.f;
    return w[((oc * cg + ic) * g.kh + ky) * g.kw + kx];
  };
  const size_t w_floats = static_cast<size_t>(q.ocb * k * kNchwcBlock);
  const size_t w_alloc = w_floats * sizeof(float);
  void* mem = nullptr;
  // 2 MiB and more in transparent huge pages (where the kernel has them; madvise mode is
  // common): fewer TLB misses while the weights stream from memory (ResNet-50 at 1 thread,
  // minimum of 15 runs, three alternated pairs: 57.6-58.5 against 58.9-60.4 ms).
  if (w_alloc >= (size_t{2} << 20)) {
    const size_t sz = (w_alloc + (size_t{2} << 20) - 1) / (size_t{2} << 20) * (size_t{2} << 20);
    mem = std::aligned_alloc(size_t{2} << 20, sz);
    if (mem) madvise(mem, sz, MADV_HUGEPAGE);
  } else {
    mem = std::aligned_alloc(64, std::max<size_t>(64, (w_alloc + 63) / 64 * 64));
  }
  if (!mem) return false;
  q.w.reset(static_cast<float*>(mem));
  float* wp = q.w.get();
  if (depthwise) {
    for (int64_t ob = 0; ob < q.ocb; ++ob)
      for (int64_t ky = 0; ky < g.kh; ++ky)
        for (int64_t kx = 0; kx < g.kw; ++kx)
          for (int64_t l = 0; l < kNchwcBlock; ++l) *wp++ = W(ob * kNchwcBlock + l, 0, ky, kx);
  } else if (x_blocked) {
    q.inner = static_cast<int>(kNchwcBlock);
    q.istride = 1;
    for (int64_t cb = 0; cb < q.icb; ++cb)
      for (int64_t ky = 0; ky < g.kh; ++ky)
        for (int64_t kx = 0; kx < g.kw; ++kx) q.goff.push_back(cb * q.src_plane + ky * g.dh * q.src_row + kx * g.dw * pitch);
    for (int64_t ob = 0; ob < q.ocb; ++ob)
      for (int64_t cb = 0; cb < q.icb; ++cb)
        for (int64_t ky = 0; ky < g.kh; ++ky)
          for (int64_t kx = 0; kx < g.kw; ++kx)
            for (int64_t i = 0; i < kNchwcBlock; ++i)
              for (int64_t l = 0; l < kNchwcBlock; ++l) *wp++ = W(ob * kNchwcBlock + l, cb * kNchwcBlock + i, ky, kx);
  } else {
    // Plain X (the stem): groups (channel, kernel row), each the kernel row's kw taps,
    // dw floats apart.
    q.inner = static_cast<int>(g.kw);
    q.istride = g.dw;
    for (int64_t c = 0; c < c_in; ++c)
      for (int64_t ky = 0; ky < g.kh; ++ky) q.goff.push_back(c * q.src_plane + ky * g.dh * q.src_row);
    for (int64_t ob = 0; ob < q.ocb; ++ob)
      for (int64_t c = 0; c < c_in; ++c)
        for (int64_t ky = 0; ky < g.kh; ++ky)
          for (int64_t kx = 0; kx < g.kw; ++kx)
            for (int64_t l = 0; l < kNchwcBlock; ++l) *wp++ = W(ob * kNchwcBlock + l, c, ky, kx);
  }
  const int64_t groups = std::max<int64_t>(1, static_cast<int64_t>(q.goff.size()));
  const int64_t group_bytes = q.nob * q.inner * kNchwcBlock * 4;
  q.kc_groups = q.rows_per_task > 1 && groups * group_bytes > 2 * kWeightBlockBytes
                    ? std::max<int64_t>(1, kWeightBlockBytes / group_bytes)
                    : groups;
  // A task's weights within L2: rows outermost, so each micro-tile's input stays in L1
  // while every channel block reads it (ResNet-50's 1x1 64 -> 256 on 56 x 56 alone: 0.91 -> 0.71 ms).
  q.rows_outer = !depthwise && q.kc_groups == groups && q.ocb_per_task * k * kNchwcBlock * 4 <= kRowsOuterWeightBytes;
  q.bias.assign(static_cast<size_t>(q.ocb * kNchwcBlock), 0.f);
  if (b) std::copy(b, b + c_out, q.bias.begin());

  // Sigmoid, Tanh and Gelu after each row (FusedActivation::apply); the others in registers.
  using K = FusedActivation::Kind;
  q.act = act;
  q.post_act = act.kind == K::kSigmoid || act.kind == K::kTanh || act.kind == K::kGelu;
  return true;
}

}  // namespace tessera::cpu

namespace tessera::x86 {
namespace {

using cpu::kNchwcBlock;

int64_t blocks_of(int64_t c) { return (c + kNchwcBlock - 1) / kNchwcBlock; }

// The Conv of conv_nchwc.h: Y (and Z) in NCHW16c, X in NCHW16c or NCHW.
class NchwcConvKernel final : public Kernel {
 public:
  cpu::NchwcConvPlan p;
  int64_t batch = 1, x_image = 0, y_image = 0, tasks = 0;
  int addend_input = -1;
  int threads = 1;
  size_t tile_bytes = 0;

  size_t scratch_bytes() const override { return tile_bytes * static_cast<size_t>(threads); }
  // The residual: each task reads Z only where it writes Y, before writing it (the
  // micro-tiles add Z with the bias, and the per-pixel and depthwise paths just before the
  // store), so Y may be Z's memory, as onnxruntime's NCHWc Conv accumulates onto its Sum
  // input.
  int output_may_alias_input() const override { return addend_input; }
  const char* algorithm() const override { return p.depthwise ? "depthwise NCHW16c tiles" : "direct NCHW16c tiles"; }

  Status run(const KernelContext& ctx) const override {
    const float* x = ctx.input(0).data_as<float>();
    const float* z = addend_input >= 0 ? ctx.input(static_cast<size_t>(addend_input)).data_as<float>() : nullptr;
    float* y = ctx.output(0).data_as<float>();
    const int64_t total = batch * tasks;
    ThreadPool* pool = threads > 1 && total > 1 ? ctx.thread_pool : nullptr;
    const int slots = pool ? threads : 1;
    // Tasks claimed in order at run time, one at a time, by one slot per thread (the slot
    // owns its tile scratch): a thread whose core is slowed (this machine's busy sibling
    // hyperthreads) takes fewer tasks instead of holding up the op with an equal share.
    run_slots_claimed(pool, slots, total, 1, [&](int64_t slot, int64_t begin, int64_t end) {
      float* tile = reinterpret_cast<float*>(static_cast<char*>(ctx.scratch) + static_cast<size_t>(slot) * tile_bytes);
      for (int64_t t = begin; t < end; ++t) {
        const int64_t n = t / tasks;
        cpu::nchwc_conv_task(p, x + n * x_image, z ? z + n * y_image : nullptr, y + n * y_image, t % tasks, tile);
      }
    });
    return Status::ok();
  }
};

// An image's channel blocks [cb0, cb1): the layout conversions and the pools of conv_nchwc.h.
using BlockFn = void (*)(const float* x, int64_t c, int64_t hw, int64_t cb0, int64_t cb1, float* y);
using MaxPoolFn = void (*)(const cpu::Conv2dGeometry& g, const float* x, int64_t cb0, int64_t cb1, float* y);

// NCHW <-> NCHW16c of one tensor [N, C, spatial...].
class NchwcReorderKernel final : public Kernel {
 public:
  int64_t n = 1, c = 1, hw = 1;
  bool to_blocked = true;
  int threads = 1;
  BlockFn convert = nullptr;  // this direction, on the path chosen at plan time

  Status run(const KernelContext& ctx) const override {
    const float* x = ctx.input(0).data_as<float>();
    float* y = ctx.output(0).data_as<float>();
    const int64_t cbs = blocks_of(c), units = n * cbs;
    const int64_t plain = c * hw, blocked = cbs * kNchwcBlock * hw;
    ThreadPool* pool = threads > 1 && units > 1 && units * hw * kNchwcBlock >= 16384 ? ctx.thread_pool : nullptr;
    parallel_for(pool, units, [&](int64_t lo, int64_t hi) {
      for (int64_t u = lo; u < hi; ++u) {
        const int64_t i = u / cbs, cb = u % cbs;
        convert(x + i * (to_blocked ? plain : blocked), c, hw, cb, cb + 1, y + i * (to_blocked ? blocked : plain));
      }
    });
    return Status::ok();
  }
};

// MaxPool (NCHW16c in and out) or GlobalAveragePool (NCHW16c in, plain out), per
// (image, channel block).
class NchwcPoolKernel final : public Kernel {
 public:
  bool global_average = false;
  cpu::Conv2dGeometry g;  // MaxPool
  int64_t n = 1, c = 1;
  int threads = 1;
  MaxPoolFn max_pool = nullptr;        // on the path chosen at plan time
  BlockFn global_average_pool = nullptr;

  Status run(const KernelContext& ctx) const override {
    const float* x = ctx.input(0).data_as<float>();
    float* y = ctx.output(0).data_as<float>();
    const int64_t cbs = blocks_of(c), units = n * cbs;
    const int64_t x_image = cbs * kNchwcBlock * g.ih * g.iw;
    const int64_t y_image = global_average ? c : cbs * kNchwcBlock * g.oh * g.ow;
    ThreadPool* pool = threads > 1 && units > 1 && units * g.ih * g.iw >= 4096 ? ctx.thread_pool : nullptr;
    parallel_for(pool, units, [&](int64_t lo, int64_t hi) {
      for (int64_t u = lo; u < hi; ++u) {
        const int64_t i = u / cbs, cb = u % cbs;
        if (global_average) global_average_pool(x + i * x_image, c, g.ih * g.iw, cb, cb + 1, y + i * y_image);
        else max_pool(g, x + i * x_image, cb, cb + 1, y + i * y_image);
      }
    });
    return Status::ok();
  }
};

// Resize in NCHW16c (X and Y blocked): a copy of 16-channel pixel vectors, output row oy of
// each channel block from input row ih[oy], column ox from column iw[ox]
// (x86::resize_nearest_indices: the reference's indices, so bit-exact). Rows split over
// the threads.
class NchwcResizeKernel final : public Kernel {
 public:
  std::vector<int32_t> ih, iw;
  int64_t n = 1, c = 1, h = 1, w = 1;
  int threads = 1;

  Status run(const KernelContext& ctx) const override {
    const float* x = ctx.input(0).data_as<float>();
    float* y = ctx.output(0).data_as<float>();
    const int64_t oh = static_cast<int64_t>(ih.size()), ow = static_cast<int64_t>(iw.size());
    const int64_t rows = n * blocks_of(c) * oh;
    ThreadPool* pool = threads > 1 && rows * ow >= 4096 ? ctx.thread_pool : nullptr;
    parallel_for(pool, rows, [&](int64_t lo, int64_t hi) {
      for (int64_t r = lo; r < hi; ++r) {
        const int64_t plane = r / oh, oy = r % oh;
        const float* src = x + (plane * h + ih[static_cast<size_t>(oy)]) * w * kNchwcBlock;
        float* dst = y + r * ow * kNchwcBlock;
        for (int64_t ox = 0; ox < ow; ++ox) {
          const float* from = src + iw[static_cast<size_t>(ox)] * kNchwcBlock;
          std::memcpy(dst + ox * kNchwcBlock, from, kNchwcBlock * sizeof(float));
        }
      }
    });
    return Status::ok();
  }
};

// Concat along channels in NCHW16c (every input and Y blocked): every input but the last
// has a multiple of 16 channels, so each image of Y is the inputs' blocks one after another
// (the last input's padding lanes are Y's). Images and inputs split over the threads.
class NchwcConcatKernel final : public Kernel {
 public:
  std::vector<int64_t> floats, offset;  // per input: one image's blocked floats, and where they start in Y's
  int64_t n = 1, y_image = 0;
  int threads = 1;

  Status run(const KernelContext& ctx) const override {
    float* y = ctx.output(0).data_as<float>();
    const int64_t inputs = static_cast<int64_t>(floats.size()), units = n * inputs;
    ThreadPool* pool = threads > 1 && units > 1 && y_image * n >= 16384 ? ctx.thread_pool : nullptr;
    parallel_for(pool, units, [&](int64_t lo, int64_t hi) {
      for (int64_t u = lo; u < hi; ++u) {
        const int64_t i = u / inputs;
        const size_t k = static_cast<size_t>(u % inputs);
        const float* x = ctx.input(k).data_as<float>() + i * floats[k];
        std::memcpy(y + i * y_image + offset[k], x, static_cast<size_t>(floats[k]) * sizeof(float));
      }
    });
    return Status::ok();
  }
};

// Concat's inputs when it can run in NCHW16c: 4-D float32 along axis 1, every input
// present and blocked, every input but the last a multiple of 16 channels.
bool nchwc_concat_ok(const CompileContext& ctx) {
  const size_t k = ctx.node.inputs.size();
  if (k == 0 || k > 32 || ctx.nchwc_inputs != (k == 32 ? 0xFFFFFFFFu : (1u << k) - 1u)) return false;
  int64_t axis = ctx.node.attr_i("axis", 1);
  if (axis < 0) axis += 4;
  if (axis != 1) return false;
  for (size_t i = 0; i < k; ++i) {
    if (!ctx.has_input(i) || ctx.input(i).dtype != DType::kFloat32 || ctx.input(i).shape.size() != 4) return false;
    if (i + 1 < k && ctx.input(i).shape[1] % kNchwcBlock != 0) return false;
  }
  return true;
}

// MaxPool's 2-D geometry for blocked X (one output, float32, 4-D), or false.
bool max_pool_geometry(const CompileContext& ctx, cpu::Conv2dGeometry* g) {
  if (!ctx.has_input(0) || ctx.input(0).dtype != DType::kFloat32 || ctx.input(0).shape.size() != 4) return false;
  if (ctx.node.outputs.size() > 1 && ctx.node.outputs[1] >= 0) return false;  // Indices
  auto geom = window_geometry(ctx.node, ctx.input(0).shape, {}, ctx.node.attr_i("ceil_mode", 0) == 1);
  if (!geom.is_ok() || geom.value().rank != 2) return false;
  *g = cpu::conv2d_geometry(geom.value());
  return g->oh >= 1 && g->ow >= 1;
}

struct ConvShape {
  cpu::Conv2dGeometry g;
  int64_t batch = 0, c_in = 0, c_out = 0, group = 1;
};

// The facts of a Conv node the NCHW16c path needs, or false.
bool conv_shape(const CompileContext& ctx, ConvShape* s) {
  bool has_bias = false;
  if (!float_conv_operands(ctx, &has_bias)) return false;
  const Shape& xs = ctx.input(0).shape;
  const Shape& ws = ctx.input(1).shape;
  if (xs.size() != 4 || ws.size() != 4 || !ctx.input(1).constant) return false;
  if (has_bias && (!ctx.input(2).constant || ctx.input(2).shape.size() != 1 || ctx.input(2).shape[0] != ws[0])) return false;
  auto geom = window_geometry(ctx.node, xs, {ws[2], ws[3]}, false);
  if (!geom.is_ok()) return false;
  const WindowGeometry& wg = geom.value();
  s->batch = xs[0];
  s->c_in = xs[1];
  s->c_out = ws[0];
  s->group = ctx.node.attr_i("group", 1);
  if (s->batch < 1 || s->c_in < 1 || s->c_out < 1) return false;
  const bool depthwise = s->group > 1 && s->group == s->c_in && s->group == s->c_out && ws[1] == 1;
  if (!(s->group == 1 && ws[1] == s->c_in) && !depthwise) return false;
  const cpu::Conv2dGeometry& g = s->g = cpu::conv2d_geometry(wg);
  return g.oh >= 1 && g.ow >= 1 && g.ih >= 1 && g.iw >= 1;
}

}  // namespace

int nchwc_mode(const CompileContext& ctx) {
  const Isa isa = best_isa();
  if ((isa != Isa::kAvx512 && isa != Isa::kAvx2) || !(ctx.node.domain.empty() || ctx.node.domain == "ai.onnx")) return 0;
  const std::string& op = ctx.node.op_type;
  if (op == "Conv") {
    ConvShape s;
    if (!conv_shape(ctx, &s)) return 0;
    const bool depthwise = s.group > 1;
    if (depthwise && (s.g.sw > 2 || s.g.kh * s.g.kw > cpu::kNchwcDwMaxTaps)) return 0;
    // AVX2: a 3x3 conv with 256 or more channels in and out that Winograd takes runs faster
    // so, in NCHW, than by the direct NCHW16c tiles, even with a conversion on each side
    // (ResNet-50's 256-channel 14 x 14 layers at 1 thread: 2.5 against 3.2 ms each); on
    // fewer channels the transforms weigh more and the direct tiles win (64 at 56 x 56,
    // 128 at 28 x 28).
    if (isa == Isa::kAvx2 && s.c_in >= 256 && s.c_out >= 256 && winograd_heuristic_takes(ctx) &&
        !winograd_nchwc_takes(ctx))
      return 0;
    // At least one whole block of output channels.
    return s.c_out >= kNchwcBlock ? 1 : 0;
  }
  // Pools, Resize and Concat only on inputs already blocked (a conversion would cost more
  // than they save).
  if (!(ctx.nchwc_inputs & 1u)) return 0;
  cpu::Conv2dGeometry g;
  if (op == "MaxPool") return max_pool_geometry(ctx, &g) ? 1 : 0;
  if (op == "Resize") {
    std::vector<int32_t> ih, iw;
    return resize_nearest_indices(ctx, &ih, &iw) ? 1 : 0;
  }
  if (op == "Concat") return nchwc_concat_ok(ctx) ? 1 : 0;
  if (op == "GlobalAveragePool") {
    const ValueInfo& x = ctx.input(0);
    return x.dtype == DType::kFloat32 && x.shape.size() == 4 && x.shape[2] * x.shape[3] >= 1 ? 2 : 0;
  }
  return 0;
}

Result<std::unique_ptr<Kernel>> make_nchwc_kernel(const CompileContext& ctx) {
  const int mode = nchwc_mode(ctx);
  if (mode == 0 || ctx.nchwc_output != (mode == 1))
    return internal_error(ctx.node.describe() + ": the NCHW16c path was asked for a node it does not take so");
  if (ctx.node.op_type == "Conv") return make_Conv_nchwc(ctx);
  const Shape& xs = ctx.input(0).shape;
  if (ctx.node.op_type == "Concat") {
    auto k = std::make_unique<NchwcConcatKernel>();
    for (size_t i = 0; i < ctx.node.inputs.size(); ++i) {
      const Shape& s = ctx.input(i).shape;
      k->offset.push_back(k->y_image);
      k->floats.push_back(blocks_of(s[1]) * kNchwcBlock * s[2] * s[3]);
      k->y_image += k->floats.back();
    }
    k->n = xs[0];
    k->threads = std::max(1, ctx.threads);
    return std::unique_ptr<Kernel>(std::move(k));
  }
  if (ctx.node.op_type == "Resize") {
    auto k = std::make_unique<NchwcResizeKernel>();
    resize_nearest_indices(ctx, &k->ih, &k->iw);
    k->n = xs[0], k->c = xs[1], k->h = xs[2], k->w = xs[3];
    k->threads = std::max(1, ctx.threads);
    return std::unique_ptr<Kernel>(std::move(k));
  }
  auto k = std::make_unique<NchwcPoolKernel>();
  const bool avx512 = best_isa() == Isa::kAvx512;
  k->max_pool = avx512 ? &cpu::nchwc_max_pool_avx512 : &cpu::nchwc_max_pool_avx2;
  k->global_average_pool = avx512 ? &cpu::nchwc_global_average_pool_avx512 : &cpu::nchwc_global_average_pool_avx2;
  k->n = xs[0];
  k->c = xs[1];
  k->threads = std::max(1, ctx.threads);
  if (ctx.node.op_type == "MaxPool") {
    max_pool_geometry(ctx, &k->g);
  } else {
    k->global_average = true;
    k->g.ih = xs[2], k->g.iw = xs[3], k->g.oh = 1, k->g.ow = 1;
  }
  return std::unique_ptr<Kernel>(std::move(k));
}

Result<std::unique_ptr<Kernel>> make_Conv_nchwc(const CompileContext& ctx) {
  ConvShape s;
  if (nchwc_mode(ctx) != 1 || !conv_shape(ctx, &s))
    return internal_error(ctx.node.describe() + ": the NCHW16c path was asked for a Conv it does not take");
  FusedTail tail;
  if (!read_fused_tail(ctx, /*allow_col_bias=*/false, &tail)) return std::unique_ptr<Kernel>();
  if (tail.addend >= 0 && !(ctx.nchwc_inputs >> tail.addend & 1u))
    return internal_error(ctx.node.describe() + ": the fused residual must be in NCHW16c");
  const bool x_blocked = ctx.nchwc_inputs & 1u;
  const bool has_bias = ctx.node.inputs.size() > 2 && ctx.has_input(2);
  auto k = std::make_unique<NchwcConvKernel>();
  k->threads = std::max(1, ctx.threads);
  if (!cpu::make_nchwc_conv_plan(best_isa(), s.g, s.c_in, s.c_out, s.group, x_blocked, ctx.input(1).constant->data_as<float>(),
                                 has_bias ? ctx.input(2).constant->data_as<float>() : nullptr, tail.act, k->threads, &k->p))
    return std::unique_ptr<Kernel>();
  k->batch = s.batch;
  k->x_image = (x_blocked ? blocks_of(s.c_in) * kNchwcBlock : s.c_in) * s.g.ih * s.g.iw;
  k->y_image = blocks_of(s.c_out) * kNchwcBlock * s.g.oh * s.g.ow;
  k->tasks = cpu::nchwc_conv_tasks(k->p);
  k->addend_input = tail.addend;
  k->tile_bytes = static_cast<size_t>((k->p.tile_floats() + 15) / 16 * 16) * sizeof(float);
  if (x_blocked && winograd_nchwc_takes(ctx)) return make_Conv_winograd_nchwc(ctx, std::move(k));
  return std::unique_ptr<Kernel>(std::move(k));
}

std::unique_ptr<Kernel> make_nchwc_reorder(const Shape& shape, bool to_blocked, int threads) {
  auto k = std::make_unique<NchwcReorderKernel>();
  k->n = shape.size() > 0 ? shape[0] : 1;
  k->c = shape.size() > 1 ? shape[1] : 1;
  k->hw = 1;
  for (size_t d = 2; d < shape.size(); ++d) k->hw *= shape[d];
  k->to_blocked = to_blocked;
  k->threads = std::max(1, threads);
  const bool avx512 = best_isa() == Isa::kAvx512;
  if (to_blocked) k->convert = avx512 ? &cpu::nchwc_from_nchw_avx512 : &cpu::nchwc_from_nchw_avx2;
  else k->convert = avx512 ? &cpu::nchw_from_nchwc_avx512 : &cpu::nchw_from_nchwc_avx2;
  return k;
}

}  // namespace tessera::x86
