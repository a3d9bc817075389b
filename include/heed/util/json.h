// Floats in config.json as people wrote them: 0.2, not 0.20000000298023224.
// Leaves out: everything else about JSON (nlohmann-json does it).
#pragma once

#include <charconv>
#include <cstdlib>
#include <string>

namespace heed {

// The double whose shortest decimal form is the float's shortest form: what a user typed as
// --dropout 0.2 is written back as 0.2 and read back as the same float.
inline double json_number(float x) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf - 1, x);  // shortest round trip
  *r.ptr = '\0';
  return std::strtod(buf, nullptr);
}

}  // namespace heed
