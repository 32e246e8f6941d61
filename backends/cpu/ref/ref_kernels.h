// Reference CPU kernels: scalar code written for clarity, the oracle every optimized kernel
// is tested against. One op per file; each defines ref::make_<Op>, a KernelFactory.
#pragma once

#include "backends/backend.h"

namespace tessera::ref {

#define TSR_OP(name) Result<std::unique_ptr<Kernel>> make_##name(const CompileContext& ctx);
#include "runtime/ops/op_list.def"
#undef TSR_OP

/// The reference kernel factory for `op_type`, or nullptr.
KernelFactory find_ref_kernel(const std::string& op_type);

/// Calls f(T{}) with T the C++ type of `dtype` for the numeric types; returns an
/// unimplemented status for others. Use: return dispatch_numeric(dt, [&](auto tag){...});
template <typename F>
Status dispatch_numeric(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kFloat32: return f(float{});
    case DType::kFloat64: return f(double{});
    case DType::kInt8: return f(int8_t{});
    case DType::kUInt8: return f(uint8_t{});
    case DType::kInt16: return f(int16_t{});
    case DType::kUInt16: return f(uint16_t{});
    case DType::kInt32: return f(int32_t{});
    case DType::kUInt32: return f(uint32_t{});
    case DType::kInt64: return f(int64_t{});
    case DType::kUInt64: return f(uint64_t{});
    case DType::kBool: return f(bool{});
    default: return unimplemented(std::string("dtype ") + dtype_name(dtype) + " is not supported");
  }
}

/// Calls f(T{}) with T float or double; an unimplemented status for other dtypes.
template <typename F>
Status dispatch_float(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kFloat32: return f(float{});
    case DType::kFloat64: return f(double{});
    default: return unimplemented(std::string("dtype ") + dtype_name(dtype) + " is not supported (float, double)");
  }
}

/// Row-major strides (elements) of `shape`.
std::vector<int64_t> contiguous_strides(const Shape& shape);

}  // namespace tessera::ref
