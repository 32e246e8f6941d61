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

/// Like run_op, but output i is omitted (node output -1, a null KernelContext output, as the
/// executor does) where `present[i]` is false. Returns the outputs; omitted ones are left
/// undefined Tensors.
inline Result<std::vector<Tensor>> run_op_with_omitted_outputs(const OpSpec& spec, const std::vector<const Tensor*>& inputs,
                                                               const std::vector<bool>& present) {
  Node node;
  node.name = "test_" + spec.op_type;
  node.op_type = spec.op_type;
  node.opset = spec.opset;
  node.attributes = spec.attrs;
  for (size_t i = 0; i < inputs.size(); ++i) node.inputs.push_back(inputs[i] ? static_cast<int>(i) : -1);
  for (size_t i = 0; i < present.size(); ++i) node.outputs.push_back(present[i] ? static_cast<int>(inputs.size() + i) : -1);
  const OpSchema* schema = find_op_schema("", spec.op_type);
  if (!schema) return unimplemented("no schema for " + spec.op_type);
  std::vector<ValueInfo> in_infos(inputs.size());
  std::vector<const ValueInfo*> in_ptrs(inputs.size(), nullptr);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]) continue;
    in_infos[i].dtype = inputs[i]->dtype();
    in_infos[i].shape = inputs[i]->shape();
    in_ptrs[i] = &in_infos[i];
  }
  std::vector<ValueInfo> out_infos(present.size());
  InferContext ictx(node, in_ptrs, &out_infos);
  TSR_RETURN_IF_ERROR(infer_node(*schema, ictx));
  CompileContext cctx{node, in_ptrs, out_infos};
  TSR_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> kernel, ref::find_ref_kernel(spec.op_type)(cctx));
  std::vector<Tensor> outs(present.size());
  KernelContext kctx;
  kctx.inputs = inputs;
  for (size_t i = 0; i < present.size(); ++i) {
    if (present[i]) {
      TSR_ASSIGN_OR_RETURN(outs[i], Tensor::allocate(out_infos[i].dtype, out_infos[i].shape));
    }
    kctx.outputs.push_back(present[i] ? &outs[i] : nullptr);
  }
  std::vector<uint8_t> scratch(kernel->scratch_bytes() + 64);
  kctx.scratch = reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(scratch.data()) + 63) & ~uintptr_t{63});
  TSR_RETURN_IF_ERROR(kernel->run(kctx));
  return outs;
}

}  // namespace tessera::testing
