// Floats in config.json as people wrote them: 0.2, not 0.20000000298023224; and the numbers of
// a JSON file checked before nlohmann-json converts them.
// Leaves out: everything else about JSON (nlohmann-json does it).
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "heed/util/error.h"

namespace heed {

// The double whose shortest decimal form is the float's shortest form: what a user typed as
// --dropout 0.2 is written back as 0.2 and read back as the same float.
inline double json_number(float x) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf - 1, x);  // shortest round trip
  *r.ptr = '\0';
  return std::strtod(buf, nullptr);
}

// nlohmann-json reads a number into an integer with a plain cast, which is undefined behaviour
// for a float beyond the integer's range (a config.json saying "d_model": 1e49, a safetensors
// shape [1e30]). For files whose every number is a size or a small setting (config.json,
// safetensors headers): every number of `j`, at any depth, must be a JSON integer or a finite
// float within +-(2^31 - 1); an Error names `file` and the key.
inline void check_json_numbers(const nlohmann::json& j, std::string_view file,
                               const std::string& key = "") {
  if (j.is_structured()) {
    for (auto it = j.begin(); it != j.end(); ++it)
      check_json_numbers(*it, file, j.is_object() ? it.key() : key);
    return;
  }
  if (!j.is_number_float()) return;
  const double x = j.get<double>();
  check(std::isfinite(x) && std::fabs(x) <= 2147483647.0, file, ": ",
        key.empty() ? std::string("a number") : "\"" + key + "\"", " is ", x,
        ", beyond the range heed reads");
}

// Member `key` of object `j` as an integer of type T: an Error naming `file` and the key unless
// it is a JSON integer within T's range (where the other numbers of a file may be anything,
// such as a trainer state's "best": 1e300).
template <class T>
T json_integer(const nlohmann::json& j, const char* key, std::string_view file) {
  const nlohmann::json& v = j.at(key);
  const bool fits =
      v.is_number_unsigned()
          ? v.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<T>::max())
          : v.is_number_integer() &&
                v.get<int64_t>() >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
                v.get<int64_t>() <= static_cast<int64_t>(std::numeric_limits<T>::max());
  check(fits, file, ": \"", key, "\" is ", v.dump(), ", not an integer heed can read");
  return v.is_number_unsigned() ? static_cast<T>(v.get<uint64_t>())
                                : static_cast<T>(v.get<int64_t>());
}

}  // namespace heed
