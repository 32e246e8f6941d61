// Tensor: a dense, row-major (C order) n-d array of one dtype. A Tensor either owns its
// bytes (allocate) or views bytes owned elsewhere (wrap: a caller's buffer, the arena, or
// the mmap of a .tsr file, kept alive by an optional keep-alive handle).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessera/dtype.h"
#include "tessera/status.h"

namespace tessera {

/// Dims of a tensor in elements, outermost first. A rank-0 tensor has an empty Shape.
using Shape = std::vector<int64_t>;

/// Largest tensor Tessera will allocate or accept, in bytes (guards against hostile shapes).
constexpr int64_t kMaxTensorBytes = int64_t{1} << 40;

/// Number of elements of `shape`; errors if a dim is negative or the product overflows or
/// exceeds kMaxTensorBytes elements.
Result<int64_t> shape_numel(const Shape& shape);
/// "[1,3,224,224]".
std::string shape_to_string(const Shape& shape);

/// Byte alignment of every buffer Tessera allocates (one cache line / AVX-512 vector).
constexpr size_t kTensorAlignment = 64;

class Tensor {
 public:
  Tensor() = default;

  /// A new tensor owning a 64-byte aligned, zero-filled buffer. Errors on a bad shape or
  /// when the allocation fails.
  static Result<Tensor> allocate(DType dtype, const Shape& shape);
  /// As allocate(), without zero-filling (for buffers every user writes before reading).
  static Result<Tensor> allocate_uninitialized(DType dtype, const Shape& shape);
  /// A view of `data` (which must hold numel * dtype_size bytes). `keepalive`, if given,
  /// is held as long as the tensor (or a copy of it) lives.
  static Tensor wrap(DType dtype, const Shape& shape, void* data,
                     std::shared_ptr<const void> keepalive = nullptr);

  bool defined() const { return dtype_ != DType::kUndefined; }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t dim(size_t i) const { return shape_[i]; }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return static_cast<size_t>(numel_) * dtype_size(dtype_); }

  void* data() { return data_; }
  const void* data() const { return data_; }
  template <typename T> T* data_as() { return static_cast<T*>(data_); }
  template <typename T> const T* data_as() const { return static_cast<const T*>(data_); }

  /// Re-points the view at other bytes of the same size (the executor binds arena and
  /// caller buffers this way).
  void set_data(void* data) { data_ = data; }
  /// A deep copy with its own buffer.
  Result<Tensor> clone() const;
  /// "float[1,3,224,224]".
  std::string describe() const;

 private:
  DType dtype_ = DType::kUndefined;
  Shape shape_;
  int64_t numel_ = 0;
  void* data_ = nullptr;
  std::shared_ptr<const void> owner_;
};

}  // namespace tessera
