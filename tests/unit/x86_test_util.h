// Helpers of the x86 kernel tests (x86_*_test.cc): random tensors, and running a test body
// once per ISA path this CPU has (AVX-512F, AVX2+FMA; NEON on aarch64), each forced with
// set_isa_override.
#pragma once

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "backends/cpu/x86/isa_x86.h"
#include "op_test_util.h"

namespace tessera::testing {

/// A float tensor of `shape` with values uniform in [lo, hi].
inline Tensor random_floats(const Shape& shape, std::mt19937& rng, float lo = -1.f, float hi = 1.f) {
  std::uniform_real_distribution<float> d(lo, hi);
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = d(rng);
  return make_tensor<float>(shape, v);
}

/// The x86 paths this CPU runs (may be empty: the tests then skip).
inline std::vector<x86::Isa> available_isas() {
  std::vector<x86::Isa> v;
  for (x86::Isa i : {x86::Isa::kAvx512, x86::Isa::kAvx2, x86::Isa::kNeon})
    if (x86::isa_available(i)) v.push_back(i);
  return v;
}

/// Forces an ISA path for the scope's lifetime.
struct IsaScope {
  explicit IsaScope(x86::Isa isa) { x86::set_isa_override(isa); }
  ~IsaScope() { x86::set_isa_override(std::nullopt); }
};

}  // namespace tessera::testing
