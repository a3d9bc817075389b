// The safetensors format (huggingface/safetensors): an 8-byte little-endian header length N,
// N bytes of JSON {name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {}},
// then the raw little-endian data. Readable by Python's safetensors and by numpy.
// Leaves out: dtypes other than F32 (heed stores float32 only).
#pragma once

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

// Serialises (tensors in the given order) and writes atomically.
std::string encode_safetensors(const NamedTensors& tensors,
                               const std::map<std::string, std::string>& metadata = {});
void write_safetensors(const std::string& path, const NamedTensors& tensors,
                       const std::map<std::string, std::string>& metadata = {});
// Reads and validates: a truncated file, a malformed header, an unsupported dtype or an
// inconsistent offset is an Error naming the file and the problem.
Safetensors read_safetensors(const std::string& path);
Safetensors decode_safetensors(const std::string& bytes, const std::string& path);

}  // namespace heed
