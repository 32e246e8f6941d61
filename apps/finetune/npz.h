// NumPy .npz archives as np.savez writes them: a ZIP file of .npy members, stored
// (uncompressed), with or without ZIP64 extra fields. https://numpy.org/doc/stable/reference/generated/numpy.savez.html
#pragma once

#include <map>
#include <string>

#include "tessera/status.h"
#include "tessera/tensor.h"

namespace tessera {

/// Reads every member of `path` ("x.npy" -> key "x"). Errors name the file and member:
/// not a ZIP, a compressed member (np.savez_compressed: use np.savez), a truncated member,
/// or a member that is not a valid .npy.
Result<std::map<std::string, Tensor>> read_npz(const std::string& path);

}  // namespace tessera
