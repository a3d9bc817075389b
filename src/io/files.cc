// Whole-file read and atomic writes (POSIX: open/write/fsync/rename, then fsync the directory).
// Leaves out: Windows.
#include "heed/io/files.h"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <utility>

#include "heed/util/error.h"

namespace heed {

std::string read_file(const std::string& path) {
  check(!std::filesystem::is_directory(path), path, ": is a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in.good()) {
    const int e = errno;
    throw FileError(path, e, std::string("cannot open (") + std::strerror(e) + ")");
  }
  // the string sized once from the file's size (a stream copy grew and copied it ~3 times:
  // a model's 12 MB cost 20k page faults), read in 64 KiB pieces, which also serves files whose
  // size is not known in advance (pipes) or changes while read
  std::string bytes;
  std::error_code size_error;
  const auto size = std::filesystem::file_size(path, size_error);
  if (!size_error) bytes.reserve(static_cast<size_t>(size));
  std::array<char, size_t{1} << 16> piece{};
  while (in.read(piece.data(), piece.size()) || in.gcount() > 0)
    bytes.append(piece.data(), static_cast<size_t>(in.gcount()));
  check(!in.bad(), path, ": read error");
  return bytes;
}

void write_file_atomic(const std::string& path, std::string_view bytes) {
  AtomicFile f(path);
  f.write(bytes);
  f.commit();
}

AtomicFile::AtomicFile(std::string path)
    : path_(std::move(path)), tmp_(path_ + ".tmp." + std::to_string(::getpid())) {
  fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  check(fd_ >= 0, tmp_, ": cannot create (", std::strerror(errno), ")");
}

AtomicFile::~AtomicFile() {
  if (committed_) return;
  if (fd_ >= 0) ::close(fd_);
  ::unlink(tmp_.c_str());
}

void AtomicFile::write(std::string_view bytes) {
  check(!committed_, path_, ": written after it was committed");
  buffer_.append(bytes);
  if (buffer_.size() >= (1U << 20)) drain();
}

void AtomicFile::drain() {
  size_t done = 0;
  while (done < buffer_.size()) {
    ssize_t w = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
    if (w < 0 && errno == EINTR) continue;
    check(w > 0, path_, ": write failed (", std::strerror(errno), ")");
    done += static_cast<size_t>(w);
  }
  buffer_.clear();
}

void AtomicFile::commit() {
  drain();
  const bool synced = ::fsync(fd_) == 0;
  const int sync_errno = errno;
  const bool closed = ::close(fd_) == 0;
  fd_ = -1;
  check(synced && closed, path_, ": write failed (", std::strerror(synced ? errno : sync_errno),
        ")");
  check(::rename(tmp_.c_str(), path_.c_str()) == 0, path_, ": cannot replace atomically (",
        std::strerror(errno), ")");
  committed_ = true;
  const std::string dir = std::filesystem::path(path_).parent_path().string();
  const int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

TempDir::TempDir(const std::string& prefix) {
  const char* tmp = std::getenv("TMPDIR");
  const std::string parent = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  std::string name = parent + "/" + prefix + "-XXXXXX";
  check(::mkdtemp(name.data()) != nullptr, parent, ": cannot make a temporary directory (",
        std::strerror(errno), ")");
  path_ = std::move(name);
}

TempDir::~TempDir() {
  std::error_code ec;  // a directory that cannot be removed is left behind, not an error
  std::filesystem::remove_all(path_, ec);
}

}  // namespace heed
