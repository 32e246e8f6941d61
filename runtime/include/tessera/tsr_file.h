// Reading and writing .tsr files (schema/tessera.fbs). The reader maps the file, verifies
// the FlatBuffer and every segment (bounds, alignment, XXH3-64 checksum) and every tensor
// reference before it builds the Graph IR; constant tensors then point into the mapping
// (zero copy). The writer writes to "<path>.tmp-<pid>" and renames it into place.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessera/graph.h"
#include "tessera/status.h"

namespace tessera {

/// The format version this build writes and the newest it reads.
constexpr uint32_t kTsrFormatVersion = 1;
/// Alignment of segments in the file (bytes) and of tensors inside a segment (bytes).
constexpr uint64_t kTsrSegmentAlignment = 4096;
constexpr uint64_t kTsrTensorAlignment = 64;
/// Bytes of the header check after the FlatBuffer ("TSRH", u32 0, u64 XXH3-64).
constexpr uint64_t kTsrHeaderCheckBytes = 16;

struct TsrReadOptions {
  /// Verify each segment's XXH3-64 checksum (reads every weight byte once).
  bool verify_checksums = true;
};

/// Reads a .tsr file by mmap. Errors (kInvalidFile, naming the file and the problem) on a
/// wrong identifier, a FlatBuffer that fails verification, a segment or tensor outside the
/// file, a size overflow, a bad alignment, a checksum mismatch, or a graph that refers to
/// values that do not exist. kIoError if the file cannot be opened or mapped.
Result<std::shared_ptr<Model>> read_tsr_file(const std::string& path, const TsrReadOptions& options = {});

/// Drops from this process's resident memory the whole pages of [data, data + bytes) that
/// lie inside a file mapped by read_tsr_file (madvise MADV_DONTNEED on that read-only
/// private mapping; the partial pages at either end stay). The next read of such a page
/// faults it back in, unchanged, from the file (normally still in the page cache), so this
/// is always safe; memory outside such a mapping (a model read from a buffer, a tensor on
/// the heap) is left alone. read_tsr_file releases the whole file once it has verified the
/// checksums, and the planner releases a node's constant inputs once its kernel is
/// compiled: weights a kernel repacked at plan time (and reads only in its packed copy)
/// then occupy memory once, not twice. Returns the bytes released (0 when none).
size_t release_mapped_pages(const void* data, size_t bytes);

/// Reads a .tsr image from memory without copying: tensors point into `data`, which must
/// stay alive and unchanged while the model (or anything made from it) lives; `keepalive`
/// (optional) is held by the model for that purpose.
Result<std::shared_ptr<Model>> read_tsr_buffer(const void* data, size_t size,
                                               std::shared_ptr<const void> keepalive,
                                               const TsrReadOptions& options = {},
                                               const std::string& what = "<buffer>");

/// OK unless some weight of `model` exists only as pre-sharded chunks (Model::chunks of a
/// value that has no initializer): a sharded training checkpoint, which only
/// tessera-finetune --resume assembles. Then kInvalidArgument naming `what`, the first such
/// weight and the number of chunks, and saying what to use instead. Session::create calls it
/// (unless SessionOptions::allow_partial_weights: tessera inspect, the trainer's input
/// checks), and with it Session::load (which names the file) and the C API's session
/// creation; so does the ONNX export.
Status check_weights_complete(const Model& model, const std::string& what);

/// Serializes `model` into a .tsr image (FlatBuffer + page-aligned weight segment).
Result<std::vector<uint8_t>> serialize_tsr(const Model& model);

/// Writes `model` to `path` atomically (temporary file, then rename).
Status write_tsr_file(const Model& model, const std::string& path);

/// Writes `bytes` to `path` atomically (temporary file in the same folder, then rename).
Status write_file_atomic(const std::string& path, const void* bytes, size_t size);

}  // namespace tessera
