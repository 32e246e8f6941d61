#include "npy.h"

#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "tessera/tsr_file.h"

namespace tessera {

namespace {

struct Descr {
  const char* code;
  DType dtype;
};
constexpr Descr kDescrs[] = {
    {"<f4", DType::kFloat32}, {"<f8", DType::kFloat64}, {"<f2", DType::kFloat16}, {"<i8", DType::kInt64},
    {"<i4", DType::kInt32},   {"<i2", DType::kInt16},   {"|i1", DType::kInt8},    {"|u1", DType::kUInt8},
    {"<u2", DType::kUInt16},  {"<u4", DType::kUInt32},  {"<u8", DType::kUInt64},  {"|b1", DType::kBool},
};

std::string field(const std::string& header, const std::string& key) {
  size_t p = header.find("'" + key + "'");
  if (p == std::string::npos) return "";
  p = header.find(':', p);
  if (p == std::string::npos) return "";
  ++p;
  while (p < header.size() && header[p] == ' ') ++p;
  if (p >= header.size()) return "";
  if (header[p] == '\'') {
    size_t e = header.find('\'', p + 1);
    return e == std::string::npos ? "" : header.substr(p + 1, e - p - 1);
  }
  if (header[p] == '(') {
    size_t e = header.find(')', p);
    return e == std::string::npos ? "" : header.substr(p, e - p + 1);
  }
  size_t e = header.find_first_of(",}", p);
  return header.substr(p, e == std::string::npos ? std::string::npos : e - p);
}

}  // namespace

Result<Tensor> read_npy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return io_error("cannot open '" + path + "'");
  char magic[8];
  if (!f.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0) return invalid_argument("'" + path + "' is not a .npy file");
  uint32_t hlen = 0;
  if (magic[6] == 1) {
    unsigned char b[2];
    if (!f.read(reinterpret_cast<char*>(b), 2)) return invalid_argument("'" + path + "': truncated header");
    hlen = b[0] | (b[1] << 8);
  } else if (magic[6] == 2 || magic[6] == 3) {
    unsigned char b[4];
    if (!f.read(reinterpret_cast<char*>(b), 4)) return invalid_argument("'" + path + "': truncated header");
    hlen = b[0] | (b[1] << 8) | (b[2] << 16) | (uint32_t{b[3]} << 24);
  } else {
    return invalid_argument("'" + path + "': unsupported .npy version " + std::to_string(magic[6]));
  }
  if (hlen > (1u << 20)) return invalid_argument("'" + path + "': header too large");
  std::string header(hlen, '\0');
  if (!f.read(header.data(), hlen)) return invalid_argument("'" + path + "': truncated header");
  std::string descr = field(header, "descr");
  if (field(header, "fortran_order").find("True") != std::string::npos)
    return invalid_argument("'" + path + "': Fortran-order arrays are not supported (save np.ascontiguousarray(x))");
  DType dt = DType::kUndefined;
  for (const Descr& d : kDescrs)
    if (descr == d.code) dt = d.dtype;
  if (descr == "<b1") dt = DType::kBool;
  if (descr == "<i1") dt = DType::kInt8;
  if (descr == "<u1") dt = DType::kUInt8;
  if (dt == DType::kUndefined)
    return invalid_argument("'" + path + "': dtype '" + descr + "' is not supported (use little-endian numeric or bool)");
  std::string sh = field(header, "shape");
  if (sh.size() < 2 || sh.front() != '(' || sh.back() != ')') return invalid_argument("'" + path + "': bad shape in header");
  Shape shape;
  std::stringstream ss(sh.substr(1, sh.size() - 2));
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t a = item.find_first_not_of(' ');
    if (a == std::string::npos) continue;  // the empty item after a trailing comma
    size_t e = item.find_last_not_of(' ');
    std::string tok = item.substr(a, e - a + 1);
    if (!tok.empty() && tok.back() == 'L') tok.pop_back();  // Python 2 longs
    bool digits = !tok.empty() && tok.size() <= 18 && tok.find_first_not_of("0123456789") == std::string::npos;
    if (!digits) return invalid_argument("'" + path + "': bad dim '" + item + "' in shape " + sh);
    shape.push_back(std::stoll(tok));
  }
  // Check the file holds what the header claims before allocating it.
  TSR_ASSIGN_OR_RETURN(int64_t numel, shape_numel(shape));
  const std::streampos data_at = f.tellg();
  f.seekg(0, std::ios::end);
  const auto remaining = static_cast<uint64_t>(f.tellg() - data_at);
  f.seekg(data_at);
  if (remaining < static_cast<uint64_t>(numel) * dtype_size(dt))
    return invalid_argument("'" + path + "': data is shorter than shape " + shape_to_string(shape) + " needs");
  TSR_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(dt, shape));
  if (t.nbytes() && !f.read(static_cast<char*>(t.data()), static_cast<std::streamsize>(t.nbytes())))
    return invalid_argument("'" + path + "': data is shorter than shape " + shape_to_string(shape) + " needs");
  return t;
}

Status write_npy(const std::string& path, const Tensor& t) {
  const char* descr = nullptr;
  for (const Descr& d : kDescrs)
    if (d.dtype == t.dtype()) descr = d.code;
  if (!descr) return unimplemented(std::string("cannot write dtype ") + dtype_name(t.dtype()) + " to .npy");
  std::string shape = "(";
  for (size_t i = 0; i < t.shape().size(); ++i) shape += std::to_string(t.shape()[i]) + (t.shape().size() == 1 ? "," : (i + 1 < t.shape().size() ? ", " : ""));
  shape += ")";
  std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  out += header;
  out.append(static_cast<const char*>(t.data()), t.nbytes());
  return write_file_atomic(path, out.data(), out.size());
}

}  // namespace tessera
