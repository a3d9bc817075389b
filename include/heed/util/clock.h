// Elapsed and remaining times as progress lines print them.
// Leaves out: clocks themselves (std::chrono::steady_clock).
#pragma once

#include <cstdio>
#include <string>

namespace heed {

// seconds -> "H:MM:SS"
inline std::string clock_text(double seconds) {
  char buf[32];
  const auto s = static_cast<long>(seconds);
  std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
  return buf;
}

}  // namespace heed
