// MelWeightMatrix (ONNX opset 17): the matrix that maps a onesided DFT spectrum to mel bands
// (triangular filters equally spaced on the mel scale mel(f) = 2595 log10(1 + f / 700)).
//   inputs  num_mel_bins, dft_length, sample_rate: scalar int32/int64 (sample_rate in Hz);
//           lower_edge_hertz, upper_edge_hertz: scalar float/double (Hz).
//   output  [floor(dft_length / 2) + 1, num_mel_bins], dtype `output_datatype` (default 1,
//           float; float or double here).
// The filter edges, as in the ONNX reference implementation: mel points
//   m_j = mel(lower) + j (mel(upper) - mel(lower)) / (num_mel_bins + 2), j = 0 .. num_mel_bins + 1,
// spectrum bins b_j = floor((dft_length + 1) * mel^-1(m_j) / sample_rate); filter i rises
// linearly from b_i to b_{i+1} (value 1) and falls to b_{i+2}. num_mel_bins and dft_length
// must be known at plan time. Errors: non-scalar or wrongly typed inputs; at run time,
// sample_rate <= 0 or edges that are not finite with 0 <= lower < upper.
#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {
bool is_int(DType d) { return d == DType::kInt32 || d == DType::kInt64; }
bool is_real(DType d) { return d == DType::kFloat32 || d == DType::kFloat64; }

Status infer(InferContext& ctx) {
  static const char* kNames[] = {"num_mel_bins", "dft_length", "sample_rate", "lower_edge_hertz", "upper_edge_hertz"};
  for (size_t i = 0; i < 5; ++i) {
    const ValueInfo& v = ctx.input(i);
    if (!v.shape.empty() && !(v.shape.size() == 1 && v.shape[0] == 1))
      return ctx.error(std::string(kNames[i]) + " must be a scalar, got " + shape_to_string(v.shape));
    if (i < 3 ? !is_int(v.dtype) : !is_real(v.dtype))
      return ctx.error(std::string(kNames[i]) + " has dtype " + dtype_name(v.dtype) + "; expected " +
                       (i < 3 ? "int32 or int64" : "float or double"));
  }
  TSR_ASSIGN_OR_RETURN(std::vector<int64_t> mel, ctx.const_ints(0));
  TSR_ASSIGN_OR_RETURN(std::vector<int64_t> dft, ctx.const_ints(1));
  if (mel[0] < 1 || mel[0] > (int64_t{1} << 20)) return ctx.error("num_mel_bins " + std::to_string(mel[0]) + " is out of range");
  if (dft[0] < 1 || dft[0] > (int64_t{1} << 30)) return ctx.error("dft_length " + std::to_string(dft[0]) + " is out of range");
  const int64_t dt = ctx.node().attr_i("output_datatype", 1);
  if (dt != 1 && dt != 11) return ctx.unsupported("output_datatype " + std::to_string(dt) + " is not supported (1 float, 11 double)");
  ctx.output(0) = {static_cast<DType>(dt), Shape{dft[0] / 2 + 1, mel[0]}, nullptr};
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_MelWeightMatrix = {"MelWeightMatrix", 5, 5, 1, 1, infer};

}  // namespace tessera
