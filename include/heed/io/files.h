// File helpers: whole-file reads with errors that name the file, and atomic writes
// (write a temporary beside the target, fsync, rename), so a crash never leaves half a file.
// Leaves out: memory mapping (model files are small next to RAM).
#pragma once

#include <string>
#include <string_view>

namespace heed {

std::string read_file(const std::string& path);
void write_file_atomic(const std::string& path, std::string_view bytes);

}  // namespace heed
