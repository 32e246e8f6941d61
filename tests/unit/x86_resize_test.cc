// The x86 Resize (backends/cpu/x86/resize_x86.cc) against the reference (ref/resize.cc), on
// random inputs in [-1, 1], for every ISA path this CPU has, one and two threads: nearest
// (every nearest_mode, several coordinate transformations, up and down, non-integer
// scales, `sizes`), linear and cubic (half_pixel, align_corners, asymmetric,
// pytorch_half_pixel), antialias (opset 18) downsampling. Nearest must be bit-exact; other
// modes sum at most T <= 36 taps in float with weights of total magnitude <= 2 (the
// reference sums in double): error <= (T + 2) * 2^-24 * 2 < 1e-5, the tolerance used.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "backends/cpu/thread_pool.h"
#include "backends/cpu/x86/x86_kernels.h"
#include "x86_test_util.h"

namespace tessera {
namespace {

using namespace testing;

struct Case {
  std::string name;
  Shape x;
  std::vector<float> scales;  // empty: use sizes
  std::vector<int64_t> sizes;
  std::vector<Attribute> attrs;
  int opset = 13;
};

std::vector<Case> cases() {
  auto s = [](const std::string& n, const std::string& v) { return attr_s(n, v); };
  return {
      {"nearest 2x", {1, 3, 8, 9}, {1, 1, 2, 2}, {}, {s("mode", "nearest")}},
      {"nearest 2x asymmetric floor", {2, 4, 7, 33}, {1, 1, 2, 2}, {},
       {s("mode", "nearest"), s("coordinate_transformation_mode", "asymmetric"), s("nearest_mode", "floor")}},
      {"nearest 1.7x round_prefer_ceil", {1, 2, 10, 19}, {1, 1, 1.7f, 1.3f}, {},
       {s("mode", "nearest"), s("nearest_mode", "round_prefer_ceil")}},
      {"nearest down ceil", {1, 2, 31, 40}, {1, 1, 0.5f, 0.4f}, {}, {s("mode", "nearest"), s("nearest_mode", "ceil")}},
      {"nearest sizes align_corners", {1, 3, 5, 6}, {}, {1, 3, 11, 37},
       {s("mode", "nearest"), s("coordinate_transformation_mode", "align_corners")}},
      {"nearest big (DBNet-like)", {1, 64, 40, 40}, {1, 1, 4, 4}, {}, {s("mode", "nearest")}},
      {"linear 2x half_pixel", {1, 3, 8, 9}, {1, 1, 2, 2}, {}, {s("mode", "linear")}},
      {"linear down", {2, 2, 23, 31}, {1, 1, 0.6f, 0.45f}, {}, {s("mode", "linear")}},
      {"linear align_corners sizes", {1, 4, 7, 7}, {}, {1, 4, 20, 13},
       {s("mode", "linear"), s("coordinate_transformation_mode", "align_corners")}},
      {"linear asymmetric", {1, 2, 9, 5}, {1, 1, 3, 2.5f}, {}, {s("mode", "linear"), s("coordinate_transformation_mode", "asymmetric")}},
      {"linear pytorch_half_pixel to 1", {1, 2, 9, 5}, {}, {1, 2, 1, 17},
       {s("mode", "linear"), s("coordinate_transformation_mode", "pytorch_half_pixel")}},
      {"cubic 2x", {1, 2, 9, 10}, {1, 1, 2, 2}, {}, {s("mode", "cubic")}},
      {"cubic exclude_outside", {1, 2, 9, 10}, {1, 1, 1.5f, 0.7f}, {}, {s("mode", "cubic"), attr_i("exclude_outside", 1)}},
      {"linear antialias down", {1, 3, 32, 45}, {1, 1, 0.3f, 0.5f}, {}, {s("mode", "linear"), attr_i("antialias", 1)}, 18},
      {"cubic antialias down", {1, 2, 20, 21}, {1, 1, 0.5f, 0.25f}, {}, {s("mode", "cubic"), attr_i("antialias", 1)}, 18},
      {"1x1 input", {1, 2, 1, 1}, {1, 1, 3, 5}, {}, {s("mode", "linear")}},
  };
}

TEST(ResizeX86, MatchesReference) {
  const auto isas = available_isas();
  if (isas.empty()) GTEST_SKIP() << "no vector path on this CPU (AVX2+FMA, AVX-512F or NEON)";
  ThreadPool pool(2);
  std::mt19937 rng(41);
  for (x86::Isa isa : isas) {
    IsaScope scope(isa);
    for (const Case& c : cases()) {
      Tensor x = random_floats(c.x, rng);
      Tensor roi = make_tensor<float>({0}, {});
      Tensor scales = make_tensor<float>({static_cast<int64_t>(c.scales.size())}, c.scales);
      Tensor sizes = make_tensor<int64_t>({static_cast<int64_t>(c.sizes.size())}, c.sizes);
      std::vector<const Tensor*> ins = {&x, &roi, c.scales.empty() ? nullptr : &scales, c.scales.empty() ? &sizes : nullptr};
      OpSpec spec{"Resize", c.attrs, c.opset};
      auto want = run_op(spec, ins, {1, 2, 3});
      ASSERT_TRUE(want.is_ok()) << c.name << ": " << want.status().to_string();
      const bool nearest = c.attrs[0].s == "nearest";
      for (int threads : {1, 2}) {
        const std::string what = std::string(x86::isa_name(isa)) + " " + c.name + " threads " + std::to_string(threads);
        auto got = run_op_with(&x86::make_Resize, spec, ins, {1, 2, 3}, threads > 1 ? &pool : nullptr, threads);
        ASSERT_TRUE(got.is_ok()) << what << ": " << got.status().to_string();
        const Tensor& g = got.value()[0];
        const Tensor& w = want.value()[0];
        ASSERT_EQ(g.shape(), w.shape()) << what;
        int bad = 0;
        for (int64_t i = 0; i < w.numel(); ++i) {
          const float a = g.data_as<float>()[i], e = w.data_as<float>()[i];
          const bool ok = nearest ? std::memcmp(&a, &e, 4) == 0 : std::fabs(a - e) <= 1e-5f;
          if (!ok && ++bad <= 3) ADD_FAILURE() << what << " element " << i << ": got " << a << " want " << e;
        }
      }
    }
  }
}

TEST(ResizeX86, DeclinesChannelResizeAndExtrapolation) {
  if (available_isas().empty()) GTEST_SKIP() << "no vector path on this CPU (AVX2+FMA, AVX-512F or NEON)";
  std::mt19937 rng(42);
  Tensor x = random_floats({1, 2, 4, 4}, rng);
  Tensor roi = make_tensor<float>({0}, {});
  Tensor scales = make_tensor<float>({4}, {1, 2, 2, 2});
  auto r = run_op_with(&x86::make_Resize, {"Resize", {attr_s("mode", "nearest")}, 13}, {&x, &roi, &scales}, {1, 2});
  EXPECT_EQ(r.status().code(), StatusCode::kUnimplemented);
  Tensor roi8 = make_tensor<float>({8}, {0, 0, -0.5f, -0.5f, 1, 1, 1.5f, 1.5f});
  Tensor s2 = make_tensor<float>({4}, {1, 1, 2, 2});
  auto e = run_op_with(&x86::make_Resize,
                       {"Resize", {attr_s("mode", "linear"), attr_s("coordinate_transformation_mode", "tf_crop_and_resize")}, 13},
                       {&x, &roi8, &s2}, {1, 2});
  EXPECT_EQ(e.status().code(), StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace tessera
