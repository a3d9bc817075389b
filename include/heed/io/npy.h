// NumPy's .npy format (version 1.0): a float32 array of any shape, written atomically (io/files.h),
// as numpy.load reads it.
// Leaves out: reading .npy files, other dtypes.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace heed {

// The file's bytes: magic, header dict ('<f4', C order, the shape) padded to 64 bytes, data.
std::string npy_bytes(std::span<const float> data, const std::vector<int64_t>& shape);
void write_npy(const std::string& path, std::span<const float> data,
               const std::vector<int64_t>& shape);

}  // namespace heed
