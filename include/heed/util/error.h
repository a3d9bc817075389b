// heed::Error, the one exception type the library throws for bad input and misuse.
// Leaves out: error codes and recovery policy; callers (the CLI) decide what to print.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace heed {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
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
