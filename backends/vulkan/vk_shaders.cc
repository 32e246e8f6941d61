// The SPIR-V of backends/vulkan/shaders/*.comp, compiled by glslc at build time into
// <build>/generated/vulkan_shaders/<name>.spv.inc (glslc -mfmt=num: the module as comma-separated
// 32-bit words) and included here. Adding a shader: its .comp file, an entry of vk::Shader,
// and one array and one case below.
#include "backends/vulkan/vk_backend.h"

namespace tessera::vk {

namespace {
const uint32_t kSpv_unary[] = {
#include "vulkan_shaders/unary.spv.inc"
};
const uint32_t kSpv_binary[] = {
#include "vulkan_shaders/binary.spv.inc"
};
const uint32_t kSpv_copy[] = {
#include "vulkan_shaders/copy.spv.inc"
};
const uint32_t kSpv_matmul[] = {
#include "vulkan_shaders/matmul.spv.inc"
};
const uint32_t kSpv_conv2d[] = {
#include "vulkan_shaders/conv2d.spv.inc"
};
const uint32_t kSpv_conv_direct[] = {
#include "vulkan_shaders/conv_direct.spv.inc"
};
const uint32_t kSpv_conv_transpose[] = {
#include "vulkan_shaders/conv_transpose.spv.inc"
};
const uint32_t kSpv_pool2d[] = {
#include "vulkan_shaders/pool2d.spv.inc"
};
const uint32_t kSpv_reduce[] = {
#include "vulkan_shaders/reduce.spv.inc"
};
const uint32_t kSpv_rows[] = {
#include "vulkan_shaders/rows.spv.inc"
};
const uint32_t kSpv_batchnorm[] = {
#include "vulkan_shaders/batchnorm.spv.inc"
};
const uint32_t kSpv_resize[] = {
#include "vulkan_shaders/resize.spv.inc"
};
const uint32_t kSpv_gather[] = {
#include "vulkan_shaders/gather.spv.inc"
};
const uint32_t kSpv_epilogue[] = {
#include "vulkan_shaders/epilogue.spv.inc"
};
}  // namespace

const uint32_t* shader_code(Shader s, size_t* bytes) {
  switch (s) {
    case Shader::kUnary: *bytes = sizeof(kSpv_unary); return kSpv_unary;
    case Shader::kBinary: *bytes = sizeof(kSpv_binary); return kSpv_binary;
    case Shader::kCopy: *bytes = sizeof(kSpv_copy); return kSpv_copy;
    case Shader::kMatMul: *bytes = sizeof(kSpv_matmul); return kSpv_matmul;
    case Shader::kConv2d: *bytes = sizeof(kSpv_conv2d); return kSpv_conv2d;
    case Shader::kConvDirect: *bytes = sizeof(kSpv_conv_direct); return kSpv_conv_direct;
    case Shader::kConvTranspose: *bytes = sizeof(kSpv_conv_transpose); return kSpv_conv_transpose;
    case Shader::kPool2d: *bytes = sizeof(kSpv_pool2d); return kSpv_pool2d;
    case Shader::kReduce: *bytes = sizeof(kSpv_reduce); return kSpv_reduce;
    case Shader::kRows: *bytes = sizeof(kSpv_rows); return kSpv_rows;
    case Shader::kBatchNorm: *bytes = sizeof(kSpv_batchnorm); return kSpv_batchnorm;
    case Shader::kResize: *bytes = sizeof(kSpv_resize); return kSpv_resize;
    case Shader::kGather: *bytes = sizeof(kSpv_gather); return kSpv_gather;
    case Shader::kEpilogue: *bytes = sizeof(kSpv_epilogue); return kSpv_epilogue;
    default: *bytes = 0; return nullptr;
  }
}

const char* shader_name(Shader s) {
  switch (s) {
    case Shader::kUnary: return "unary";
    case Shader::kBinary: return "binary";
    case Shader::kCopy: return "copy";
    case Shader::kMatMul: return "matmul";
    case Shader::kConv2d: return "conv2d";
    case Shader::kConvDirect: return "conv_direct";
    case Shader::kConvTranspose: return "conv_transpose";
    case Shader::kPool2d: return "pool2d";
    case Shader::kReduce: return "reduce";
    case Shader::kRows: return "rows";
    case Shader::kBatchNorm: return "batchnorm";
    case Shader::kResize: return "resize";
    case Shader::kGather: return "gather";
    case Shader::kEpilogue: return "epilogue";
    default: return "?";
  }
}

}  // namespace tessera::vk
