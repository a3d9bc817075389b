// File helpers: whole-file reads with errors that name the file, atomic writes (write a
// temporary beside the target, fsync, rename), so a crash never leaves half a file, and a
// content fingerprint (what --resume compares a run's data files by).
// Leaves out: memory mapping (model files are small next to RAM).
#pragma once

#include <string>
#include <string_view>

namespace heed {

std::string read_file(const std::string& path);
void write_file_atomic(const std::string& path, std::string_view bytes);

// "SIZE:HASH" of a file's bytes (a 64-bit FNV-1a in hex): equal for equal contents, and with
// all but certainty different when the bytes differ. An Error names a file that cannot be read.
std::string file_fingerprint(const std::string& path);

// A file written in pieces and put in place whole: the bytes go to PATH.tmp.<pid>, commit()
// writes the rest, fsyncs and renames it over PATH. A failed write or commit is an Error naming
// the file and the system's reason; an AtomicFile destroyed without commit() (an error)
// removes its temporary and leaves PATH as it was. A process killed before its commit leaves its
// temporary behind; the next commit of PATH removes it (its process gone).
// What PATH names decides how: a symlink is followed (the file it points to is replaced
// atomically, the link kept); a device, FIFO or socket is opened and written in place, never
// replaced (`--attention-out /dev/stdout`, a named pipe); a directory is an Error.
class AtomicFile {
 public:
  explicit AtomicFile(std::string path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  void write(std::string_view bytes);  // buffered: the system sees it in blocks
  void commit();
  const std::string& path() const { return path_; }
  bool in_place() const { return tmp_.empty(); }  // written straight into a non-regular file

 private:
  void drain();                      // the buffer to the file
  std::string path_, target_, tmp_;  // target_: path_'s symlinks followed; tmp_ empty: in place
  int fd_ = -1;
  std::string buffer_;
  bool committed_ = false;
};

// A fresh directory under $TMPDIR (or /tmp) named PREFIX-XXXXXX, removed with all it holds
// when the TempDir goes (an Error naming the parent when it cannot be made).
class TempDir {
 public:
  explicit TempDir(const std::string& prefix);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace heed
