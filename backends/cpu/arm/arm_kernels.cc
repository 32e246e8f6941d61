// See arm_kernels.h.
#include "backends/cpu/arm/arm_kernels.h"

#include "backends/cpu/x86/elementwise_x86.h"
#include "backends/cpu/x86/x86_kernels.h"

namespace tessera::arm {

KernelFactory find_arm_kernel(const std::string& op_type) {
  // On the packed SGEMM (NEON micro-kernel): shared with x86.
  if (op_type == "MatMul") return &x86::make_MatMul;
  if (op_type == "Gemm") return &x86::make_Gemm;
  if (op_type == "Conv") return &x86::make_Conv;
  // The ISA-templated kernels of backends/cpu/x86/ on the NEON Vec (<op>_neon.cc).
  static const std::pair<const char*, KernelFactory> kTemplated[] = {
      {"MaxPool", &x86::make_MaxPool},
      {"AveragePool", &x86::make_AveragePool},
      {"GlobalMaxPool", &x86::make_GlobalMaxPool},
      {"GlobalAveragePool", &x86::make_GlobalAveragePool},
      {"Softmax", &x86::make_Softmax},
      {"LogSoftmax", &x86::make_LogSoftmax},
      {"LayerNormalization", &x86::make_LayerNormalization},
      {"ReduceSum", &x86::make_ReduceSum},
      {"ReduceMean", &x86::make_ReduceMean},
      {"ReduceMax", &x86::make_ReduceMax},
      {"Resize", &x86::make_Resize},
      {"Transpose", &x86::make_Transpose},  // transpose_neon.cc
      {"Pad", &x86::make_Pad}};              // pad_x86.cc: ISA-independent
  for (const auto& [name, f] : kTemplated)
    if (op_type == name) return f;
  // Elementwise ops and activations on the NEON core (backends/cpu/x86/elementwise_x86.h).
  return x86::find_x86_elementwise_kernel(op_type);
}

bool takes_epilogue(const std::string& op_type) { return x86::takes_epilogue(op_type); }

}  // namespace tessera::arm
