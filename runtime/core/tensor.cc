#include "tessera/tensor.h"

#include <cstdlib>
#include <cstring>
#include <limits>

namespace tessera {

Result<int64_t> shape_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return invalid_argument("negative dim in shape " + shape_to_string(shape));
    if (d != 0 && n > kMaxTensorBytes / d)
      return out_of_memory("shape " + shape_to_string(shape) + " is too large");
    n *= d;
  }
  return n;
}

std::string shape_to_string(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

Result<Tensor> Tensor::allocate(DType dtype, const Shape& shape) {
  TSR_ASSIGN_OR_RETURN(Tensor t, allocate_uninitialized(dtype, shape));
  size_t rounded = (t.nbytes() + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
  std::memset(t.data_, 0, rounded == 0 ? kTensorAlignment : rounded);
  return t;
}

Result<Tensor> Tensor::allocate_uninitialized(DType dtype, const Shape& shape) {
  if (dtype_size(dtype) == 0)
    return unimplemented(std::string("cannot allocate a tensor of dtype ") + dtype_name(dtype));
  TSR_ASSIGN_OR_RETURN(int64_t n, shape_numel(shape));
  size_t bytes = static_cast<size_t>(n) * dtype_size(dtype);
  if (bytes > static_cast<size_t>(kMaxTensorBytes))
    return out_of_memory("tensor " + shape_to_string(shape) + " exceeds the size limit");
  size_t rounded = (bytes + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
  if (rounded == 0) rounded = kTensorAlignment;
  void* p = std::aligned_alloc(kTensorAlignment, rounded);
  if (!p) return out_of_memory("failed to allocate " + std::to_string(bytes) + " bytes");
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = shape;
  t.numel_ = n;
  t.data_ = p;
  t.owner_ = std::shared_ptr<const void>(p, [](const void* q) { std::free(const_cast<void*>(q)); });
  return t;
}

Tensor Tensor::wrap(DType dtype, const Shape& shape, void* data, std::shared_ptr<const void> keepalive) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = shape;
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  t.numel_ = n;
  t.data_ = data;
  t.owner_ = std::move(keepalive);
  return t;
}

Result<Tensor> Tensor::clone() const {
  // Not allocate(): zeroing the bytes that the copy overwrites cost as much as the copy
  // (Session::run clones every output). Only the alignment padding after them is zeroed.
  TSR_ASSIGN_OR_RETURN(Tensor t, allocate_uninitialized(dtype_, shape_));
  const size_t n = nbytes(), rounded = (n + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
  if (n) std::memcpy(t.data(), data_, n);
  std::memset(static_cast<uint8_t*>(t.data_) + n, 0, (rounded == 0 ? kTensorAlignment : rounded) - n);
  return t;
}

std::string Tensor::describe() const { return std::string(dtype_name(dtype_)) + shape_to_string(shape_); }

}  // namespace tessera
