// Dtype predicates the section-B schemas (elementwise, shape, reduction ops) use to check
// their inputs against the ONNX type constraints. Float16/bfloat16 tensors are computed on
// only by the ops whose schema accepts them explicitly (dtype_is_numeric_or_half: the
// broadcasting arithmetic and comparison ops, computed through float); other schemas report
// them as unimplemented.
#pragma once

#include <string>

#include "runtime/ops/op_schema.h"

namespace tessera {

inline bool dtype_is_float(DType d) { return d == DType::kFloat32 || d == DType::kFloat64; }
inline bool dtype_is_int(DType d) {
  switch (d) {
    case DType::kInt8: case DType::kUInt8: case DType::kInt16: case DType::kUInt16:
    case DType::kInt32: case DType::kUInt32: case DType::kInt64: case DType::kUInt64: return true;
    default: return false;
  }
}
inline bool dtype_is_numeric(DType d) { return dtype_is_float(d) || dtype_is_int(d); }
/// float16 or bfloat16 (stored as uint16_t bits; see tessera/half.h).
inline bool dtype_is_half(DType d) { return d == DType::kFloat16 || d == DType::kBFloat16; }
/// Numeric, float16 or bfloat16: the dtypes of ONNX's "all numeric types" constraint that
/// Tessera computes on.
inline bool dtype_is_numeric_or_half(DType d) { return dtype_is_numeric(d) || dtype_is_half(d); }
/// Float, integer or bool: what the reference kernels can compute on.
inline bool dtype_is_computable(DType d) { return dtype_is_numeric(d) || d == DType::kBool; }
/// What Cast and CastLike convert between: the computable dtypes, float16, bfloat16, the
/// float8 types and int4/uint4.
inline bool dtype_is_castable(DType d) {
  return dtype_is_computable(d) || d == DType::kFloat16 || d == DType::kBFloat16 || dtype_is_float8(d) ||
         dtype_is_int4(d);
}

/// Checks input `i`'s dtype with `pred`; unimplemented for dtypes Tessera holds but does not
/// compute on (float16, bfloat16, string), invalid_argument otherwise. `want` names the
/// accepted dtypes for the message ("float or double").
template <typename Pred>
Status check_input_dtype(const InferContext& ctx, size_t i, Pred pred, const char* want) {
  DType d = ctx.input(i).dtype;
  if (pred(d)) return Status::ok();
  std::string msg = "input " + std::to_string(i) + " has dtype " + dtype_name(d) + "; expected " + want;
  if (d == DType::kFloat16 || d == DType::kBFloat16 || d == DType::kString || dtype_is_float8(d) || dtype_is_int4(d))
    return ctx.unsupported(msg);
  return ctx.error(msg);
}

/// Checks that inputs `first..` (those present) all have input `first`'s dtype.
inline Status check_same_dtype(const InferContext& ctx, size_t first = 0) {
  for (size_t i = first + 1; i < ctx.num_inputs(); ++i)
    if (ctx.has_input(i) && ctx.input(i).dtype != ctx.input(first).dtype)
      return ctx.error("input " + std::to_string(i) + " has dtype " + dtype_name(ctx.input(i).dtype) + " but input " +
                       std::to_string(first) + " has " + dtype_name(ctx.input(first).dtype));
  return Status::ok();
}

}  // namespace tessera
