// Helpers shared by the section-B reference kernels: numpy-broadcast indexing and dtype-
// agnostic element copies. Written for clarity; optimized kernels do not use them.
#pragma once

#include <cstdint>
#include <cstring>

#include "backends/cpu/ref/ref_kernels.h"
#include "runtime/ops/shape_params.h"

namespace tessera::ref {

/// Offset (elements) into a row-major tensor of shape `in` of the element that numpy
/// broadcasting ("Broadcasting in ONNX") maps to linear index `i` of a row-major tensor of
/// shape `out`. `in` must broadcast to `out` (right-aligned; each dim equal or 1).
inline int64_t broadcast_offset(int64_t i, const Shape& out, const Shape& in) {
  int64_t off = 0, stride = 1;
  const size_t r = out.size(), ri = in.size();
  for (size_t k = 0; k < r; ++k) {
    const int64_t od = out[r - 1 - k];
    const int64_t coord = i % od;
    i /= od;
    if (k < ri) {
      const int64_t n = in[ri - 1 - k];
      if (n != 1) off += coord * stride;
      stride *= n;
    }
  }
  return off;
}

/// Maps output linear indices to input offsets for one input of a broadcasting op, with the
/// common cases (same shape, single element) made cheap.
class BroadcastIndex {
 public:
  BroadcastIndex(const Shape& out, const Shape& in, int64_t in_numel)
      : out_(&out), in_(&in), same_(out == in), scalar_(in_numel == 1) {}
  int64_t operator()(int64_t i) const {
    if (same_) return i;
    if (scalar_) return 0;
    return broadcast_offset(i, *out_, *in_);
  }

 private:
  const Shape* out_;
  const Shape* in_;
  bool same_, scalar_;
};

/// Calls f(U{}) with U an unsigned integer type of `elem_size` bytes (1, 2, 4 or 8), so that
/// data movement kernels copy elements of any dtype as opaque words.
template <typename F>
Status dispatch_bytes(size_t elem_size, F&& f) {
  switch (elem_size) {
    case 1: return f(uint8_t{});
    case 2: return f(uint16_t{});
    case 4: return f(uint32_t{});
    case 8: return f(uint64_t{});
    default: return unimplemented("element size " + std::to_string(elem_size) + " is not supported");
  }
}

/// Product of shape[begin..end).
inline int64_t dims_product(const Shape& shape, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end && i < shape.size(); ++i) p *= shape[i];
  return p;
}

}  // namespace tessera::ref

namespace tessera::ref {

/// ConstIntInputs over a CompileContext: plan-time inputs are the inputs' `constant` tensors
/// (int32 or int64).
inline ConstIntInputs const_inputs_of(const CompileContext& ctx) {
  return {[&ctx](size_t i) { return ctx.has_input(i); },
          [&ctx](size_t i) -> Result<std::vector<int64_t>> {
            if (!ctx.has_input(i) || !ctx.input(i).constant)
              return ctx.unsupported("input " + std::to_string(i) + " is not known at plan time");
            const Tensor& t = *ctx.input(i).constant;
            std::vector<int64_t> v(static_cast<size_t>(t.numel()));
            for (int64_t k = 0; k < t.numel(); ++k) {
              if (t.dtype() == DType::kInt64) v[k] = t.data_as<int64_t>()[k];
              else if (t.dtype() == DType::kInt32) v[k] = t.data_as<int32_t>()[k];
              else return ctx.error("input " + std::to_string(i) + " must be int32 or int64");
            }
            return v;
          }};
}

}  // namespace tessera::ref

namespace tessera::ref {

/// A kernel that copies input 0's bytes to output 0 unchanged (Reshape, Flatten, Squeeze,
/// Unsqueeze: row-major data does not move when only the shape changes). When input 0
/// dies at this step the planner gives output 0 its memory (output_may_alias_input), and
/// the step copies nothing: BERT-base's 48 Reshapes each copied 384 KiB (1.0-1.7 ms a
/// run).
class CopyKernel final : public Kernel {
 public:
  Status run(const KernelContext& k) const override {
    const size_t n = k.input(0).nbytes();
    if (n && k.output(0).data() != k.input(0).data()) std::memcpy(k.output(0).data(), k.input(0).data(), n);
    return Status::ok();
  }
  int output_may_alias_input() const override { return 0; }
};

inline Result<std::unique_ptr<Kernel>> make_copy_kernel() { return std::unique_ptr<Kernel>(new CopyKernel()); }

}  // namespace tessera::ref
