// The job of this process: one process, or MPI's when started by mpirun (see the header).
#include "heed/dist/communicator.h"

#include <cstdlib>

#include "heed/util/error.h"
#ifdef HEED_WITH_MPI
#include "mpi_world.h"
#endif

namespace heed::dist {

namespace {

// A job of one process: every collective leaves the data as it is.
class SingleProcess final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void allreduce_sum(std::span<float> /*data*/) override {}
  void allreduce_sum(std::span<double> /*data*/) override {}
  void allreduce_max(std::span<double> /*data*/) override {}
  void allreduce_or(std::span<uint8_t> /*data*/) override {}
  void broadcast(std::span<uint8_t> /*data*/) override {}
  void barrier() override {}
  void abort(int /*code*/) override {}
};

std::unique_ptr<Communicator>& the_world() {
  static std::unique_ptr<Communicator> w = std::make_unique<SingleProcess>();
  return w;
}

// mpirun's environment: Open MPI's, MPICH's (Hydra) or any PMIx launcher's.
bool launched_by_mpirun() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(v) != nullptr) return true;
  return false;
}

}  // namespace

Communicator& world() {
  return *the_world();
}

bool mpi_built() {
#ifdef HEED_WITH_MPI
  return true;
#else
  return false;
#endif
}

void join_world() {
  if (!launched_by_mpirun() || world().size() > 1) return;
#ifdef HEED_WITH_MPI
  the_world() = make_mpi_world();
#else
  fail(
      "this process was started by mpirun, but heed was built without MPI: each of its "
      "processes would train a model of its own into the same directory. Install "
      "libopenmpi-dev (scripts/install-deps.sh) and rebuild, or run heed train without mpirun");
#endif
}

bool agree(Communicator& c, bool value) {
  uint8_t v = value ? 1 : 0;
  c.broadcast({&v, 1});
  return v != 0;
}

double agree(Communicator& c, double value) {
  c.broadcast({reinterpret_cast<uint8_t*>(&value), sizeof value});
  return value;
}

std::string where(const Communicator& c) {
  if (c.size() == 1) return "";
  return " (rank " + std::to_string(c.rank()) + " of " + std::to_string(c.size()) + ")";
}

}  // namespace heed::dist
