// NonZero (ONNX opset 9, 13): indices of the non-zero elements of X, int64 [rank(X), count],
// in row-major order. The output's length depends on X's values, so X must be known when
// planning: the session plans small inputs by value (re-planning when they change); a
// larger X computed inside the model is not supported yet.
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {
Status infer(InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  if (!x.constant)
    return ctx.unsupported("input 0 must be computable before the run (NonZero's output length depends on its values)");
  if (dtype_size(x.dtype) == 0) return ctx.unsupported(std::string("dtype ") + dtype_name(x.dtype) + " is not supported");
  const Tensor& t = *x.constant;
  const size_t es = dtype_size(x.dtype);
  const uint8_t* p = static_cast<const uint8_t*>(t.data());
  int64_t count = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    bool nz = false;
    for (size_t b = 0; b < es; ++b) nz |= p[i * es + b] != 0;
    // -0.0 is zero: only the sign bit set.
    if (nz && (x.dtype == DType::kFloat32 || x.dtype == DType::kFloat64)) {
      double v = x.dtype == DType::kFloat32 ? t.data_as<float>()[i] : t.data_as<double>()[i];
      nz = v != 0.0;
    }
    count += nz;
  }
  ctx.output(0).dtype = DType::kInt64;
  ctx.output(0).shape = {static_cast<int64_t>(x.shape.size()), count};
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_NonZero = {"NonZero", 1, 1, 1, 1, infer};

}  // namespace tessera
