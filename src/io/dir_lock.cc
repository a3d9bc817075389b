// The model directory's writer lock (see the header): flock(LOCK_EX | LOCK_NB) on DIR/heed.lock,
// the holder's PID written into it for the next writer's message.
// Leaves out: waiting for the lock (a second writer is a mistake to report, not to queue).
#include "heed/io/dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include "heed/util/error.h"

namespace fs = std::filesystem;

namespace heed {

DirLock::DirLock(const std::string& dir, std::string_view what) {
  std::error_code ec;
  check(!fs::exists(dir, ec) || fs::is_directory(dir, ec), dir, ": not a directory");
  fs::create_directories(dir, ec);
  check(!ec, dir, ": cannot create the directory (", ec.message(), ")");
  const std::string file = (fs::path(dir) / kFile).string();
  fd_ = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  check(fd_ >= 0, file, ": cannot open the directory's lock (", std::strerror(errno), ")");
  int rc = 0;
  do {
    rc = ::flock(fd_, LOCK_EX | LOCK_NB);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    const int e = errno;
    std::string holder(32, '\0');
    const ssize_t n = ::pread(fd_, holder.data(), holder.size() - 1, 0);
    holder.resize(n > 0 ? static_cast<size_t>(n) : 0);
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
    ::close(fd_);
    fd_ = -1;
    check(e != EWOULDBLOCK, what, ": ", dir, " is being written by another process (PID ",
          holder.empty() ? std::string("unknown") : holder, ", holding ", file,
          "); wait for it to finish or stop it");
    throw Error(file + ": cannot lock (" + std::strerror(e) + ")");
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  // the PID is for others' messages: a failure to record it does not stop the run
  const bool recorded = ::ftruncate(fd_, 0) == 0 && ::pwrite(fd_, pid.data(), pid.size(), 0) ==
                                                        static_cast<ssize_t>(pid.size());
  static_cast<void>(recorded);
}

DirLock::DirLock(DirLock&& other) noexcept : fd_(other.fd_) {
  other.fd_ = -1;
}

DirLock::~DirLock() {
  if (fd_ >= 0) ::close(fd_);  // the lock goes with the descriptor
}

}  // namespace heed
