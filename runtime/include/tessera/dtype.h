// Element types. The numeric values are ONNX TensorProto.DataType codes, so a dtype read
// from an ONNX or .tsr file is checked with dtype_is_valid() and then cast.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace tessera {

enum class DType : int32_t {
  kUndefined = 0,
  kFloat32 = 1,
  kUInt8 = 2,
  kInt8 = 3,
  kUInt16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,   // one byte per element, 0 or 1
  kFloat16 = 10,
  kFloat64 = 11,
  kUInt32 = 12,
  kUInt64 = 13,
  kBFloat16 = 16,
  // 8-bit floats (tessera/float8.h), one raw byte per element.
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  // 4-bit integers. In memory and in .tsr files one element per byte (uint4: 0..15 in a
  // uint8; int4: -8..7 sign-extended in an int8), not packed two per byte as ONNX's
  // TensorProto stores them; the converter and the CLI's .pb reader/writer (un)pack.
  kUInt4 = 21,
  kInt4 = 22,
};

/// True for the codes above that Tessera can hold in a tensor (not string/complex).
bool dtype_is_valid(int32_t code);
/// Bytes per element; 0 for kUndefined and kString.
size_t dtype_size(DType t);
/// ONNX name: "float", "int64", "bool", ...
const char* dtype_name(DType t);
/// True for the four float8 types.
inline bool dtype_is_float8(DType t) { return t >= DType::kFloat8E4M3FN && t <= DType::kFloat8E5M2FNUZ; }
/// True for int4 and uint4.
inline bool dtype_is_int4(DType t) { return t == DType::kUInt4 || t == DType::kInt4; }

/// Maps a C++ element type to its DType: dtype_of<float>() == DType::kFloat32.
template <typename T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<float>() { return DType::kFloat32; }
template <> constexpr DType dtype_of<double>() { return DType::kFloat64; }
template <> constexpr DType dtype_of<int8_t>() { return DType::kInt8; }
template <> constexpr DType dtype_of<uint8_t>() { return DType::kUInt8; }
template <> constexpr DType dtype_of<int16_t>() { return DType::kInt16; }
template <> constexpr DType dtype_of<uint16_t>() { return DType::kUInt16; }
template <> constexpr DType dtype_of<int32_t>() { return DType::kInt32; }
template <> constexpr DType dtype_of<uint32_t>() { return DType::kUInt32; }
template <> constexpr DType dtype_of<int64_t>() { return DType::kInt64; }
template <> constexpr DType dtype_of<uint64_t>() { return DType::kUInt64; }
template <> constexpr DType dtype_of<bool>() { return DType::kBool; }

}  // namespace tessera
