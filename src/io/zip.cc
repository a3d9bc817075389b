// ZIP archives, stored entries (see the header). The layout (PKWARE's APPNOTE.TXT): local file
// headers with the data, then the central directory, then the end-of-central-directory record.
#include "heed/io/zip.h"

#include <cstdint>
#include <cstring>

#include "heed/io/files.h"
#include "heed/util/error.h"

namespace heed {
namespace {

struct Bytes {
  const std::string& b;
  const std::string& path;
  template <class T>
  T at(size_t i) const {
    check(i + sizeof(T) <= b.size(), path, ": truncated ZIP archive (at byte ", i, ")");
    T v;
    std::memcpy(&v, b.data() + i, sizeof(T));  // little-endian, as x86 and ARM
    return v;
  }
};

}  // namespace

std::map<std::string, std::string> read_zip(const std::string& path) {
  return decode_zip(read_file(path), path);
}

std::map<std::string, std::string> decode_zip(const std::string& bytes, const std::string& path) {
  const Bytes b{bytes, path};
  // the end-of-central-directory record: 22 bytes and a comment of up to 65535
  check(bytes.size() >= 22, path, ": not a ZIP archive (", bytes.size(), " bytes)");
  size_t eocd = std::string::npos;
  for (size_t i = bytes.size() - 22 + 1; i-- > 0 && bytes.size() - i <= 22 + 65535;)
    if (b.at<uint32_t>(i) == 0x06054b50) {
      eocd = i;
      break;
    }
  check(eocd != std::string::npos, path, ": not a ZIP archive (no end of central directory)");
  const auto entries = b.at<uint16_t>(eocd + 10);
  const auto dir_offset = b.at<uint32_t>(eocd + 16);
  check(dir_offset != 0xffffffffu && entries != 0xffff, path,
        ": a ZIP64 archive (over 4 GB or 65535 entries), which heed does not read");
  std::map<std::string, std::string> out;
  size_t at = dir_offset;
  for (uint16_t k = 0; k < entries; ++k) {
    check(b.at<uint32_t>(at) == 0x02014b50, path, ": a damaged ZIP central directory");
    const auto method = b.at<uint16_t>(at + 10);
    const auto size = b.at<uint32_t>(at + 20);  // compressed; stored: the same as uncompressed
    const auto name_len = b.at<uint16_t>(at + 28), extra_len = b.at<uint16_t>(at + 30),
               comment_len = b.at<uint16_t>(at + 32);
    const auto local = b.at<uint32_t>(at + 42);
    check(at + 46 + name_len <= bytes.size(), path, ": truncated ZIP archive");
    std::string name = bytes.substr(at + 46, name_len);
    check(method == 0, path, ": ", name, " is compressed (method ", method,
          "); heed reads stored entries, as torch.save and numpy.savez write them");
    check(size != 0xffffffffu, path, ": ", name, " is a ZIP64 entry (over 4 GB)");
    check(b.at<uint32_t>(local) == 0x04034b50, path, ": ", name, ": a damaged local header");
    const size_t data = local + 30 + b.at<uint16_t>(local + 26) + b.at<uint16_t>(local + 28);
    check(data + size <= bytes.size(), path, ": ", name, " is truncated");
    out.emplace(std::move(name), bytes.substr(data, size));
    at += 46 + name_len + extra_len + comment_len;
  }
  return out;
}

}  // namespace heed
