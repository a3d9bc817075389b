// MPI_COMM_WORLD as a Communicator (see mpi_world.h). Built only when heed is configured with
// MPI; every call checks MPI's return code (MPI_ERRORS_RETURN), so a failed collective is an
// Error naming the operation and the rank, not a silent wrong sum.
// MPI's C interface alone (Open MPI's and MPICH's headers otherwise pull in the deprecated C++
// bindings, a library of their own)
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <chrono>
#include <cstdlib>
#include <string>

#include "heed/util/error.h"
#include "mpi_world.h"

namespace heed::dist {

namespace {

void check_mpi(int rc, const char* what, int rank) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  fail("MPI: ", what, " failed on rank ", rank, ": ", std::string(text, static_cast<size_t>(len)));
}

class MpiWorld final : public Communicator {
 public:
  MpiWorld() {
    int provided = 0;
    check_mpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init", -1);
    std::atexit([] {
      int finalized = 0;
      MPI_Finalized(&finalized);
      if (!finalized) MPI_Finalize();
    });
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void allreduce_sum(std::span<float> data) override {
    reduce(data.data(), data.size(), MPI_FLOAT, MPI_SUM, "MPI_Allreduce(sum, float)");
  }
  void allreduce_sum(std::span<double> data) override {
    reduce(data.data(), data.size(), MPI_DOUBLE, MPI_SUM, "MPI_Allreduce(sum, double)");
  }
  void allreduce_max(std::span<double> data) override {
    reduce(data.data(), data.size(), MPI_DOUBLE, MPI_MAX, "MPI_Allreduce(max)");
  }
  void allreduce_or(std::span<uint8_t> data) override {
    reduce(data.data(), data.size(), MPI_UINT8_T, MPI_BOR, "MPI_Allreduce(or)");
  }
  void broadcast(std::span<uint8_t> data) override {
    timed([&] {
      for (size_t at = 0; at < data.size(); at += kMaxCount)
        check_mpi(
            MPI_Bcast(data.data() + at, count(data.size() - at), MPI_UINT8_T, 0, MPI_COMM_WORLD),
            "MPI_Bcast", rank_);
    });
  }
  void barrier() override {
    timed([&] { check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier", rank_); });
  }
  void abort(int code) override { MPI_Abort(MPI_COMM_WORLD, code); }

 private:
  // MPI counts are ints: longer buffers go in pieces of at most 2^30 elements.
  static constexpr size_t kMaxCount = size_t{1} << 30;
  static int count(size_t n) { return static_cast<int>(n < kMaxCount ? n : kMaxCount); }

  template <class F>
  void timed(F&& f) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  template <class T>
  void reduce(T* data, size_t n, MPI_Datatype type, MPI_Op op, const char* what) {
    timed([&] {
      for (size_t at = 0; at < n; at += kMaxCount)
        check_mpi(MPI_Allreduce(MPI_IN_PLACE, data + at, count(n - at), type, op, MPI_COMM_WORLD),
                  what, rank_);
    });
  }

  int rank_ = 0, size_ = 1;
};

}  // namespace

std::unique_ptr<Communicator> make_mpi_world() {
  return std::make_unique<MpiWorld>();
}

}  // namespace heed::dist
