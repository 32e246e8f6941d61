// NumPy .npy files (format versions 1.0-3.0): little-endian, C-order arrays of the
// numeric dtypes Tessera holds. https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html
#pragma once

#include <string>

#include "tessera/status.h"
#include "tessera/tensor.h"

namespace tessera {

/// Reads `path`. Errors name the file: not a .npy, big-endian or Fortran-order data, an
/// unsupported dtype, a payload shorter than the shape needs.
Result<Tensor> read_npy(const std::string& path);

/// Writes `t` as a version 1.0 .npy, atomically (temporary file, then rename).
Status write_npy(const std::string& path, const Tensor& t);

}  // namespace tessera
