#include "npz.h"

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "apps/tessera/npy.h"

namespace tessera {

namespace {
uint32_t u32(const unsigned char* p) { return p[0] | (p[1] << 8) | (p[2] << 16) | (uint32_t{p[3]} << 24); }
uint16_t u16(const unsigned char* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
uint64_t u64(const unsigned char* p) { return u32(p) | (uint64_t{u32(p + 4)} << 32); }
}  // namespace

Result<std::map<std::string, Tensor>> read_npz(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return not_found("cannot open '" + path + "'");
  std::vector<unsigned char> buf((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::map<std::string, Tensor> out;
  size_t p = 0;
  while (p + 4 <= buf.size()) {
    const uint32_t sig = u32(&buf[p]);
    if (sig != 0x04034b50) break;  // central directory or end
    if (p + 30 > buf.size()) return invalid_argument("'" + path + "': truncated ZIP header");
    const unsigned char* h = &buf[p];
    const uint16_t flags = u16(h + 6), method = u16(h + 8), nlen = u16(h + 26), xlen = u16(h + 28);
    uint64_t csize = u32(h + 18), usize = u32(h + 22);
    if (p + 30 + nlen + xlen > buf.size()) return invalid_argument("'" + path + "': truncated ZIP header");
    std::string name(reinterpret_cast<const char*>(h + 30), nlen);
    // ZIP64 extra field (id 1): uncompressed then compressed size, each 8 bytes, when 0xFFFFFFFF.
    for (size_t e = 0; e + 4 <= xlen;) {
      const unsigned char* x = h + 30 + nlen + e;
      const uint16_t id = u16(x), sz = u16(x + 2);
      if (id == 1) {
        size_t q = 4;
        if (usize == 0xFFFFFFFFu && q + 8 <= 4u + sz) { usize = u64(x + q); q += 8; }
        if (csize == 0xFFFFFFFFu && q + 8 <= 4u + sz) { csize = u64(x + q); q += 8; }
      }
      e += 4 + sz;
    }
    if (method != 0) return invalid_argument("'" + path + "': member '" + name + "' is compressed (write it with np.savez, not np.savez_compressed)");
    if (flags & 8) return invalid_argument("'" + path + "': member '" + name + "' has a data descriptor (streamed ZIP): not supported");
    const size_t data = p + 30 + nlen + xlen;
    if (csize != usize || data + csize > buf.size()) return invalid_argument("'" + path + "': member '" + name + "' is truncated");
    // read_npy reads files: hand it the member through a temporary file.
    char tmpl[] = "/tmp/tessera-npz-XXXXXX";
    int fd = mkstemp(tmpl);
    if (fd < 0) return io_error("cannot create a temporary file for '" + path + "'");
    bool ok = ::write(fd, &buf[data], csize) == static_cast<ssize_t>(csize);
    ::close(fd);
    Result<Tensor> t = ok ? read_npy(tmpl) : Result<Tensor>(io_error("cannot write a temporary file"));
    std::remove(tmpl);
    if (!t.is_ok()) return invalid_argument("'" + path + "': member '" + name + "': " + t.status().message());
    std::string key = name.size() > 4 && name.substr(name.size() - 4) == ".npy" ? name.substr(0, name.size() - 4) : name;
    out[key] = std::move(t).value();
    p = data + csize;
  }
  if (out.empty()) return invalid_argument("'" + path + "' is not a .npz file (no ZIP members)");
  return out;
}

}  // namespace tessera
