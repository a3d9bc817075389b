// CTranslate2's model.bin (see the header).
#include "heed/io/ctranslate2.h"

#include <cstring>

#include "heed/util/error.h"

namespace heed::ct2 {
namespace {

constexpr uint32_t kVersion = 6;

size_t dtype_bytes(DType t) {
  switch (t) {
    case DType::Int8:
      return 1;
    case DType::Int16:
    case DType::Float16:
    case DType::BFloat16:
      return 2;
    case DType::Float32:
    case DType::Int32:
      break;
  }
  return 4;
}

template <class T>
void put(std::string& out, T v) {  // little-endian, as x86 and ARM store it
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  out.append(b, sizeof(T));
}

void put_string(std::string& out, const std::string& s) {
  check(s.size() + 1 <= 0xffff, "model.bin: a name of ", s.size(), " bytes");
  put<uint16_t>(out, static_cast<uint16_t>(s.size() + 1));
  out += s;
  out += '\0';
}

struct Reader {
  const std::string& bytes;
  const std::string& path;
  size_t at = 0;
  template <class T>
  T get() {
    check(at + sizeof(T) <= bytes.size(), path, ": truncated at byte ", at);
    T v;
    std::memcpy(&v, bytes.data() + at, sizeof(T));
    at += sizeof(T);
    return v;
  }
  std::string take(size_t n) {
    check(at + n <= bytes.size(), path, ": truncated at byte ", at);
    std::string s = bytes.substr(at, n);
    at += n;
    return s;
  }
  std::string string() {
    const auto n = get<uint16_t>();
    check(n >= 1, path, ": a string of length 0 at byte ", at);
    std::string s = take(n);
    check(s.back() == '\0', path, ": a string not ended by NUL at byte ", at);
    s.pop_back();
    return s;
  }
};

}  // namespace

Variable float_tensor(const std::vector<uint32_t>& shape, const float* values) {
  size_t n = 1;
  for (uint32_t d : shape) n *= d;
  return {.dtype = DType::Float32,
          .shape = shape,
          .bytes = std::string(reinterpret_cast<const char*>(values), n * sizeof(float))};
}

Variable int8_scalar(int8_t v) {
  return {.dtype = DType::Int8, .shape = {}, .bytes = std::string(1, static_cast<char>(v))};
}

Variable int16_scalar(int16_t v) {
  std::string b(2, '\0');
  std::memcpy(b.data(), &v, 2);
  return {.dtype = DType::Int16, .shape = {}, .bytes = b};
}

std::string encode_model_bin(const ModelBin& m) {
  std::string out;
  put<uint32_t>(out, kVersion);
  put_string(out, m.spec);
  put<uint32_t>(out, m.revision);
  put<uint32_t>(out, static_cast<uint32_t>(m.variables.size()));
  for (const auto& [name, v] : m.variables) {
    size_t n = dtype_bytes(v.dtype);
    for (uint32_t d : v.shape) n *= d;
    check(n == v.bytes.size(), "model.bin: ", name, " has ", v.bytes.size(), " bytes, its shape ",
          n);
    check(v.shape.size() <= 0xff && n <= 0xffffffffu, "model.bin: ", name, " is too large");
    put_string(out, name);
    put<uint8_t>(out, static_cast<uint8_t>(v.shape.size()));
    for (uint32_t d : v.shape) put<uint32_t>(out, d);
    put<uint8_t>(out, static_cast<uint8_t>(v.dtype));
    put<uint32_t>(out, static_cast<uint32_t>(n));
    out += v.bytes;
  }
  put<uint32_t>(out, static_cast<uint32_t>(m.aliases.size()));
  for (const auto& [alias, name] : m.aliases) {
    check(m.variables.contains(name), "model.bin: the alias ", alias, " of no variable ", name);
    put_string(out, alias);
    put_string(out, name);
  }
  return out;
}

ModelBin decode_model_bin(const std::string& bytes, const std::string& path) {
  Reader r{bytes, path};
  const auto version = r.get<uint32_t>();
  check(version == kVersion, path, ": model.bin version ", version, " (heed reads version ",
        kVersion, ")");
  ModelBin m;
  m.spec = r.string();
  m.revision = r.get<uint32_t>();
  const auto count = r.get<uint32_t>();
  for (uint32_t i = 0; i < count; ++i) {
    std::string name = r.string();
    Variable v;
    const auto rank = r.get<uint8_t>();
    size_t n = 1;
    for (uint8_t k = 0; k < rank; ++k) {
      v.shape.push_back(r.get<uint32_t>());
      n *= v.shape.back();
    }
    const auto dtype = r.get<uint8_t>();
    check(dtype <= 5, path, ": ", name, " has an unknown dtype ", int{dtype});
    v.dtype = static_cast<DType>(dtype);
    const auto size = r.get<uint32_t>();
    check(size == n * dtype_bytes(v.dtype), path, ": ", name, " has ", size,
          " bytes for its shape's ", n * dtype_bytes(v.dtype));
    v.bytes = r.take(size);
    m.variables.emplace(std::move(name), std::move(v));
  }
  const auto aliases = r.get<uint32_t>();
  for (uint32_t i = 0; i < aliases; ++i) {
    std::string alias = r.string();
    m.aliases.emplace(std::move(alias), r.string());
  }
  check(r.at == bytes.size(), path, ": ", bytes.size() - r.at, " bytes after the aliases");
  return m;
}

}  // namespace heed::ct2
