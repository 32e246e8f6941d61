// Range (ONNX opset 11): a 1-D tensor start, start + delta, ... up to but excluding limit;
// count = max(ceil((limit - start) / delta), 0). The three scalar inputs share one dtype
// (float, double, int16, int32, int64) and must be known at plan time (they fix the
// output length). delta == 0 is an error.
#include <cmath>

#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {

/// Input i's single element as double (floats) or exact int64 (integers).
Status scalar_of(const InferContext& ctx, size_t i, double* f, int64_t* n) {
  const ValueInfo& v = ctx.input(i);
  if (!v.constant)
    return ctx.unsupported("input " + std::to_string(i) + " must be known before the run (it fixes the output length)");
  const Tensor& t = *v.constant;
  if (t.numel() != 1) return ctx.error("input " + std::to_string(i) + " must be a scalar, has shape " + shape_to_string(t.shape()));
  switch (t.dtype()) {
    case DType::kFloat32: *f = t.data_as<float>()[0]; break;
    case DType::kFloat64: *f = t.data_as<double>()[0]; break;
    case DType::kInt16: *n = t.data_as<int16_t>()[0]; break;
    case DType::kInt32: *n = t.data_as<int32_t>()[0]; break;
    case DType::kInt64: *n = t.data_as<int64_t>()[0]; break;
    default: return ctx.error(std::string("dtype ") + dtype_name(t.dtype()) + " is not supported");
  }
  return Status::ok();
}

Status infer(InferContext& ctx) {
  const DType dt = ctx.input(0).dtype;
  for (size_t i = 1; i < 3; ++i)
    if (ctx.input(i).dtype != dt) return ctx.error("start, limit and delta must have one dtype");
  double f[3] = {0, 0, 0};
  int64_t n[3] = {0, 0, 0};
  for (size_t i = 0; i < 3; ++i) TSR_RETURN_IF_ERROR(scalar_of(ctx, i, &f[i], &n[i]));
  int64_t count = 0;
  if (dt == DType::kFloat32 || dt == DType::kFloat64) {
    if (f[2] == 0 || !std::isfinite(f[0]) || !std::isfinite(f[1]) || !std::isfinite(f[2]))
      return ctx.error("start, limit and delta must be finite and delta non-zero");
    const double c = std::ceil((f[1] - f[0]) / f[2]);
    if (c > static_cast<double>(kMaxTensorBytes)) return ctx.error("range is too long");
    count = c > 0 ? static_cast<int64_t>(c) : 0;
  } else {
    if (n[2] == 0) return ctx.error("delta is 0");
    // (limit - start) in long double avoids int64 overflow; exact for the sizes accepted.
    const long double span = static_cast<long double>(n[1]) - static_cast<long double>(n[0]);
    const long double c = std::ceil(span / static_cast<long double>(n[2]));
    if (c > static_cast<long double>(kMaxTensorBytes)) return ctx.error("range is too long");
    count = c > 0 ? static_cast<int64_t>(c) : 0;
  }
  ctx.output(0) = {dt, {count}, nullptr};
  return Status::ok();
}

}  // namespace

const OpSchema kSchema_Range = {"Range", 3, 3, 1, 1, infer};

}  // namespace tessera
