// The row-wise Pad (backends/cpu/x86/pad_x86.cc; also built on aarch64) against the
// reference (ref/pad.cc): bit-exact, every mode (constant, reflect, edge, wrap), positive,
// zero and negative pads (crops) on each axis, pads wider than the input (reflect folding
// more than once, wrap going round), rank 1 to 4, float32, int64, uint8 and bool data,
// float16 and bfloat16 (against the float32 reference), the opset-2 `pads`/`value` attributes and the opset-11+ inputs (constant value given or
// omitted), and Silero VAD's reflect pad of a batch of audio chunks.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>

#include "backends/cpu/x86/x86_kernels.h"
#include "op_test_util.h"
#include "tessera/half.h"

namespace tessera {
namespace {

using namespace testing;
using V = std::vector<int64_t>;

std::string str(const V& v) {
  std::string s;
  for (int64_t x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

/// Pads `x` (opset 13, or 19 for wrap: pads and the constant value as inputs, the value
/// given when `value` is set) with both kernels and expects the same bytes.
void check(const Tensor& x, const V& pads, const std::string& mode, const Tensor* value, const std::string& what) {
  const Tensor p = make_tensor<int64_t>({static_cast<int64_t>(pads.size())}, pads);
  OpSpec spec{"Pad", {attr_s("mode", mode)}, mode == "wrap" ? 19 : 13};
  std::vector<const Tensor*> ins = {&x, &p};
  std::vector<int> consts = {1};
  if (value) {
    ins.push_back(value);
    consts.push_back(2);
  }
  auto want = run_op(spec, ins, consts);
  ASSERT_TRUE(want.is_ok()) << what << ": " << want.status().to_string();
  auto got = run_op_with(&x86::make_Pad, spec, ins, consts);
  ASSERT_TRUE(got.is_ok()) << what << ": " << got.status().to_string();
  const Tensor& g = got.value()[0];
  const Tensor& w = want.value()[0];
  ASSERT_EQ(g.shape(), w.shape()) << what;
  EXPECT_EQ(std::memcmp(g.data(), w.data(), w.nbytes()), 0) << what;
}

Tensor random_float(const Shape& s, std::mt19937& rng) {
  std::uniform_real_distribution<float> d(-2.f, 2.f);
  std::vector<float> v(static_cast<size_t>(shape_numel(s).value()));
  for (float& f : v) f = d(rng);
  return make_tensor<float>(s, v);
}

TEST(PadX86, MatchesReferenceEveryModeAndPadding) {
  std::mt19937 rng(5);
  struct Case {
    Shape x;
    V pads;  // begins, then ends
  };
  const std::vector<Case> cases = {
      {{7}, {2, 3}},
      {{7}, {0, 0}},
      {{7}, {-2, 1}},                  // crop the start
      {{5}, {4, 4}},                   // reflect: exactly n - 1 each side
      {{31, 576}, {0, 64, 0, 0}},      // Silero VAD: reflect 64 on the left of each chunk
      {{3, 6}, {1, 2, 2, 1}},
      {{3, 6}, {0, -1, -1, 2}},        // crop columns at the start, rows at the end
      {{2, 3, 5}, {1, 0, 2, 0, 1, 3}},
      {{2, 3, 5}, {0, 0, 0, 0, 0, 0}},
      {{1, 2, 4, 5}, {0, 0, 1, 1, 0, 0, 1, 1}},  // NCHW spatial pad
      {{2, 2, 3, 3}, {1, 1, 2, 2, 0, 1, 2, 2}},  // pads on N and C too
      {{1, 1, 2, 3}, {0, 0, 1, 2, 0, 0, 1, 2}},  // as wide as reflect allows
  };
  for (const std::string mode : {"constant", "reflect", "edge", "wrap"})
    for (const Case& c : cases) {
      if (mode == "reflect") {  // ONNX: reflect pads must stay below the axis length
        bool ok = true;
        for (size_t a = 0; a < c.x.size(); ++a)
          ok = ok && c.pads[a] < c.x[a] && c.pads[a + c.x.size()] < c.x[a];
        if (!ok) continue;
      }
      const Tensor x = random_float(c.x, rng);
      const Tensor v = make_tensor<float>({}, {1.5f});
      const std::string what = mode + " x" + shape_to_string(c.x) + " pads " + str(c.pads);
      check(x, c.pads, mode, nullptr, what);
      if (mode == "constant") check(x, c.pads, mode, &v, what + " value 1.5");
    }
  // Wider than the input: wrap goes round more than once.
  check(random_float({2, 3}, rng), {0, 5, 0, 7}, "wrap", nullptr, "wrap wider than the input");
  check(random_float({2, 3}, rng), {2, 4, 3, 5}, "edge", nullptr, "edge wider than the input");
}

/// A float16 or bfloat16 tensor from raw 16-bit words.
Tensor bits16(DType dt, const Shape& shape, const std::vector<uint16_t>& bits) {
  Tensor t = std::move(Tensor::allocate(dt, shape)).value();
  std::memcpy(t.data(), bits.data(), bits.size() * sizeof(uint16_t));
  return t;
}

TEST(PadX86, OtherDtypesAndTheOldAttributes) {
  std::mt19937 rng(6);
  std::vector<int64_t> iv(24);
  for (int64_t& v : iv) v = static_cast<int64_t>(rng() % 1000) - 500;
  const Tensor xi = make_tensor<int64_t>({2, 3, 4}, iv);
  const Tensor vi = make_tensor<int64_t>({}, {-7});
  check(xi, {0, 1, 2, 1, 0, 3}, "constant", &vi, "int64 constant -7");
  check(xi, {1, 1, 2, 0, 1, 3}, "reflect", nullptr, "int64 reflect");
  std::vector<uint8_t> bv(15);
  for (uint8_t& v : bv) v = static_cast<uint8_t>(rng());
  const Tensor xb = make_tensor<uint8_t>({3, 5}, bv);
  check(xb, {1, 2, 0, 3}, "edge", nullptr, "uint8 edge");
  check(xb, {2, 1, 3, 4}, "wrap", nullptr, "uint8 wrap");

  // float16 and bfloat16 (the reference has no 16-bit float Pad): against the reference's
  // float32 result converted (padding only moves values, so conversion is exact), with the
  // pad value given as input 2 and as the opset-2 attribute.
  for (bool half : {true, false}) {
    const Tensor xf = random_float({3, 4}, rng);
    std::vector<uint16_t> bits;
    for (float f : to_vector<float>(xf)) bits.push_back(half ? float_to_half(f) : float_to_bfloat16(f));
    const DType dt = half ? DType::kFloat16 : DType::kBFloat16;
    Tensor x16 = bits16(dt, {3, 4}, bits);
    const auto back = [&](float f) { return half ? half_to_float(float_to_half(f)) : bfloat16_to_float(float_to_bfloat16(f)); };
    std::vector<float> rounded;
    for (float f : to_vector<float>(xf)) rounded.push_back(back(f));
    const Tensor xr = make_tensor<float>({3, 4}, rounded);
    const Tensor p = make_tensor<int64_t>({4}, {1, 2, 0, 3});
    for (const char* mode : {"constant", "reflect", "edge"}) {
      OpSpec spec{"Pad", {attr_s("mode", mode)}, 13};
      const uint16_t vbits = half ? float_to_half(-2.5f) : float_to_bfloat16(-2.5f);
      Tensor v16 = bits16(dt, {}, {vbits});
      const Tensor vf = make_tensor<float>({}, {-2.5f});
      auto got = run_op_with(&x86::make_Pad, spec, {&x16, &p, &v16}, {1, 2});
      auto want = run_op(spec, {&xr, &p, &vf}, {1, 2});
      ASSERT_TRUE(got.is_ok()) << mode << ": " << got.status().to_string();
      ASSERT_TRUE(want.is_ok()) << want.status().to_string();
      ASSERT_EQ(got.value()[0].shape(), (Shape{4, 9}));
      const uint16_t* g = got.value()[0].data_as<uint16_t>();
      const std::vector<float> w = to_vector<float>(want.value()[0]);
      for (size_t i = 0; i < w.size(); ++i)
        ASSERT_EQ(half ? half_to_float(g[i]) : bfloat16_to_float(g[i]), w[i]) << mode << (half ? " float16" : " bfloat16") << " element " << i;
    }
    OpSpec old_spec{"Pad", {attr_s("mode", "constant"), attr_ints("pads", V{0, 1, 0, 0}), attr_f("value", 0.75f)}, 2};
    auto got = run_op_with(&x86::make_Pad, old_spec, {&x16});
    ASSERT_TRUE(got.is_ok()) << got.status().to_string();
    EXPECT_EQ(half ? half_to_float(got.value()[0].data_as<uint16_t>()[0]) : bfloat16_to_float(got.value()[0].data_as<uint16_t>()[0]), 0.75f);
  }

  // Opset 2: pads and value as attributes.
  const Tensor x = random_float({2, 5}, rng);
  OpSpec spec{"Pad", {attr_s("mode", "constant"), attr_ints("pads", V{1, 2, 0, 3}), attr_f("value", -3.f)}, 2};
  auto want = run_op(spec, {&x});
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  auto got = run_op_with(&x86::make_Pad, spec, {&x});
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  ASSERT_EQ(got.value()[0].shape(), (Shape{3, 10}));
  EXPECT_EQ(to_vector<float>(got.value()[0]), to_vector<float>(want.value()[0]));
  EXPECT_EQ(to_vector<float>(got.value()[0])[0], -3.f);
}

}  // namespace
}  // namespace tessera
