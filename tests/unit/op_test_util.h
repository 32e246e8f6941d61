// Test helper: runs one ONNX node on the reference CPU backend, the way the planner would
// (schema inference, then compile, then run), and returns its outputs.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "backends/cpu/ref/ref_kernels.h"
#include "runtime/ops/op_schema.h"

namespace tessera::testing {

/// A tensor of `shape` holding `values` (converted to T).
template <typename T>
Tensor make_tensor(const Shape& shape, const std::vector<T>& values) {
  auto r = Tensor::allocate(dtype_of<T>(), shape);
  EXPECT_TRUE(r.is_ok()) << r.status().to_string();
  Tensor t = std::move(r).value();
  EXPECT_EQ(static_cast<size_t>(t.numel()), values.size()) << "make_tensor: value count";
  if (!values.empty()) {
    if constexpr (std::is_same_v<T, bool>) {
      for (size_t i = 0; i < values.size(); ++i) t.data_as<bool>()[i] = values[i];
    } else {
      std::memcpy(t.data(), values.data(), values.size() * sizeof(T));
    }
  }
  return t;
}

template <typename T>
std::vector<T> to_vector(const Tensor& t) {
  EXPECT_EQ(t.dtype(), dtype_of<T>());
  const T* p = t.data_as<T>();
  return std::vector<T>(p, p + t.numel());
}

/// Builds a node. Inputs are numbered 0..n-1 and outputs follow; attributes as given.
struct OpSpec {
  std::string op_type;
  std::vector<Attribute> attrs;
  int opset = 17;
  int num_outputs = 1;
};

inline Attribute attr_i(const std::string& n, int64_t v) { Attribute a; a.name = n; a.type = AttrType::kInt; a.i = v; return a; }
inline Attribute attr_f(const std::string& n, float v) { Attribute a; a.name = n; a.type = AttrType::kFloat; a.f = v; return a; }
inline Attribute attr_s(const std::string& n, const std::string& v) { Attribute a; a.name = n; a.type = AttrType::kString; a.s = v; return a; }
inline Attribute attr_ints(const std::string& n, std::vector<int64_t> v) { Attribute a; a.name = n; a.type = AttrType::kInts; a.ints = std::move(v); return a; }
inline Attribute attr_floats(const std::string& n, std::vector<float> v) { Attribute a; a.name = n; a.type = AttrType::kFloats; a.floats = std::move(v); return a; }

/// Runs the node. `inputs[i] == nullptr` is an omitted optional input. Inputs listed in
/// `const_inputs` are offered to shape inference as plan-time constants (as initializers
/// would be). Returns the outputs, or the first error.
/// `present`, if not empty, says which outputs exist: a false entry is an omitted output
/// (node output -1, a null KernelContext output, as the executor gives), returned as an
/// undefined Tensor.
///
/// run_op_with compiles with `factory` instead of the reference kernel (an optimized kernel
/// under test), planning for `threads` threads and running on `pool` (may be null); a
/// factory that declines the node (a null kernel) gives kUnimplemented.
inline Result<std::vector<Tensor>> run_op_with(KernelFactory factory, const OpSpec& spec,
                                               const std::vector<const Tensor*>& inputs, std::vector<int> const_inputs = {},
                                               ThreadPool* pool = nullptr, int threads = 1,
                                               std::vector<bool> present = {}) {
  if (present.empty()) present.assign(static_cast<size_t>(spec.num_outputs), true);
  Node node;
  node.name = "test_" + spec.op_type;
  node.op_type = spec.op_type;
  node.opset = spec.opset;
  node.attributes = spec.attrs;
  for (size_t i = 0; i < inputs.size(); ++i) node.inputs.push_back(inputs[i] ? static_cast<int>(i) : -1);
  for (size_t i = 0; i < present.size(); ++i)
    node.outputs.push_back(present[i] ? static_cast<int>(inputs.size() + i) : -1);
  const OpSchema* schema = find_op_schema("", spec.op_type);
  if (!schema) return unimplemented("no schema for " + spec.op_type);
  std::vector<ValueInfo> in_infos(inputs.size());
  std::vector<const ValueInfo*> in_ptrs(inputs.size(), nullptr);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]) continue;
    in_infos[i].dtype = inputs[i]->dtype();
    in_infos[i].shape = inputs[i]->shape();
    for (int c : const_inputs)
      if (c == static_cast<int>(i)) in_infos[i].constant = std::make_shared<const Tensor>(*inputs[i]);
    in_ptrs[i] = &in_infos[i];
  }
  std::vector<ValueInfo> out_infos(present.size());
  InferContext ictx(node, in_ptrs, &out_infos);
  TSR_RETURN_IF_ERROR(infer_node(*schema, ictx));
  CompileContext cctx{node, in_ptrs, out_infos};
  cctx.threads = threads;
  KernelFactory f = factory;
  if (!f) return unimplemented("no kernel factory for " + spec.op_type);
  TSR_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> kernel, f(cctx));
  if (!kernel) return unimplemented("the kernel declined " + spec.op_type);
  std::vector<Tensor> outs(present.size());
  KernelContext kctx;
  kctx.inputs = inputs;
  kctx.thread_pool = pool;
  for (size_t i = 0; i < present.size(); ++i) {
    if (present[i]) {
      TSR_ASSIGN_OR_RETURN(outs[i], Tensor::allocate(out_infos[i].dtype, out_infos[i].shape));
      // Poisoned, as the executor's arena is: a kernel must write every output element.
      if (outs[i].nbytes()) std::memset(outs[i].data(), 0xFF, outs[i].nbytes());
    }
    kctx.outputs.push_back(present[i] ? &outs[i] : nullptr);
  }
  std::vector<uint8_t> scratch(kernel->scratch_bytes() + 64);
  kctx.scratch = reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(scratch.data()) + 63) & ~uintptr_t{63});
  TSR_RETURN_IF_ERROR(kernel->run(kctx));
  return outs;
}

inline Result<std::vector<Tensor>> run_op(const OpSpec& spec, const std::vector<const Tensor*>& inputs,
                                          std::vector<int> const_inputs = {}, std::vector<bool> present = {}) {
  KernelFactory f = ref::find_ref_kernel(spec.op_type);
  if (!f) return unimplemented("no reference kernel for " + spec.op_type);
  return run_op_with(f, spec, inputs, std::move(const_inputs), nullptr, 1, std::move(present));
}

/// Runs a one-output op and returns its output (fails the test on error).
inline Tensor run1(const OpSpec& spec, const std::vector<const Tensor*>& inputs, std::vector<int> consts = {}) {
  auto r = run_op(spec, inputs, std::move(consts));
  EXPECT_TRUE(r.is_ok()) << r.status().to_string();
  if (!r.is_ok()) return Tensor();
  return std::move(r.value()[0]);
}

/// Expects |a - b| <= atol + rtol * |b| elementwise.
inline void expect_near(const std::vector<float>& got, const std::vector<float>& want, float rtol = 1e-5f,
                        float atol = 1e-6f) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], atol + rtol * std::abs(want[i])) << "at element " << i;
}

}  // namespace tessera::testing
