// .npy files (see the header).
#include "heed/io/npy.h"

#include <cstring>

#include "heed/io/files.h"
#include "heed/util/error.h"

namespace heed {

std::string npy_bytes(std::span<const float> data, const std::vector<int64_t>& shape) {
  int64_t n = 1;
  std::string dims;
  for (int64_t d : shape) {
    check(d >= 0, "npy: a negative dimension ", d);
    n *= d;
    dims += std::to_string(d) + ", ";
  }
  check(static_cast<size_t>(n) == data.size(), "npy: ", data.size(), " values for a shape of ", n);
  if (!shape.empty()) dims.pop_back();  // "3, 80, " -> "3, 80"; one dimension: "3,"
  if (shape.size() > 1) dims.pop_back();
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
  // magic (6) + version (2) + header length (2) + header + '\n', padded to 64 with spaces
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  const auto len = static_cast<uint16_t>(header.size());
  out += static_cast<char>(len & 0xff);
  out += static_cast<char>(len >> 8);
  out += header;
  const size_t at = out.size();
  out.resize(at + data.size() * sizeof(float));
  std::memcpy(out.data() + at, data.data(), data.size() * sizeof(float));  // little-endian x86
  return out;
}

void write_npy(const std::string& path, std::span<const float> data,
               const std::vector<int64_t>& shape) {
  write_file_atomic(path, npy_bytes(data, shape));
}

}  // namespace heed
