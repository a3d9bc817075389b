// .npy files (see the header).
#include "heed/io/npy.h"

#include <cstring>

#include "heed/io/files.h"
#include "heed/io/zip.h"
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

std::vector<float> NpyArray::floats() const {
  check(descr == "<f4", "npy: an array of ", descr, ", not float32");
  std::vector<float> out(bytes.size() / 4);
  std::memcpy(out.data(), bytes.data(), out.size() * 4);
  return out;
}

NpyArray decode_npy(const std::string& bytes, const std::string& what) {
  check(bytes.size() >= 10 && bytes.compare(0, 6, "\x93NUMPY") == 0, what, ": not a .npy array");
  const auto major = static_cast<unsigned char>(bytes[6]);
  check(major >= 1 && major <= 3, what, ": .npy version ", int{major});
  size_t len = static_cast<unsigned char>(bytes[8]) |
               (static_cast<size_t>(static_cast<unsigned char>(bytes[9])) << 8);
  size_t at = 10;
  if (major >= 2) {
    check(bytes.size() >= 12, what, ": a truncated .npy header");
    len |= (static_cast<size_t>(static_cast<unsigned char>(bytes[10])) << 16) |
           (static_cast<size_t>(static_cast<unsigned char>(bytes[11])) << 24);
    at = 12;
  }
  check(at + len <= bytes.size(), what, ": a truncated .npy header");
  const std::string header = bytes.substr(at, len);
  auto field = [&](const std::string& key) {  // the text after 'key': up to the next ',' or ')'
    const size_t k = header.find("'" + key + "'");
    check(k != std::string::npos, what, ": the .npy header has no ", key);
    return k + key.size() + 2;
  };
  NpyArray a;
  size_t d = header.find('\'', header.find(':', field("descr")));
  check(d != std::string::npos, what, ": a malformed descr");
  a.descr = header.substr(d + 1, header.find('\'', d + 1) - d - 1);
  check(a.descr == "<f4" || a.descr == "|i1", what, ": dtype ", a.descr,
        " (heed reads float32 '<f4' and int8 '|i1')");
  const size_t order = header.find_first_not_of(" :", field("fortran_order"));
  check(order != std::string::npos && header.compare(order, 5, "False") == 0, what,
        ": a Fortran-order array (heed reads C order)");
  const size_t open = header.find('(', field("shape")), close = header.find(')', open);
  check(open != std::string::npos && close != std::string::npos, what, ": a malformed shape");
  int64_t n = 1;
  for (size_t i = open + 1; i < close;) {
    while (i < close && (header[i] == ' ' || header[i] == ',')) ++i;
    if (i >= close) break;
    int64_t v = 0;
    check(header[i] >= '0' && header[i] <= '9', what, ": a malformed shape");
    while (i < close && header[i] >= '0' && header[i] <= '9') v = v * 10 + (header[i++] - '0');
    a.shape.push_back(v);
    n *= v;
  }
  const size_t size = static_cast<size_t>(n) * (a.descr == "<f4" ? 4 : 1);
  check(bytes.size() - at - len == size, what, ": ", bytes.size() - at - len,
        " bytes of data for a shape of ", n, " values");
  a.bytes = bytes.substr(at + len);
  return a;
}

std::map<std::string, NpyArray> read_npz(const std::string& path) {
  std::map<std::string, NpyArray> out;
  for (auto& [name, bytes] : read_zip(path)) {
    const std::string key = name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0
                                ? name.substr(0, name.size() - 4)
                                : name;
    std::string what = path;
    what += ": ";
    what += name;
    out.emplace(key, decode_npy(bytes, what));
  }
  return out;
}

}  // namespace heed
