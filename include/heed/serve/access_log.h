// heed serve's access log: one JSON object per answered request, appended to a file as nginx's
// and Marian's servers keep theirs (a log is never truncated; logrotate's copytruncate works),
// or to stdout ("-"). Fields: time (UTC, ISO 8601 with milliseconds), remote address and port,
// method, path, query, status, request and response bytes, latency in milliseconds (null, and
// no address, for a request line that could not be parsed: a 400 or 414 before routing), user
// agent. Each line is one write(2) of O_APPEND, so lines from concurrent requests never interleave.
// A failed write is reported on stderr (once until a write succeeds again) and serving goes on:
// a full disk must not take the server down.
// Leaves out: reopening on SIGHUP, request bodies (they may be private).
#pragma once

#include <cstdint>
#include <mutex>
#include <string>

namespace heed::serve {

struct AccessEntry {
  std::string remote, method, path, query, user_agent;
  int remote_port = 0, status = 0;
  int64_t bytes_in = 0, bytes_out = 0;
  double latency_ms = -1;  // from routing to the answer; < 0: unknown (null in the line)
};

class AccessLog {
 public:
  // Opens PATH for appending, creating it (an Error names a path that cannot be opened, a
  // directory say); "-" is stdout.
  explicit AccessLog(const std::string& path);
  ~AccessLog();
  AccessLog(const AccessLog&) = delete;
  AccessLog& operator=(const AccessLog&) = delete;
  void write(const AccessEntry& e);                                // thread-safe
  static std::string line(const AccessEntry& e, int64_t unix_ms);  // the JSON line, "\n" ended

 private:
  std::string path_;
  int fd_ = -1;
  bool own_fd_ = false;
  std::mutex failing_mutex_;
  bool failing_ = false;  // the last write failed (reported once)
};

}  // namespace heed::serve
