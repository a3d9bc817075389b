// CTranslate2's model.bin (binary version 6), as its Python specifications write it
// (python/ctranslate2/specs/model_spec.py, ModelSpec._serialize), all integers little-endian:
//   u32 version (6) · string spec name ("TransformerSpec") · u32 spec revision
//   u32 count, then per variable, in name order:
//     string name · u8 rank · u32 dims[rank] · u8 dtype · u32 byte count · the bytes (C order)
//   u32 count, then per alias: string alias · string name of the variable it stands for
// where a string is u16 (length + 1) · its UTF-8 bytes · a NUL, and dtype numbers
// CTranslate2's DataType: float32 0, int8 1, int16 2, int32 3, float16 4, bfloat16 5.
// Scalars (rank 0) hold a spec's attributes: booleans as int8, head counts as int16.
// Leaves out: quantised weights (heed writes float32; CTranslate2 quantises at load time).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace heed::ct2 {

enum class DType : uint8_t {
  Float32 = 0,
  Int8 = 1,
  Int16 = 2,
  Int32 = 3,
  Float16 = 4,
  BFloat16 = 5
};

struct Variable {
  DType dtype = DType::Float32;
  std::vector<uint32_t> shape;  // empty: a scalar
  std::string bytes;            // the values, C order, little-endian
};

struct ModelBin {
  std::string spec;  // "TransformerSpec"
  uint32_t revision = 0;
  std::map<std::string, Variable> variables;   // written in this (name) order
  std::map<std::string, std::string> aliases;  // alias -> the variable it stands for
};

Variable float_tensor(const std::vector<uint32_t>& shape, const float* values);
Variable int8_scalar(int8_t v);
Variable int16_scalar(int16_t v);

// The file's bytes; an Error for a name longer than a u16 allows or an alias of nothing.
std::string encode_model_bin(const ModelBin& m);
// Reads a model.bin; a truncated file, an unknown version or dtype, or a byte count that does not
// match its shape is an Error naming `path`.
ModelBin decode_model_bin(const std::string& bytes, const std::string& path);

}  // namespace heed::ct2
