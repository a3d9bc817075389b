// Whole-file read, atomic writes (POSIX: open/write/fsync/rename, then fsync the directory;
// non-regular targets written in place) and content fingerprints.
// Leaves out: Windows.
#include "heed/io/files.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <string_view>
#include <utility>
#include <vector>

#include "heed/util/error.h"
#include "heed/util/fnv1a.h"

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

std::string file_fingerprint(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    throw FileError(path, e, std::string("cannot open (") + std::strerror(e) + ")");
  }
  Fnv1a hash;
  uint64_t size = 0;
  std::vector<char> piece(size_t{1} << 16);
  for (;;) {
    const ssize_t n = ::read(fd, piece.data(), piece.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int e = errno;
      ::close(fd);
      throw FileError(path, e, std::string("read error (") + std::strerror(e) + ")");
    }
    if (n == 0) break;
    hash.add(std::string_view(piece.data(), static_cast<size_t>(n)));
    size += static_cast<uint64_t>(n);
  }
  ::close(fd);
  return std::to_string(size) + ":" + hash.hex();
}

namespace {
// The file a path names once its symlinks are followed (relative links against their own
// folder); a dangling link gives the path it points to, where the output is created. More than
// 40 links in a row is an Error (a loop), as the system's own limit.
std::string follow_symlinks(const std::string& path) {
  namespace fs = std::filesystem;
  fs::path p(path);
  for (int hops = 0; hops < 40; ++hops) {
    std::error_code ec;
    if (!fs::is_symlink(fs::symlink_status(p, ec))) return p.string();
    const fs::path to = fs::read_symlink(p, ec);
    check(!ec, path, ": cannot read the symbolic link (", ec.message(), ")");
    p = to.is_absolute() ? to : p.parent_path() / to;
  }
  throw Error(path + ": too many levels of symbolic links");
}

// An AtomicFile writes TARGET + kTemporary + <pid>, which dead_writer reads back
constexpr std::string_view kTemporary = ".tmp.";

// Whether `name` is a temporary, TARGET.tmp.<pid>, whose process is gone (then *target = TARGET)
bool dead_writer(const std::string& name, std::string* target) {
  const size_t at = name.rfind(kTemporary);
  if (at == std::string::npos || at == 0) return false;
  const std::string digits = name.substr(at + kTemporary.size());
  if (digits.empty() || digits.size() > 9 ||
      digits.find_first_not_of("0123456789") != std::string::npos)
    return false;
  const auto pid = static_cast<pid_t>(std::stol(digits));
  if (pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) return false;  // alive, unknown
  *target = name.substr(0, at);
  return true;
}

// The temporaries of target's writers that were killed before their commit (target.tmp.<pid>,
// the process gone) are removed: a run killed and resumed again and again leaves none behind.
// A live writer's temporary, and every other file, stays. Each directory is read once per
// process (`heed features --out DIR` commits one file per utterance there: reading DIR at every
// commit would cost the square of its files), for the temporaries it held then; those of writers
// killed later are left to the next process.
void remove_stale_temporaries(const std::string& target) {
  namespace fs = std::filesystem;
  static std::mutex mutex;
  // directory -> (target's name, one of its stale temporaries' names), as first read
  static auto* found = new std::map<std::string, std::multimap<std::string, std::string>>;
  const fs::path t(target);
  const fs::path dir = t.has_parent_path() ? t.parent_path() : fs::path(".");
  std::vector<std::string> stale;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    auto [it, fresh] = found->try_emplace(dir.string());
    if (fresh) {
      std::error_code ec;
      for (const auto& entry : fs::directory_iterator(dir, ec)) {
        const std::string name = entry.path().filename().string();
        std::string of;
        if (dead_writer(name, &of) && entry.is_regular_file(ec) && !entry.is_symlink(ec))
          it->second.emplace(std::move(of), name);
      }
    }
    const auto [first, last] = it->second.equal_range(t.filename().string());
    for (auto e = first; e != last; ++e) stale.push_back(e->second);
    it->second.erase(first, last);
  }
  for (const std::string& name : stale) {
    std::string of;
    std::error_code ec;
    if (dead_writer(name, &of)) fs::remove(dir / name, ec);  // still gone
  }
}
}  // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  struct stat st {};
  if (::stat(path_.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    check(!S_ISDIR(st.st_mode), path_, ": is a directory, not a file");
    // a device, FIFO or socket: written in place (through the path itself, which also serves
    // the kernel's own links such as /dev/stdout -> /proc/self/fd/1 -> pipe:[N])
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC);
    check(fd_ >= 0, path_, ": cannot open for writing (", std::strerror(errno), ")");
    return;
  }
  const std::string target = follow_symlinks(path_);
  tmp_ = target + std::string(kTemporary) + std::to_string(::getpid());
  target_ = target;
  fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  check(fd_ >= 0, tmp_, ": cannot create (", std::strerror(errno), ")");
}

AtomicFile::~AtomicFile() {
  if (committed_) return;
  if (fd_ >= 0) ::close(fd_);
  if (!in_place()) ::unlink(tmp_.c_str());
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
  // a FIFO, pipe or character device cannot be synced (EINVAL): what was written has gone
  const bool synced = ::fsync(fd_) == 0 || (in_place() && (errno == EINVAL || errno == EROFS));
  const int sync_errno = errno;
  const bool closed = ::close(fd_) == 0;
  fd_ = -1;
  check(synced && closed, path_, ": write failed (", std::strerror(synced ? errno : sync_errno),
        ")");
  if (in_place()) {
    committed_ = true;
    return;
  }
  check(::rename(tmp_.c_str(), target_.c_str()) == 0, path_, ": cannot replace atomically (",
        std::strerror(errno), ")");
  committed_ = true;
  const std::string dir = std::filesystem::path(target_).parent_path().string();
  const int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  remove_stale_temporaries(target_);
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
