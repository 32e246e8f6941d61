// Test helper for tests/mpi/dp_test.py: writes a copy of a sharded checkpoint with its
// weight chunks spoiled in one way, for the bad-input cases of a resume.
//
//   tessera_drop_chunk IN.tsr OUT.tsr VALUE ROW
//       without the weight chunks (and state chunks) of VALUE that start at row ROW, so that
//       the chunks no longer cover it;
//   tessera_drop_chunk --duplicate IN.tsr OUT.tsr VALUE ROW
//       with the chunks of VALUE starting at row ROW written twice (overlapping chunks);
//   tessera_drop_chunk --rename-state IN.tsr OUT.tsr VALUE OLD NEW
//       with VALUE's optimizer-state chunks named OLD renamed NEW (the state of another
//       optimizer);
//   tessera_drop_chunk --retarget IN.tsr OUT.tsr VALUE OTHER
//       with VALUE's chunks (weight and state) claiming to be chunks of OTHER (a value of
//       another shape, or not a parameter at all); OTHER's own chunks are dropped.
//
// Exit 0 when at least one chunk was changed and OUT was written; 1 otherwise (message on
// stderr naming what was missing). OUT is written by the ordinary writer, so a spoiling the
// writer refuses is reported the same way.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tessera/tsr_file.h"

namespace {

int usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s IN.tsr OUT.tsr VALUE ROW\n"
               "       %s --duplicate IN.tsr OUT.tsr VALUE ROW\n"
               "       %s --rename-state IN.tsr OUT.tsr VALUE OLD NEW\n"
               "       %s --retarget IN.tsr OUT.tsr VALUE OTHER\n",
               argv0, argv0, argv0, argv0);
  return 1;
}

bool starts_at(const tessera::WeightChunk& c, const std::string& value, int64_t row) {
  return c.value == value && !c.global_offset.empty() && c.global_offset[0] == row;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = "drop";
  int a = 1;
  if (argc > 1 && argv[1][0] == '-' && argv[1][1] == '-') mode = argv[a++] + 2;
  const int rest = argc - a;
  if (!((mode == "drop" || mode == "duplicate" || mode == "retarget") && rest == 4) && !(mode == "rename-state" && rest == 5))
    return usage(argv[0]);
  auto m = tessera::read_tsr_file(argv[a]);
  if (!m.is_ok()) {
    std::fprintf(stderr, "%s\n", m.status().message().c_str());
    return 1;
  }
  const std::string value = argv[a + 2];
  std::vector<tessera::WeightChunk> out;
  size_t changed = 0;
  for (const tessera::WeightChunk& c : (*m)->chunks) {
    if (mode == "drop") {
      if (starts_at(c, value, std::atoll(argv[a + 3]))) { ++changed; continue; }
      out.push_back(c);
    } else if (mode == "duplicate") {
      out.push_back(c);
      if (starts_at(c, value, std::atoll(argv[a + 3]))) { out.push_back(c); ++changed; }
    } else if (mode == "rename-state") {
      tessera::WeightChunk k = c;
      if (c.value == value && c.state == argv[a + 3]) { k.state = argv[a + 4]; ++changed; }
      out.push_back(k);
    } else {  // retarget
      if (c.value == argv[a + 3]) continue;
      tessera::WeightChunk k = c;
      if (c.value == value) { k.value = argv[a + 3]; ++changed; }
      out.push_back(k);
    }
  }
  if (changed == 0) {
    std::fprintf(stderr, "%s: no chunk of '%s' matched\n", mode.c_str(), value.c_str());
    return 1;
  }
  (*m)->chunks = out;
  tessera::Status s = tessera::write_tsr_file(**m, argv[a + 1]);
  if (!s.is_ok()) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return 1;
  }
  return 0;
}
