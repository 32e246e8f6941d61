// Test helper for tests/mpi/dp_test.py: writes a copy of a sharded checkpoint without the
// weight chunks (and state chunks) of one parameter that start at a given row, so that
// the chunks no longer cover it.
//
//   tessera_drop_chunk IN.tsr OUT.tsr VALUE ROW
//
// Exit 0 when at least one chunk was dropped and OUT was written; 1 otherwise (message on
// stderr naming what was missing).
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tessera/tsr_file.h"

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s IN.tsr OUT.tsr VALUE ROW\n", argv[0]);
    return 1;
  }
  auto m = tessera::read_tsr_file(argv[1]);
  if (!m.is_ok()) {
    std::fprintf(stderr, "%s\n", m.status().message().c_str());
    return 1;
  }
  const std::string value = argv[3];
  const int64_t row = std::atoll(argv[4]);
  std::vector<tessera::WeightChunk> kept;
  for (const tessera::WeightChunk& c : (*m)->chunks)
    if (!(c.value == value && !c.global_offset.empty() && c.global_offset[0] == row)) kept.push_back(c);
  if (kept.size() == (*m)->chunks.size()) {
    std::fprintf(stderr, "no chunk of '%s' starts at row %lld\n", value.c_str(), static_cast<long long>(row));
    return 1;
  }
  (*m)->chunks = kept;
  tessera::Status s = tessera::write_tsr_file(**m, argv[2]);
  if (!s.is_ok()) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return 1;
  }
  return 0;
}
