// safetensors encode/decode with strict validation.
// Leaves out: zero-copy loading (tensors are copied into aligned storage).
#include "heed/io/safetensors.h"

#include <algorithm>
#include <cstring>

#include <nlohmann/json.hpp>

#include "heed/io/files.h"
#include "heed/util/error.h"
#include "heed/util/json.h"

namespace heed {

std::string encode_safetensors(const NamedTensors& tensors,
                               const std::map<std::string, std::string>& metadata) {
  nlohmann::ordered_json header;
  if (!metadata.empty()) header["__metadata__"] = metadata;
  size_t offset = 0;
  for (const auto& [name, t] : tensors) {
    check(name != "__metadata__" && !header.contains(name), "safetensors: duplicate tensor '", name,
          "'");
    size_t bytes = static_cast<size_t>(t.numel()) * sizeof(float);
    header[name] = {
        {"dtype", "F32"}, {"shape", t.shape().dims()}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string json = header.dump();
  json.append((8 - json.size() % 8) % 8, ' ');  // the data starts 8-byte aligned
  std::string out(8, '\0');
  uint64_t n = json.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  out += json;
  out.reserve(out.size() + offset);
  for (const auto& [name, t] : tensors)
    out.append(reinterpret_cast<const char*>(t.data()), t.numel() * sizeof(float));
  return out;
}

void write_safetensors(const std::string& path, const NamedTensors& tensors,
                       const std::map<std::string, std::string>& metadata) {
  write_file_atomic(path, encode_safetensors(tensors, metadata));
}

Safetensors decode_safetensors(const std::string& bytes, const std::string& path) {
  check(bytes.size() >= 8, path, ": truncated: ", bytes.size(),
        " bytes, too short for a safetensors header");
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i)
    n |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
  check(n <= bytes.size() - 8, path, ": truncated: the header claims ", n,
        " bytes but the file has ", bytes.size() - 8, " after the length field");
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(bytes.begin() + 8, bytes.begin() + 8 + static_cast<long>(n));
  } catch (const nlohmann::json::exception& e) {
    fail(path, ": the safetensors header is not valid JSON (", e.what(), ")");
  }
  check(header.is_object(), path, ": the safetensors header is not a JSON object");
  check_json_numbers(header, path);
  const size_t data_size = bytes.size() - 8 - n;
  const char* data = bytes.data() + 8 + n;
  Safetensors out;
  for (auto& [name, info] : header.items()) {
    if (name == "__metadata__") {
      check(info.is_object(), path, ": __metadata__ is not an object");
      for (auto& [k, v] : info.items()) {
        check(v.is_string(), path, ": metadata value of '", k, "' is not a string");
        out.metadata[k] = v.get<std::string>();
      }
      continue;
    }
    try {
      std::string dtype = info.at("dtype").get<std::string>();
      check(dtype == "F32", path, ": tensor '", name, "' has dtype ", dtype,
            "; heed reads F32 only");
      // lists of integers (a float would be cast, undefined beyond the type's range)
      const auto all_integers = [](const nlohmann::json& a, bool non_negative) {
        return a.is_array() && std::all_of(a.begin(), a.end(), [&](const nlohmann::json& x) {
                 return non_negative ? x.is_number_unsigned() : x.is_number_integer();
               });
      };
      check(all_integers(info.at("shape"), false) && all_integers(info.at("data_offsets"), true),
            path, ": tensor '", name, "' has a shape or data_offsets that are not integers");
      auto dims = info.at("shape").get<std::vector<int64_t>>();
      auto off = info.at("data_offsets").get<std::vector<uint64_t>>();
      check(off.size() == 2 && off[0] <= off[1], path, ": tensor '", name,
            "' has invalid data_offsets");
      check(dims.size() <= Shape::kMaxRank, path, ": tensor '", name, "' has rank ", dims.size(),
            " (at most ", Shape::kMaxRank, ")");
      // a header can claim any shape: its size multiplied out without overflow (then it must
      // match the data offsets, which must lie in the file, before anything is allocated)
      uint64_t elements = 1;
      for (int64_t d : dims) {
        check(d >= 0, path, ": tensor '", name, "' has a negative dimension");
        check(d == 0 || elements <= (uint64_t{1} << 60) / static_cast<uint64_t>(d), path,
              ": tensor '", name, "' claims a shape of more than 2^60 elements");
        elements *= static_cast<uint64_t>(d);
      }
      Shape shape(dims);
      check(off[1] - off[0] == static_cast<uint64_t>(shape.numel()) * sizeof(float), path,
            ": tensor '", name, "' of shape ", shape.str(), " has ", off[1] - off[0],
            " bytes of data, expected ", shape.numel() * sizeof(float));
      check(off[1] <= data_size, path, ": truncated: tensor '", name, "' ends at byte ", off[1],
            " of the data section, which has only ", data_size, " bytes");
      Tensor t = Tensor::empty(shape);
      if (shape.numel()) std::memcpy(t.data(), data + off[0], off[1] - off[0]);
      out.tensors[name] = t;
    } catch (const nlohmann::json::exception& e) {
      fail(path, ": tensor '", name, "' has a malformed header entry (", e.what(), ")");
    }
  }
  return out;
}

Safetensors read_safetensors(const std::string& path) {
  return decode_safetensors(read_file(path), path);
}

}  // namespace heed
