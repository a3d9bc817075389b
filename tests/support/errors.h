// Test support: the message of the heed::Error a call throws ("" when it throws none), so tests
// can check that bad input is reported with its file, line, tensor or shapes.
#pragma once

#include <functional>
#include <string>

#include "heed/util/error.h"

namespace heed::testing {

inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace heed::testing
