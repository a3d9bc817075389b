// Output files and model directories: an output path that names a device, a FIFO or a symlink
// is written through, never replaced by a regular file; a directory is refused; the content
// fingerprint --resume compares data files by; one writer per model directory (DirLock).
// Device nodes are made privately under a temporary folder, never in the system's /dev.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "heed/io/dir_lock.h"
#include "heed/io/files.h"
#include "support/errors.h"
#include "support/temp_dir.h"

namespace fs = std::filesystem;

namespace heed {
namespace {

using testing::error_of;
using testing::TempDir;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Files, AtomicWriteReplacesARegularFileWhole) {
  TempDir dir;
  write_file_atomic(dir / "out.txt", "first");
  write_file_atomic(dir / "out.txt", "second");
  EXPECT_EQ(slurp(dir / "out.txt"), "second");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.str()), fs::directory_iterator()), 1)
      << "a temporary file was left behind";
}

// A writer killed before its commit leaves PATH.tmp.<pid>; the next commit of PATH removes it
// once that process is gone. A live writer's temporary, another file's and files that only look
// alike stay.
TEST(Files, ACommitRemovesTheTemporariesOfKilledWriters) {
  TempDir dir;
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);  // a pid whose process is gone
  const std::string dead = std::to_string(child), live = std::to_string(::getppid());
  const std::vector<std::string> kept = {"out.txt.tmp." + live, "other.txt.tmp." + dead,
                                         "out.txt.tmp.x1", "out.txt.tmp."};
  std::ofstream(dir / ("out.txt.tmp." + dead)) << "partial";
  for (const std::string& name : kept) std::ofstream(dir / name) << "partial";
  write_file_atomic(dir / "out.txt", "whole");
  EXPECT_EQ(slurp(dir / "out.txt"), "whole");
  EXPECT_FALSE(fs::exists(dir / ("out.txt.tmp." + dead))) << "the killed writer's temporary";
  for (const std::string& name : kept) EXPECT_TRUE(fs::exists(dir / name)) << name;
  // the directory is read once; another file's commit there finds its killed writer too
  write_file_atomic(dir / "other.txt", "whole");
  EXPECT_FALSE(fs::exists(dir / ("other.txt.tmp." + dead)));
  EXPECT_TRUE(fs::exists(dir / ("out.txt.tmp." + live)));
}

// A symlink is followed: the file it points to is replaced, the link stays a link (relative
// links against their own folder, a chain of two, and a dangling link, whose target is made).
TEST(Files, AtomicWriteFollowsSymlinks) {
  TempDir dir;
  fs::create_directories(dir / "real");
  write_file_atomic(dir / "real/target.txt", "old");
  fs::create_symlink("real/target.txt", dir / "link");
  fs::create_symlink("link", dir / "link2");
  write_file_atomic(dir / "link2", "new");
  EXPECT_TRUE(fs::is_symlink(dir / "link"));
  EXPECT_TRUE(fs::is_symlink(dir / "link2"));
  EXPECT_EQ(slurp(dir / "real/target.txt"), "new");
  fs::create_symlink("real/made.txt", dir / "dangling");
  write_file_atomic(dir / "dangling", "made");
  EXPECT_TRUE(fs::is_symlink(dir / "dangling"));
  EXPECT_EQ(slurp(dir / "real/made.txt"), "made");
  fs::create_symlink("loop_b", dir / "loop_a");
  fs::create_symlink("loop_a", dir / "loop_b");
  EXPECT_NE(error_of([&] {
              write_file_atomic(dir / "loop_a", "x");
            }).find("too many levels of symbolic links"),
            std::string::npos);
}

TEST(Files, AtomicWriteRefusesADirectory) {
  TempDir dir;
  fs::create_directories(dir / "d");
  const std::string e = error_of([&] { write_file_atomic(dir / "d", "x"); });
  EXPECT_NE(e.find(dir / "d" + ": is a directory, not a file"), std::string::npos) << e;
  EXPECT_TRUE(fs::is_directory(dir / "d"));
}

// A FIFO with a reader gets the bytes and stays a FIFO (it was renamed over before).
TEST(Files, AtomicWriteWritesAFifoInPlace) {
  TempDir dir;
  const std::string fifo = dir / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string got;
  std::thread reader([&] { got = slurp(fifo); });
  AtomicFile f(fifo);
  EXPECT_TRUE(f.in_place());
  f.write("through ");
  f.write("the pipe");
  f.commit();
  reader.join();
  EXPECT_EQ(got, "through the pipe");
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

// Private character devices with /dev/null's and /dev/full's numbers: written in place (the
// null device swallows the bytes, the full one fails naming the path and the system's reason),
// and both are still devices afterwards. Making device nodes needs CAP_MKNOD (root) and a
// folder not mounted nodev; elsewhere the test is skipped, saying why.
TEST(Files, AtomicWriteWritesADeviceInPlace) {
  TempDir dir;
  const std::string null_dev = dir / "null", full_dev = dir / "full";
  if (::mknod(null_dev.c_str(), S_IFCHR | 0600, makedev(1, 3)) != 0 ||
      ::mknod(full_dev.c_str(), S_IFCHR | 0600, makedev(1, 7)) != 0)
    GTEST_SKIP() << "cannot make device nodes here (" << std::strerror(errno) << ")";
  const int probe = ::open(null_dev.c_str(), O_WRONLY);
  if (probe < 0) GTEST_SKIP() << "device nodes cannot be opened here (nodev)";
  ::close(probe);
  write_file_atomic(null_dev, std::string(3 << 20, 'x'));
  const std::string e = error_of([&] { write_file_atomic(full_dev, "x"); });
  EXPECT_NE(e.find(full_dev + ": write failed (No space left on device)"), std::string::npos) << e;
  for (const std::string& d : {null_dev, full_dev}) {
    struct stat st {};
    ASSERT_EQ(::lstat(d.c_str(), &st), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode)) << d << " was replaced";
  }
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.str()), fs::directory_iterator()), 2)
      << "a temporary file was left behind";
}

TEST(Files, FingerprintFollowsTheBytesNotTheName) {
  TempDir dir;
  write_file_atomic(dir / "a", "the same bytes\n");
  write_file_atomic(dir / "b", "the same bytes\n");
  write_file_atomic(dir / "c", "the same bytez\n");
  EXPECT_EQ(file_fingerprint(dir / "a"), file_fingerprint(dir / "b"));
  EXPECT_NE(file_fingerprint(dir / "a"), file_fingerprint(dir / "c"));
  EXPECT_EQ(file_fingerprint(dir / "a").substr(0, 3), "15:");
  // FNV-1a 64 of the empty string is its offset basis
  write_file_atomic(dir / "empty", "");
  EXPECT_EQ(file_fingerprint(dir / "empty"), "0:cbf29ce484222325");
  EXPECT_NE(error_of([&] { file_fingerprint(dir / "none"); }).find("cannot open"),
            std::string::npos);
}

// One writer per directory: a second lock fails at once naming the holder's PID (here this
// process's: flock locks belong to the open file, so a second open in one process conflicts
// as another process's would); released with its DirLock; a file in the way is refused.
TEST(DirLock, ASecondWriterFailsNamingTheHolder) {
  TempDir dir;
  const std::string model = dir / "model";
  {
    const DirLock first(model, "train");
    EXPECT_TRUE(fs::is_directory(model));
    const std::string e = error_of([&] { const DirLock second(model, "average"); });
    EXPECT_NE(e.find("average: " + model + " is being written by another process (PID " +
                     std::to_string(::getpid()) + ","),
              std::string::npos)
        << e;
  }
  EXPECT_EQ(error_of([&] { const DirLock again(model, "train"); }), "");
  write_file_atomic(dir / "file", "x");
  EXPECT_NE(error_of([&] { const DirLock l(dir / "file", "train"); }).find("not a directory"),
            std::string::npos);
}

}  // namespace
}  // namespace heed
