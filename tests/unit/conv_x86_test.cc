// The x86 Conv kernel (backends/cpu/x86/conv_x86.cc) against the reference Conv
// (backends/cpu/ref/conv.cc), on random inputs in [-1, 1] over many shapes: 1-D, 2-D and
// 3-D; 1x1 (the no-im2col path), 3x3, 7x7 stride 2, dilation 2; groups, depthwise
// (C = M = group, the direct path) and few channels per group; asymmetric pads, auto_pad
// SAME_UPPER / SAME_LOWER / VALID; batch 2; odd sizes; with and without bias; one and two
// threads; tiles split over threads and tiles that start mid-row.
// Tolerance per element: 1e-4 * (sum |x||w| + |b|), the magnitude of the dot product (so a
// relative bound that does not break on cancellation); the float summation bound
// (K + 3) * eps32 (Higham 2002, section 3.1) is below 1e-4 for every K here (K <= 441).
// The magnitude is computed by the reference Conv on |x|, |w|, |b|.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "backends/cpu/thread_pool.h"
#include "backends/cpu/x86/conv_winograd.h"
#include "backends/cpu/x86/x86_kernels.h"
#include "op_test_util.h"
#include "x86_test_util.h"

namespace tessera {
namespace {

using testing::attr_i;
using testing::available_isas;
using testing::IsaScope;
using testing::attr_ints;
using testing::attr_s;
using testing::make_tensor;
using testing::OpSpec;
using testing::run_op;
using testing::run_op_with;

Tensor random_tensor(const Shape& shape, std::mt19937& rng, bool abs_of = false, const Tensor* src = nullptr) {
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = abs_of ? std::fabs(src->data_as<float>()[i]) : d(rng);
  return make_tensor<float>(shape, v);
}

Tensor abs_tensor(const Tensor& t, std::mt19937& rng) { return random_tensor(t.shape(), rng, true, &t); }

struct Case {
  std::string name;
  Shape x, w;
  std::vector<Attribute> attrs;
};

void check(const Case& c, bool bias, ThreadPool* pool, int threads, bool const_w, std::mt19937& rng,
           KernelFactory factory = &x86::make_Conv, double tile_floor = 0) {
  Tensor x = random_tensor(c.x, rng), w = random_tensor(c.w, rng), b = random_tensor({c.w[0]}, rng);
  std::vector<const Tensor*> ins = {&x, &w};
  if (bias) ins.push_back(&b);
  const std::string what = c.name + (bias ? " bias" : " no bias") + " threads " + std::to_string(threads) +
                           (const_w ? " const W" : "");
  OpSpec spec{"Conv", c.attrs, 11};
  std::vector<int> consts;
  if (const_w) consts = {1, 2};
  auto want = run_op(spec, ins, consts);
  ASSERT_TRUE(want.is_ok()) << what << ": " << want.status().to_string();
  auto got = run_op_with(factory, spec, ins, consts, pool, threads);
  ASSERT_TRUE(got.is_ok()) << what << ": " << got.status().to_string();
  Tensor ax = abs_tensor(x, rng), aw = abs_tensor(w, rng), ab = abs_tensor(b, rng);
  std::vector<const Tensor*> abs_ins = {&ax, &aw};
  if (bias) abs_ins.push_back(&ab);
  auto mag = run_op(spec, abs_ins);
  ASSERT_TRUE(mag.is_ok()) << what;
  const Tensor& wt = want.value()[0];
  const Tensor& gt = got.value()[0];
  ASSERT_EQ(wt.shape(), gt.shape()) << what;
  ASSERT_GT(wt.numel(), 0) << what;
  int bad = 0;
  double max_abs = 0, max_mag = 0;
  for (int64_t i = 0; i < wt.numel(); ++i) max_mag = std::max<double>(max_mag, mag.value()[0].data_as<float>()[i]);
  for (int64_t i = 0; i < wt.numel(); ++i) {
    const double a = gt.data_as<float>()[i], e = wt.data_as<float>()[i];
    const double tol = 1e-4 * mag.value()[0].data_as<float>()[i] + 1e-7 + tile_floor * max_mag;
    max_abs = std::max(max_abs, std::fabs(e));
    if (!(std::fabs(a - e) <= tol) && ++bad <= 3) ADD_FAILURE() << what << " element " << i << ": got " << a << " want " << e;
  }
  EXPECT_GT(max_abs, 0.0) << what << ": an all-zero output cannot tell right from wrong";
}

std::vector<Case> cases() {
  using V = std::vector<int64_t>;
  return {
      {"1x1", {1, 16, 9, 11}, {24, 16, 1, 1}, {}},
      {"1x1 batch 2 big", {2, 40, 33, 35}, {20, 40, 1, 1}, {}},
      {"1x1 stride 2", {1, 8, 9, 9}, {12, 8, 1, 1}, {attr_ints("strides", V{2, 2})}},
      {"1x1 padded", {1, 8, 5, 6}, {12, 8, 1, 1}, {attr_ints("pads", V{1, 0, 0, 2})}},
      {"3x3 pad 1", {1, 8, 13, 17}, {16, 8, 3, 3}, {attr_ints("pads", V{1, 1, 1, 1})}},
      {"3x3 no pad odd", {2, 3, 7, 5}, {5, 3, 3, 3}, {}},
      {"3x3 big (tiles)", {1, 32, 45, 61}, {32, 32, 3, 3}, {attr_ints("pads", V{1, 1, 1, 1})}},
      {"3x3 stride 2 first layer", {1, 3, 64, 96}, {16, 3, 3, 3},
       {attr_ints("strides", V{2, 2}), attr_ints("pads", V{1, 1, 1, 1})}},
      {"7x7 stride 2", {1, 3, 31, 29}, {8, 3, 7, 7}, {attr_ints("strides", V{2, 2}), attr_ints("pads", V{3, 3, 3, 3})}},
      {"dilation 2", {1, 6, 15, 14}, {7, 6, 3, 3}, {attr_ints("dilations", V{2, 2}), attr_ints("pads", V{2, 2, 2, 2})}},
      {"dilation 2x1 stride 1x2", {1, 4, 12, 13}, {6, 4, 3, 2},
       {attr_ints("dilations", V{2, 1}), attr_ints("strides", V{1, 2}), attr_ints("pads", V{1, 0, 2, 1})}},
      {"asymmetric pads", {1, 5, 10, 9}, {6, 5, 3, 3}, {attr_ints("pads", V{0, 2, 1, 0})}},
      {"large pads", {1, 2, 3, 4}, {4, 2, 3, 3}, {attr_ints("pads", V{3, 2, 4, 3})}},
      {"SAME_UPPER stride 2", {2, 4, 11, 10}, {8, 4, 3, 3}, {attr_s("auto_pad", "SAME_UPPER"), attr_ints("strides", V{2, 2})}},
      {"SAME_LOWER", {1, 4, 8, 7}, {8, 4, 4, 2}, {attr_s("auto_pad", "SAME_LOWER")}},
      {"VALID", {1, 4, 8, 7}, {8, 4, 3, 2}, {attr_s("auto_pad", "VALID")}},
      {"groups 2", {1, 8, 9, 10}, {12, 4, 3, 3}, {attr_i("group", 2), attr_ints("pads", V{1, 1, 1, 1})}},
      {"groups 4, 8 out per group", {2, 8, 7, 9}, {32, 2, 3, 3}, {attr_i("group", 4), attr_ints("pads", V{1, 1, 1, 1})}},
      {"groups 3, 2 out per group (direct)", {1, 6, 9, 10}, {6, 2, 3, 3}, {attr_i("group", 3)}},
      {"depthwise", {2, 16, 13, 11}, {16, 1, 3, 3}, {attr_i("group", 16), attr_ints("pads", V{1, 1, 1, 1})}},
      {"depthwise 5x5 stride 1 (flat run)", {1, 6, 9, 12}, {6, 1, 5, 5}, {attr_i("group", 6), attr_ints("pads", V{2, 2, 2, 2})}},
      {"depthwise 3x3 7x7 plane (flat run)", {1, 20, 7, 7}, {20, 1, 3, 3}, {attr_i("group", 20), attr_ints("pads", V{1, 1, 1, 1})}},
      {"depthwise 3x3 stride 2 (quarters)", {2, 24, 15, 13}, {24, 1, 3, 3}, {attr_i("group", 24), attr_ints("strides", V{2, 2}), attr_ints("pads", V{1, 1, 1, 1})}},
      {"depthwise 3x3 stride 2 dilation 2 asymmetric (quarters)", {1, 4, 16, 17}, {4, 1, 3, 3},
       {attr_i("group", 4), attr_ints("strides", V{2, 2}), attr_ints("dilations", V{2, 2}), attr_ints("pads", V{2, 1, 0, 2})}},
      {"depthwise stride 2 5x5", {1, 8, 20, 17}, {8, 1, 5, 5},
       {attr_i("group", 8), attr_ints("strides", V{2, 2}), attr_ints("pads", V{2, 2, 2, 2})}},
      {"depthwise multiplier 4", {1, 4, 9, 9}, {16, 1, 3, 3}, {attr_i("group", 4), attr_ints("pads", V{1, 1, 1, 1})}},
      // Planes too large for the AVX2 lanes kernel's scratch (kDwLanes8MaxScratch): the plane
      // kernel's AVX2 path.
      {"depthwise large plane (plane kernel)", {1, 3, 262, 260}, {3, 1, 3, 3}, {attr_i("group", 3), attr_ints("pads", V{1, 1, 1, 1})}},
      {"depthwise large plane stride 2 (plane kernel)", {1, 2, 520, 523}, {2, 1, 3, 3},
       {attr_i("group", 2), attr_ints("strides", V{2, 2}), attr_ints("pads", V{1, 1, 1, 1})}},
      {"depthwise multiplier 2 (padded-plane path)", {2, 5, 8, 11}, {10, 1, 3, 3},
       {attr_i("group", 5), attr_ints("pads", V{1, 0, 2, 1})}},
      {"depthwise stride (2,1) 5x5 (PP-OCR rec)", {1, 6, 12, 37}, {6, 1, 5, 5},
       {attr_i("group", 6), attr_ints("strides", V{2, 1}), attr_ints("pads", V{2, 2, 2, 2})}},
      {"depthwise dilation 2 asymmetric pads", {1, 3, 10, 9}, {3, 1, 3, 3},
       {attr_i("group", 3), attr_ints("dilations", V{2, 2}), attr_ints("pads", V{0, 3, 2, 1})}},
      {"depthwise pads larger than the input", {1, 2, 1, 2}, {2, 1, 3, 3},
       {attr_i("group", 2), attr_ints("pads", V{3, 3, 3, 3})}},
      {"depthwise wide rows (AVX-512: 5 column blocks, 9 rows)", {1, 3, 9, 70}, {3, 1, 3, 3}, {attr_i("group", 3), attr_ints("pads", V{1, 1, 1, 1})}},
      {"depthwise wide stride 2 (AVX-512: 3 column blocks)", {2, 3, 11, 67}, {3, 1, 3, 3},
       {attr_i("group", 3), attr_ints("strides", V{2, 2}), attr_ints("pads", V{1, 1, 1, 1})}},
      // The AVX-512 depthwise tile shapes (conv_avx512.cc): 4x2, 2x4, 1x8, 2x3 row x block tiles.
      {"depthwise 4 rows x 2 blocks", {1, 2, 4, 30}, {2, 1, 3, 3}, {attr_i("group", 2), attr_ints("pads", V{1, 1, 1, 1})}},
      {"depthwise 2 rows x 4 blocks", {1, 2, 2, 60}, {2, 1, 3, 3}, {attr_i("group", 2), attr_ints("pads", V{1, 1, 1, 1})}},
      {"depthwise 1 row x 8 blocks", {1, 2, 1, 120}, {2, 1, 3, 3}, {attr_i("group", 2), attr_ints("pads", V{1, 1, 1, 1})}},
      {"depthwise 5x5 stride 2x1, 2 rows x 3 blocks (PP-OCR)", {1, 3, 4, 96}, {3, 1, 5, 5},
       {attr_i("group", 3), attr_ints("strides", V{2, 1}), attr_ints("pads", V{2, 2, 2, 2})}},
      {"depthwise 7x7 stride 2 dilation 3 pads 0/5", {1, 2, 30, 40}, {2, 1, 7, 7},
       {attr_i("group", 2), attr_ints("strides", V{2, 2}), attr_ints("dilations", V{3, 3}), attr_ints("pads", V{0, 5, 5, 0})}},
      {"depthwise stride 3 no pads", {1, 4, 13, 14}, {4, 1, 2, 2}, {attr_i("group", 4), attr_ints("strides", V{3, 3})}},
      {"1x1 output", {1, 3, 5, 5}, {4, 3, 5, 5}, {}},
      {"narrow output (transposed path) 5x5 out, 64 channels", {1, 16, 5, 5}, {64, 16, 3, 3}, {attr_ints("pads", V{1, 1, 1, 1})}},
      {"narrow 1-D stride 2 (VAD-like)", {2, 20, 9}, {40, 20, 3}, {attr_ints("pads", V{1, 1}), attr_ints("strides", V{2})}},
      {"narrow groups 2, 33 per group", {2, 8, 4, 4}, {66, 4, 3, 3}, {attr_i("group", 2)}},
      // Images stacked into one product (up to 256 rows): Silero VAD's batch of 31 chunks
      // (STFT conv: 1 channel, kernel 64 stride 32 here, 4 frames), and 70 images of 4
      // positions: products of 64 and 6 images.
      {"narrow batch 31 (VAD STFT-like)", {31, 1, 160}, {40, 1, 64}, {attr_ints("strides", V{32})}},
      {"narrow batch 70 (products of 64 and 6 images)", {70, 6, 4}, {33, 6, 3}, {attr_ints("pads", V{1, 1})}},
      {"narrow batch 3 groups 2, 2-D", {3, 8, 3, 2}, {64, 4, 3, 3}, {attr_i("group", 2), attr_ints("pads", V{1, 1, 1, 1})}},
      // Transposed because the positions tile better as rows (sgemm_tile_area), col^T
      // gathered straight into the packed A on AVX-512 (im2col_packed_a_avx512): 7 x 7
      // outputs (49 positions), stride 2, dilation with asymmetric pads, groups, 2 images in
      // one product, a 1x1 conv.
      {"transposed 7x7 out, K 288", {1, 32, 7, 7}, {64, 32, 3, 3}, {attr_ints("pads", V{1, 1, 1, 1})}},
      {"transposed stride 2", {1, 64, 14, 13}, {64, 64, 3, 3}, {attr_ints("strides", V{2, 2}), attr_ints("pads", V{1, 1, 1, 1})}},
      {"transposed dilation 2 asymmetric pads", {1, 48, 9, 8}, {64, 48, 3, 3},
       {attr_ints("dilations", V{2, 2}), attr_ints("pads", V{3, 2, 1, 0})}},
      {"transposed groups 2", {1, 64, 7, 7}, {128, 32, 3, 3}, {attr_i("group", 2), attr_ints("pads", V{1, 1, 1, 1})}},
      {"transposed batch 2 in one product", {2, 64, 7, 7}, {96, 64, 3, 3}, {attr_ints("dilations", V{2, 2}), attr_ints("pads", V{2, 2, 2, 2})}},
      {"transposed 1x1 (X read in place)", {1, 256, 7, 7}, {256, 256, 1, 1}, {}},
      {"transposed 1x1, 3 images in one product", {3, 64, 7, 7}, {256, 64, 1, 1}, {}},
      {"narrow 1-D 1x1 (X read in place)", {2, 40, 3}, {64, 40, 1}, {}},
      // At most 4 rows in the product (the SGEMM's small-M path) with col^T pre-packed: found
      // by a fuzzer (the small-M path read the packed panels as an unpacked A).
      {"narrow 1 position, 32 channels", {1, 1, 2, 2}, {32, 1, 2, 2}, {}},
      {"narrow 1x1 on 1x1, 3 images (an SE or FC head)", {3, 112, 1, 1}, {86, 112, 1, 1}, {}},
      {"narrow 1x1 stride 2, 4 positions", {1, 16, 4, 4}, {40, 16, 1, 1}, {attr_ints("strides", V{2, 2})}},
      // 9 positions by 233,472 channels: Y (8 MiB) takes the streamed Transpose, on AVX2
      // staged in the product's scratch.
      {"narrow 1x1, 8 MiB output (streamed transpose)", {1, 2, 3, 3}, {233472, 2, 1, 1}, {}},
      {"size-1 spatial", {1, 7, 1, 1}, {9, 7, 1, 1}, {}},
      {"1-D", {2, 5, 37}, {6, 5, 5}, {attr_ints("pads", V{2, 1})}},
      {"1-D stride 3 dilation 2", {1, 4, 50}, {8, 4, 3}, {attr_ints("strides", V{3}), attr_ints("dilations", V{2})}},
      {"1-D 1x1", {1, 6, 300}, {5, 6, 1}, {}},
      {"1-D depthwise", {1, 6, 40}, {6, 1, 3}, {attr_i("group", 6), attr_ints("pads", V{1, 1})}},
      {"3-D", {1, 3, 6, 7, 8}, {5, 3, 3, 3, 3}, {attr_ints("pads", V{1, 1, 1, 1, 1, 1})}},
      {"3-D stride 2 asym", {2, 2, 9, 6, 7}, {4, 2, 3, 2, 3},
       {attr_ints("strides", V{2, 1, 2}), attr_ints("pads", V{0, 1, 1, 1, 0, 2})}},
      {"3-D groups dilation", {1, 4, 7, 8, 9}, {8, 2, 2, 3, 2},
       {attr_i("group", 2), attr_ints("dilations", V{2, 1, 2}), attr_s("auto_pad", "SAME_UPPER")}},
      {"3-D depthwise", {1, 4, 5, 6, 7}, {4, 1, 3, 3, 3}, {attr_i("group", 4), attr_ints("pads", V{1, 1, 1, 1, 1, 1})}},
      {"3-D 1x1", {1, 6, 4, 5, 6}, {7, 6, 1, 1, 1}, {}},
      {"explicit kernel_shape", {1, 3, 8, 8}, {4, 3, 3, 3}, {attr_ints("kernel_shape", V{3, 3})}},
  };
}

// The vector paths of the depthwise kernel, the small-M SGEMM and the fused activation
// follow best_isa() (TSR_V16_VARIANTS in v16.h): each available one is checked, and the
// baseline (kScalar).
std::vector<x86::Isa> v16_paths() {
  std::vector<x86::Isa> v = available_isas();
  v.push_back(x86::Isa::kScalar);
  return v;
}

TEST(ConvX86, MatchesReference) {
  ThreadPool pool(2);
  std::mt19937 rng(1234);
  for (x86::Isa isa : v16_paths()) {
    SCOPED_TRACE(x86::isa_name(isa));
    IsaScope scope(isa);
    for (const Case& c : cases())
      for (bool bias : {false, true})
        for (int threads : {1, 2}) check(c, bias, threads > 1 ? &pool : nullptr, threads, bias && threads > 1, rng);
  }
}

TEST(ConvX86, ManyThreads) {
  // More threads than tiles (the serial-tile path, sgemm split over threads) and a pool
  // smaller than the plan's thread count (several slots per pool thread).
  ThreadPool pool4(4), pool2(2);
  std::mt19937 rng(99);
  using V = std::vector<int64_t>;
  const Case small{"small many threads", {1, 64, 3, 12}, {128, 64, 3, 3}, {attr_ints("pads", V{1, 1, 1, 1})}};
  const Case big{"big many threads", {1, 16, 40, 50}, {24, 16, 3, 3}, {attr_ints("pads", V{1, 1, 1, 1})}};
  const Case pw{"pointwise many threads", {1, 64, 4, 6}, {96, 64, 1, 1}, {}};
  // Two tiles of 128 and 97 columns, each product split over 2 threads (found by a fuzzer:
  // wrong at exactly 2 threads).
  const Case pw15{"pointwise 15x15 two tiles", {1, 256, 15, 15}, {100, 256, 1, 1}, {}};
  for (const Case* c : {&small, &big, &pw, &pw15}) {
    check(*c, true, &pool4, 4, false, rng);
    check(*c, true, &pool2, 4, false, rng);
    check(*c, false, nullptr, 3, false, rng);
    check(*c, true, &pool2, 2, true, rng);
  }
}

// Winograd F(4x4, 3x3) (conv_winograd.cc), forced on every 3x3 stride-1 shape below
// whatever the CPU (make_Conv takes it only on AVX-512 with enough channels and tiles):
// output sizes that are and are not multiples of 4, tile rows longer than one 16-tile
// vector, asymmetric and large pads, VALID, batch 2, one channel, blocks of tile rows (a
// big plane with many channels), and 1 to 3 threads. The transforms mix the 6x6 input patch
// of a tile, so an output whose own taps are all padding (exactly 0 by the reference) gets
// the rounding error of its tile's neighbours: the bound adds 1e-5 of the largest
// magnitude sum |x||w| (observed: up to 1.6e-6 of it; elsewhere the error is at most
// 3.5e-6 of the element's own magnitude, inside the 1e-4 bound).
TEST(ConvX86, WinogradMatchesReference) {
  ThreadPool pool(2), pool3(3);
  std::mt19937 rng(4321);
  using V = std::vector<int64_t>;
  std::vector<Case> shapes = {
      {"wino 8x8 pad 1", {1, 4, 8, 8}, {5, 4, 3, 3}, {attr_ints("pads", V{1, 1, 1, 1})}},
      {"wino odd no pad", {1, 3, 11, 7}, {6, 3, 3, 3}, {}},
      {"wino one channel", {1, 1, 9, 10}, {1, 1, 3, 3}, {attr_ints("pads", V{1, 1, 1, 1})}},
      {"wino wide rows (2 vectors of tiles)", {1, 8, 13, 150}, {12, 8, 3, 3}, {attr_ints("pads", V{1, 1, 1, 1})}},
      {"wino asymmetric pads", {2, 5, 10, 9}, {7, 5, 3, 3}, {attr_ints("pads", V{0, 2, 1, 0})}},
      {"wino pads larger than the kernel", {1, 3, 4, 5}, {4, 3, 3, 3}, {attr_ints("pads", V{3, 2, 4, 3})}},
      {"wino SAME_UPPER", {1, 6, 15, 14}, {9, 6, 3, 3}, {attr_s("auto_pad", "SAME_UPPER")}},
      {"wino VALID 3x3 in", {1, 2, 3, 3}, {3, 2, 3, 3}, {attr_s("auto_pad", "VALID")}},
      {"wino ResNet-like 64ch 28x28", {1, 64, 28, 28}, {64, 64, 3, 3}, {attr_ints("pads", V{1, 1, 1, 1})}},
  };
#if defined(__x86_64__)  // 3 blocks of tile rows: too slow for the reference under qemu-aarch64
  shapes.push_back({"wino blocks of tile rows", {2, 96, 61, 45}, {80, 96, 3, 3}, {attr_ints("pads", V{1, 1, 1, 1})}});
#endif
  const KernelFactory wino = [](const CompileContext& ctx) { return x86::make_Conv_winograd(ctx, false); };
  for (x86::Isa isa : available_isas()) {  // the transforms' vector paths (TSR_V16_VARIANTS)
    SCOPED_TRACE(x86::isa_name(isa));
    IsaScope scope(isa);
    for (const Case& c : shapes)
      for (bool bias : {false, true})
        for (int threads : {1, 2, 3})
          check(c, bias, threads == 1 ? nullptr : threads == 2 ? &pool : &pool3, threads, true, rng, wino, 1e-5);
  }
}

// Inf and NaN in X: the Winograd kernel runs its im2col fallback for such inputs, so the
// non-finite outputs are exactly the reference's (Inf stays Inf on the 9 outputs that read
// it, NaN stays on its 9), where the transforms would give NaN over whole tiles.
TEST(ConvX86, WinogradInfAndNaNInputsMatchTheReference) {
  std::mt19937 rng(77);
  using V = std::vector<int64_t>;
  const KernelFactory wino = [](const CompileContext& ctx) { return x86::make_Conv_winograd(ctx, false); };
  const OpSpec spec{"Conv", {attr_ints("pads", V{1, 1, 1, 1})}, 11};
  for (float bad : {INFINITY, -INFINITY, NAN}) {
    Tensor x = random_tensor({1, 16, 16, 16}, rng), w = random_tensor({16, 16, 3, 3}, rng);
    x.data_as<float>()[5 * 16 + 5] = bad;  // channel 0, pixel (5, 5)
    auto want = run_op(spec, {&x, &w}, {1});
    auto got = run_op_with(wino, spec, {&x, &w}, {1});
    ASSERT_TRUE(want.is_ok() && got.is_ok()) << bad;
    const Tensor& e = want.value()[0];
    const Tensor& a = got.value()[0];
    int nonfinite = 0;
    for (int64_t i = 0; i < e.numel(); ++i) {
      const float ev = e.data_as<float>()[i], av = a.data_as<float>()[i];
      if (!std::isfinite(ev)) {
        ++nonfinite;
        EXPECT_TRUE(std::isnan(ev) ? std::isnan(av) : av == ev) << bad << " element " << i << ": got " << av << " want " << ev;
      } else {
        EXPECT_NEAR(av, ev, 1e-4 * (1 + std::fabs(ev))) << bad << " element " << i;
      }
    }
    EXPECT_EQ(nonfinite, 16 * 9) << bad << ": the 9 outputs per channel that read the pixel";
  }
  // Finite X large enough for the transforms to overflow (V up to 100 |x|, the output
  // transform up to 361 times M): 1e37 gave NaN where the reference is about 1e37; such X
  // runs the fallback too (winograd_input_limit), finite and close to the reference.
  {
    Tensor x = random_tensor({1, 16, 16, 16}, rng), w = random_tensor({16, 16, 3, 3}, rng);
    for (int64_t i = 0; i < x.numel(); ++i) x.data_as<float>()[i] *= 1e37f;
    for (int64_t i = 0; i < w.numel(); ++i) w.data_as<float>()[i] /= 12.f;  // |sum| <= 1.2e38
    auto want = run_op(spec, {&x, &w}, {1});
    auto got = run_op_with(wino, spec, {&x, &w}, {1});
    ASSERT_TRUE(want.is_ok() && got.is_ok());
    for (int64_t i = 0; i < want.value()[0].numel(); ++i) {
      const float ev = want.value()[0].data_as<float>()[i], av = got.value()[0].data_as<float>()[i];
      ASSERT_TRUE(std::isfinite(ev)) << "element " << i;
      EXPECT_NEAR(av, ev, 1e-4 * std::fabs(ev) + 1e32) << "huge X, element " << i;
    }
  }
  // Non-finite weights: Winograd declines (make_Conv then takes the im2col kernel).
  Tensor x = random_tensor({1, 16, 16, 16}, rng), w = random_tensor({16, 16, 3, 3}, rng);
  w.data_as<float>()[7] = INFINITY;
  EXPECT_EQ(run_op_with(wino, spec, {&x, &w}, {1}).status().code(), StatusCode::kUnimplemented);
}

TEST(ConvX86, WinogradDeclinesOtherShapes) {
  // Stride 2, dilation 2, groups, a 5x5 kernel and a run-time W are not its form.
  std::mt19937 rng(5);
  using V = std::vector<int64_t>;
  Tensor x = random_tensor({1, 4, 9, 9}, rng), w = random_tensor({4, 4, 3, 3}, rng), wg = random_tensor({4, 2, 3, 3}, rng),
         w5 = random_tensor({4, 4, 5, 5}, rng);
  const KernelFactory wino = [](const CompileContext& ctx) { return x86::make_Conv_winograd(ctx, false); };
  const struct {
    const char* what;
    std::vector<Attribute> attrs;
    const Tensor* w;
    std::vector<int> consts;
  } cases[] = {{"stride 2", {attr_ints("strides", V{2, 2})}, &w, {1}},
               {"dilation 2", {attr_ints("dilations", V{2, 2})}, &w, {1}},
               {"group 2", {attr_i("group", 2)}, &wg, {1}},
               {"5x5", {}, &w5, {1}},
               {"run-time W", {}, &w, {}}};
  for (const auto& c : cases) {
    auto r = run_op_with(wino, {"Conv", c.attrs, 11}, {&x, c.w}, c.consts);
    EXPECT_EQ(r.status().code(), StatusCode::kUnimplemented) << c.what;
  }
}

TEST(ConvX86, DeclinesOtherDtypes) {
  Tensor x = make_tensor<double>({1, 1, 2, 2}, {1, 2, 3, 4}), w = make_tensor<double>({1, 1, 1, 1}, {2});
  auto r = run_op_with(&x86::make_Conv, {"Conv", {}, 11}, {&x, &w});
  EXPECT_EQ(r.status().code(), StatusCode::kUnimplemented);  // declined: the reference runs it
}

}  // namespace
}  // namespace tessera
