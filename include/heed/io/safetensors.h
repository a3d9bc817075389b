// The safetensors format (huggingface/safetensors): an 8-byte little-endian header length N,
// N bytes of JSON {name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {}},
// then the raw little-endian data. Readable by Python's safetensors and by numpy.
// Leaves out: dtypes other than F32 (heed stores float32 only).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "heed/tensor/tensor.h"

namespace heed {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

struct Safetensors {
  std::map<std::string, Tensor> tensors;
  std::map<std::string, std::string> metadata;
};

// What a file holds without its data: each tensor's shape and where its bytes begin in the data
// section (already checked: F32, in bounds, the ranges tiling the data section).
struct SafetensorsHeader {
  struct Entry {
    Shape shape;
    uint64_t begin = 0;
  };
  std::map<std::string, Entry> tensors;
  std::map<std::string, std::string> metadata;
};

// Serialises (tensors in the given order) and writes atomically.
std::string encode_safetensors(const NamedTensors& tensors,
                               const std::map<std::string, std::string>& metadata = {});
void write_safetensors(const std::string& path, const NamedTensors& tensors,
                       const std::map<std::string, std::string>& metadata = {});
// Reads and validates: a truncated file, a malformed header, an unsupported dtype or an
// inconsistent offset is an Error naming the file and the problem.
Safetensors read_safetensors(const std::string& path);
Safetensors decode_safetensors(const std::string& bytes, const std::string& path);
// The header alone, validated as read_safetensors validates it, reading only its bytes: what a
// loader checks a model's config against before building anything (models/model_files.h).
SafetensorsHeader read_safetensors_header(const std::string& path);

}  // namespace heed
