// heed::Error, the one exception type the library throws for bad input and misuse.
// Leaves out: error codes and recovery policy; callers (the CLI) decide what to print.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace heed {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

// A file that could not be opened, with its path and the system's errno, so that a caller can
// tell a missing file (ENOENT) from other failures (the Python package: FileNotFoundError and
// OSError). The message is "PATH: WHAT".
class FileError : public Error {
 public:
  FileError(std::string path, int error, const std::string& what)
      : Error(path + ": " + what), path_(std::move(path)), error_(error) {}
  const std::string& path() const { return path_; }
  int error() const { return error_; }

 private:
  std::string path_;
  int error_;
};

// Builds a message from any streamable pieces: HEED_CHECK-free, so the call site reads as code.
template <class... Args>
[[noreturn]] void fail(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  throw Error(os.str());
}

template <class... Args>
void check(bool ok, const Args&... args) {
  if (!ok) fail(args...);
}

}  // namespace heed
