// safetensors encode/decode with strict validation.
// Leaves out: zero-copy loading (tensors are copied into aligned storage).
#include "heed/io/safetensors.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

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

namespace {
// The header's length N from the first 8 bytes of a file of `file_size` bytes.
uint64_t header_length(std::string_view first8, uint64_t file_size, const std::string& path) {
  check(first8.size() >= 8 && file_size >= 8, path, ": truncated: ", file_size,
        " bytes, too short for a safetensors header");
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i)
    n |= static_cast<uint64_t>(static_cast<unsigned char>(first8[i])) << (8 * i);
  check(n <= file_size - 8, path, ": truncated: the header claims ", n, " bytes but the file has ",
        file_size - 8, " after the length field");
  return n;
}

// The N bytes of JSON after the length field, checked against a data section of data_size bytes.
SafetensorsHeader parse_header(std::string_view text, uint64_t data_size, const std::string& path) {
  nlohmann::json header;
  // JSON keeps the last of two equal keys: a header naming a tensor twice is refused instead
  std::set<std::string> names;
  std::string twice;
  const nlohmann::json::parser_callback_t note_keys =
      [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
        if (depth == 1 && event == nlohmann::json::parse_event_t::key &&
            !names.insert(parsed.get<std::string>()).second && twice.empty())
          twice = parsed.get<std::string>();
        return true;
      };
  try {
    header = nlohmann::json::parse(text.begin(), text.end(), note_keys);
  } catch (const nlohmann::json::exception& e) {
    fail(path, ": the safetensors header is not valid JSON (", e.what(), ")");
  }
  check(header.is_object(), path, ": the safetensors header is not a JSON object");
  check(twice.empty(), path, ": the safetensors header names '", twice, "' twice");
  check_json_numbers(header, path);
  SafetensorsHeader out;
  std::vector<std::tuple<uint64_t, uint64_t, std::string>> ranges;  // (begin, end, tensor)
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
      ranges.emplace_back(off[0], off[1], name);
      out.tensors[name] = {shape, off[0]};
    } catch (const nlohmann::json::exception& e) {
      fail(path, ": tensor '", name, "' has a malformed header entry (", e.what(), ")");
    }
  }
  // the format's rule: the tensors' byte ranges tile the data section, in order, without
  // overlaps or holes (two tensors on one range would alias; a hole is bytes nobody reads)
  std::sort(ranges.begin(), ranges.end());
  uint64_t end = 0;
  for (const auto& [b, e, name] : ranges) {
    check(b >= end, path, ": tensor '", name, "' (bytes ", b, "..", e,
          ") overlaps the tensor before it, which ends at byte ", end);
    check(b == end, path, ": a hole in the data section before tensor '", name, "' (bytes ", end,
          "..", b, " belong to no tensor)");
    end = e;
  }
  check(end == data_size, path, ": ", data_size - end,
        " bytes after the last tensor's data belong to no tensor");
  return out;
}
}  // namespace

Safetensors decode_safetensors(const std::string& bytes, const std::string& path) {
  const uint64_t n = header_length(bytes, bytes.size(), path);
  const uint64_t data_size = bytes.size() - 8 - n;
  const SafetensorsHeader header =
      parse_header(std::string_view(bytes).substr(8, n), data_size, path);
  const char* data = bytes.data() + 8 + n;
  Safetensors out;
  out.metadata = header.metadata;
  for (const auto& [name, entry] : header.tensors) {
    Tensor t = Tensor::empty(entry.shape);
    if (entry.shape.numel())
      std::memcpy(t.data(), data + entry.begin,
                  static_cast<size_t>(entry.shape.numel()) * sizeof(float));
    out.tensors[name] = t;
  }
  return out;
}

SafetensorsHeader read_safetensors_header(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in.good()) {
    const int e = errno;
    throw FileError(path, e, std::string("cannot open (") + std::strerror(e) + ")");
  }
  std::error_code ec;
  const uint64_t size = std::filesystem::file_size(path, ec);
  check(!ec, path, ": cannot read its size (", ec.message(), ")");
  std::string first8(8, '\0');
  in.read(first8.data(), 8);
  first8.resize(static_cast<size_t>(in.gcount()));
  const uint64_t n = header_length(first8, size, path);
  std::string text(static_cast<size_t>(n), '\0');
  in.read(text.data(), static_cast<std::streamsize>(n));
  check(static_cast<uint64_t>(in.gcount()) == n, path, ": read error in the header");
  return parse_header(text, size - 8 - n, path);
}

Safetensors read_safetensors(const std::string& path) {
  return decode_safetensors(read_file(path), path);
}

}  // namespace heed
