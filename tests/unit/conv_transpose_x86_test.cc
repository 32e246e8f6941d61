// The x86 ConvTranspose kernel (backends/cpu/x86/conv_transpose_x86.cc) against the
// reference ConvTranspose (backends/cpu/ref/conv_transpose.cc), on random inputs in [-1, 1]
// over 2-D shapes: the PP-OCR detector's 2x2 stride 2, 3x3 stride 1 and 2 with pads and
// output_padding, 4x4 stride 2 (overlapping taps), dilation, groups, output_shape, batch 2,
// tiles of input positions that start mid-row, with and without bias and a constant
// (pre-packed) W, on one and two threads. Tolerance per element: 1e-4 * the magnitude of
// the sum (the reference run on |x|, |w|, |b|), as in conv_x86_test.cc.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "backends/cpu/thread_pool.h"
#include "backends/cpu/x86/x86_kernels.h"
#include "op_test_util.h"

namespace tessera {
namespace {

using testing::attr_i;
using testing::attr_ints;
using testing::make_tensor;
using testing::OpSpec;
using testing::run_op;
using testing::run_op_with;

Tensor random_tensor(const Shape& shape, std::mt19937& rng) {
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<float> v(static_cast<size_t>(n));
  for (float& f : v) f = d(rng);
  return make_tensor<float>(shape, v);
}

Tensor abs_of(const Tensor& t) {
  std::vector<float> v(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::fabs(t.data_as<float>()[i]);
  return make_tensor<float>(t.shape(), v);
}

struct Case {
  std::string name;
  Shape x, w;
  std::vector<Attribute> attrs;
};

TEST(ConvTransposeX86, MatchesReference) {
  using V = std::vector<int64_t>;
  const std::vector<Case> cases = {
      {"2x2 stride 2 (PP-OCR det)", {1, 24, 9, 13}, {24, 6, 2, 2}, {attr_ints("strides", V{2, 2})}},
      {"2x2 stride 2 big (tiles mid-row)", {1, 16, 40, 37}, {16, 64, 2, 2}, {attr_ints("strides", V{2, 2})}},
      {"3x3 stride 1 pad 1", {2, 5, 7, 6}, {5, 4, 3, 3}, {attr_ints("pads", V{1, 1, 1, 1})}},
      {"3x3 stride 2 pad 1 output_padding 1", {1, 6, 5, 7}, {6, 3, 3, 3},
       {attr_ints("strides", V{2, 2}), attr_ints("pads", V{1, 1, 1, 1}), attr_ints("output_padding", V{1, 1})}},
      {"4x4 stride 2 pad 1 (overlapping taps)", {1, 8, 6, 5}, {8, 5, 4, 4},
       {attr_ints("strides", V{2, 2}), attr_ints("pads", V{1, 1, 1, 1})}},
      {"dilation 2 stride (1,3)", {1, 3, 6, 5}, {3, 4, 3, 2}, {attr_ints("dilations", V{2, 2}), attr_ints("strides", V{1, 3})}},
      {"groups 2", {1, 6, 5, 6}, {6, 2, 3, 3}, {attr_i("group", 2), attr_ints("strides", V{2, 2})}},
      {"output_shape", {1, 4, 4, 4}, {4, 3, 3, 3}, {attr_ints("strides", V{2, 2}), attr_ints("output_shape", V{10, 9})}},
      {"asymmetric pads", {1, 3, 5, 5}, {3, 2, 3, 3}, {attr_ints("pads", V{0, 2, 1, 0})}},
      {"1x1", {1, 7, 3, 4}, {7, 5, 1, 1}, {}},
  };
  ThreadPool pool(2);
  std::mt19937 rng(99);
  for (const Case& c : cases)
    for (bool bias : {false, true})
      for (int threads : {1, 2}) {
        const bool const_w = bias == (threads == 2);
        const std::string what = c.name + (bias ? " bias" : "") + " threads " + std::to_string(threads) + (const_w ? " const W" : "");
        const int64_t m = c.w[1] * [&] {
          for (const Attribute& a : c.attrs)
            if (a.name == "group") return a.i;
          return int64_t{1};
        }();
        Tensor x = random_tensor(c.x, rng), w = random_tensor(c.w, rng), b = random_tensor({m}, rng);
        std::vector<const Tensor*> ins = {&x, &w};
        if (bias) ins.push_back(&b);
        OpSpec spec{"ConvTranspose", c.attrs, 11};
        std::vector<int> consts;
        if (const_w) consts = {1, 2};
        auto want = run_op(spec, ins, consts);
        ASSERT_TRUE(want.is_ok()) << what << ": " << want.status().to_string();
        auto got = run_op_with(&x86::make_ConvTranspose, spec, ins, consts, threads > 1 ? &pool : nullptr, threads);
        ASSERT_TRUE(got.is_ok()) << what << ": " << got.status().to_string();
        Tensor ax = abs_of(x), aw = abs_of(w), ab = abs_of(b);
        std::vector<const Tensor*> abs_ins = {&ax, &aw};
        if (bias) abs_ins.push_back(&ab);
        auto mag = run_op(spec, abs_ins);
        ASSERT_TRUE(mag.is_ok()) << what;
        const Tensor& wt = want.value()[0];
        const Tensor& gt = got.value()[0];
        ASSERT_EQ(wt.shape(), gt.shape()) << what;
        int bad = 0;
        double max_abs = 0;
        for (int64_t i = 0; i < wt.numel(); ++i) {
          const double a = gt.data_as<float>()[i], e = wt.data_as<float>()[i];
          max_abs = std::max(max_abs, std::fabs(e));
          const double tol = 1e-4 * mag.value()[0].data_as<float>()[i] + 1e-7;
          if (!(std::fabs(a - e) <= tol) && ++bad <= 3) ADD_FAILURE() << what << " element " << i << ": got " << a << " want " << e;
        }
        EXPECT_GT(max_abs, 0.0) << what;
      }
}

TEST(ConvTransposeX86, DeclinesWhatItDoesNotHandle) {
  // 1-D and 3-D run the reference.
  std::mt19937 rng(1);
  Tensor x = random_tensor({1, 2, 5}, rng), w = random_tensor({2, 3, 3}, rng);
  auto got = run_op_with(&x86::make_ConvTranspose, OpSpec{"ConvTranspose", {}, 11}, {&x, &w});
  EXPECT_FALSE(got.is_ok());
  EXPECT_EQ(got.status().code(), StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace tessera
