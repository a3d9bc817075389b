// NumPy's .npy format: a float32 array of any shape, written atomically (io/files.h), as
// numpy.load reads it (version 1.0); read back (versions 1 to 3) as float32 or raw int8 bytes, and
// .npz archives of them (numpy.savez, Marian's models).
// Leaves out: other dtypes, Fortran order, compressed .npz (numpy.savez_compressed).
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace heed {

// The file's bytes: magic, header dict ('<f4', C order, the shape) padded to 64 bytes, data.
std::string npy_bytes(std::span<const float> data, const std::vector<int64_t>& shape);
void write_npy(const std::string& path, std::span<const float> data,
               const std::vector<int64_t>& shape);

struct NpyArray {
  std::string descr;                  // "<f4" or "|i1"
  std::vector<int64_t> shape;         // C order
  std::string bytes;                  // the values
  std::vector<float> floats() const;  // a "<f4" array's values (an Error for another dtype)
};
// One .npy file's bytes; an Error names `what` for anything but "<f4" or "|i1" in C order.
NpyArray decode_npy(const std::string& bytes, const std::string& what);
// Every array of an .npz archive by its name (without ".npy").
std::map<std::string, NpyArray> read_npz(const std::string& path);

}  // namespace heed
