// heed serve's access log (see the header).
#include "heed/serve/access_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <iostream>

#include <nlohmann/json.hpp>

#include "heed/util/error.h"

namespace heed::serve {

AccessLog::AccessLog(const std::string& path) : path_(path) {
  if (path == "-") {
    fd_ = STDOUT_FILENO;
    return;
  }
  fd_ = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  check(fd_ >= 0, "--access-log ", path, ": ", std::strerror(errno));
  own_fd_ = true;
}

AccessLog::~AccessLog() {
  if (own_fd_) ::close(fd_);
}

std::string AccessLog::line(const AccessEntry& e, int64_t unix_ms) {
  const std::time_t seconds = static_cast<std::time_t>(unix_ms / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char time[64];
  std::snprintf(time, sizeof time, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                static_cast<int>(unix_ms % 1000));
  nlohmann::json j = {{"time", time},
                      {"remote", e.remote},
                      {"remote_port", e.remote_port},
                      {"method", e.method},
                      {"path", e.path},
                      {"query", e.query},
                      {"status", e.status},
                      {"bytes_in", e.bytes_in},
                      {"bytes_out", e.bytes_out},
                      {"user_agent", e.user_agent}};
  j["latency_ms"] = e.latency_ms >= 0 ? nlohmann::json(std::round(e.latency_ms * 1000) / 1000)
                                      : nlohmann::json(nullptr);
  // invalid UTF-8 in a path or header is replaced, never an exception in the server's logger
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

void AccessLog::write(const AccessEntry& e) {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  const std::string text =
      line(e, std::chrono::duration_cast<std::chrono::milliseconds>(now).count());
  // one write(2) per line: with O_APPEND the line lands whole at the end of the file
  ssize_t n;
  do {
    n = ::write(fd_, text.data(), text.size());
  } while (n < 0 && errno == EINTR);
  const int error = errno;
  const bool ok = n == static_cast<ssize_t>(text.size());
  const std::lock_guard<std::mutex> lock(failing_mutex_);
  if (!ok && !failing_)
    std::cerr << "heed serve: --access-log " << path_ << ": "
              << (n < 0 ? std::strerror(error) : "a short write") << " (serving goes on)\n";
  failing_ = !ok;
}

}  // namespace heed::serve
