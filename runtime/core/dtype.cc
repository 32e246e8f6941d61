#include "tessera/dtype.h"

namespace tessera {

bool dtype_is_valid(int32_t code) {
  switch (code) {
    case 1: case 2: case 3: case 4: case 5: case 6: case 7: case 9: case 10: case 11:
    case 12: case 13: case 16: case 17: case 18: case 19: case 20: case 21: case 22:
      return true;
    default:
      return false;
  }
}

size_t dtype_size(DType t) {
  switch (t) {
    case DType::kFloat32: case DType::kInt32: case DType::kUInt32: return 4;
    case DType::kUInt8: case DType::kInt8: case DType::kBool: return 1;
    case DType::kFloat8E4M3FN: case DType::kFloat8E4M3FNUZ: case DType::kFloat8E5M2: case DType::kFloat8E5M2FNUZ:
    case DType::kUInt4: case DType::kInt4: return 1;
    case DType::kUInt16: case DType::kInt16: case DType::kFloat16: case DType::kBFloat16: return 2;
    case DType::kInt64: case DType::kFloat64: case DType::kUInt64: return 8;
    default: return 0;
  }
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::kUndefined: return "undefined";
    case DType::kFloat32: return "float";
    case DType::kUInt8: return "uint8";
    case DType::kInt8: return "int8";
    case DType::kUInt16: return "uint16";
    case DType::kInt16: return "int16";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kString: return "string";
    case DType::kBool: return "bool";
    case DType::kFloat16: return "float16";
    case DType::kFloat64: return "double";
    case DType::kUInt32: return "uint32";
    case DType::kUInt64: return "uint64";
    case DType::kBFloat16: return "bfloat16";
    case DType::kFloat8E4M3FN: return "float8e4m3fn";
    case DType::kFloat8E4M3FNUZ: return "float8e4m3fnuz";
    case DType::kFloat8E5M2: return "float8e5m2";
    case DType::kFloat8E5M2FNUZ: return "float8e5m2fnuz";
    case DType::kUInt4: return "uint4";
    case DType::kInt4: return "int4";
  }
  return "unknown";
}

}  // namespace tessera
