// One writer per model directory: an advisory lock (flock) on DIR/heed.lock, held for as long
// as the DirLock lives by whatever writes the directory (heed train, heed average --out), so
// that a second writer fails at once, naming the holder's PID, instead of interleaving its
// files with the first's. Readers (translate, serve) never take it and never wait. The lock
// goes with the process however it ends (the kernel drops it on the last close), so a killed
// run leaves no stale lock; the file itself stays.
// Leaves out: directories on network file systems whose flock is not shared between machines.
#pragma once

#include <string>
#include <string_view>

namespace heed {

class DirLock {
 public:
  static constexpr const char* kFile = "heed.lock";
  // Creates `dir` if it is missing and locks it; an Error naming the directory, `what` (the
  // command, for the message) and the holder's PID when another process holds it.
  DirLock(const std::string& dir, std::string_view what);
  ~DirLock();
  DirLock(DirLock&& other) noexcept;
  DirLock& operator=(DirLock&&) = delete;
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace heed
