// Helpers for the section-A reference kernel tests (conv, pooling, normalization, linear
// algebra, recurrent, resize).
#pragma once

#include <vector>

#include "op_test_util.h"

namespace tessera::testing {

/// A float tensor of `shape` holding ((i * a) % b - b / 2) * 0.25 for i = 0, 1, ...: a
/// deterministic, non-trivial pattern of exact binary fractions. The Python generator that
/// computed the expected values uses the same formula:
///   seq(shape, a, b) = (((np.arange(n) * a) % b) - b // 2).astype(np.float32).reshape(shape) * 0.25
inline Tensor seq(const Shape& shape, int64_t a = 7, int64_t b = 11) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>((i * a) % b - b / 2) * 0.25f;
  return make_tensor<float>(shape, v);
}

/// Runs the node and expects success; returns the outputs (empty on failure).
inline std::vector<Tensor> run_ok(const OpSpec& spec, const std::vector<const Tensor*>& inputs,
                                  std::vector<int> const_inputs = {}) {
  auto r = run_op(spec, inputs, std::move(const_inputs));
  EXPECT_TRUE(r.is_ok()) << spec.op_type << ": " << r.status().to_string();
  if (!r.is_ok()) return {};
  return std::move(r).value();
}

/// Runs the node and expects failure with `code` and a message containing `needle`.
inline void expect_error(const OpSpec& spec, const std::vector<const Tensor*>& inputs, StatusCode code,
                         const std::string& needle, std::vector<int> const_inputs = {}) {
  auto r = run_op(spec, inputs, std::move(const_inputs));
  ASSERT_FALSE(r.is_ok()) << spec.op_type << " unexpectedly succeeded";
  EXPECT_EQ(r.status().code(), code) << r.status().to_string();
  EXPECT_NE(r.status().message().find(needle), std::string::npos) << r.status().to_string();
}

/// run_op with some outputs omitted (see run_op's `present`).
inline Result<std::vector<Tensor>> run_op_with_omitted_outputs(const OpSpec& spec, const std::vector<const Tensor*>& inputs,
                                                               const std::vector<bool>& present) {
  return run_op(spec, inputs, {}, present);
}

}  // namespace tessera::testing
