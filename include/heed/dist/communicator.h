// The processes of one data-parallel job and the collective operations they train with: every
// process (rank) holds a full replica of the model, trains on its share of each global batch,
// and the ranks sum their gradients (train/gradient_sync.h) so that each applies the same update.
// `world()` is the job this process belongs to: MPI's MPI_COMM_WORLD when `heed train` was
// started by mpirun (and heed was built with MPI), otherwise a job of one process whose
// collectives do nothing. Nothing is initialised unless join_world() finds mpirun's environment,
// so a plain `heed train` runs exactly as without MPI.
// Leaves out: which data a rank trains on and what is summed (train/loop.cc,
// train/gradient_sync.h); point-to-point messages (none are needed).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace heed::dist {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Element-wise sums over all ranks, in place: every rank ends with the same values.
  virtual void allreduce_sum(std::span<float> data) = 0;
  virtual void allreduce_sum(std::span<double> data) = 0;
  // Element-wise maximum over all ranks, in place.
  virtual void allreduce_max(std::span<double> data) = 0;
  // Element-wise OR of bytes over all ranks, in place (the rows of sparse gradients).
  virtual void allreduce_or(std::span<uint8_t> data) = 0;
  // Rank 0's bytes to every rank.
  virtual void broadcast(std::span<uint8_t> data) = 0;
  virtual void barrier() = 0;
  // Ends the whole job at once with `code` (an error on one rank must not leave the others
  // waiting in a collective). A job of one process: returns, and its caller exits.
  virtual void abort(int code) = 0;

  bool root() const { return rank() == 0; }
  // Wall seconds spent inside collectives so far (the time a step waits for the others).
  double seconds() const { return seconds_; }

 protected:
  double seconds_ = 0;
};

// The job of this process (one process unless join_world() joined an MPI job).
Communicator& world();

// Joins the MPI job when this process was started by mpirun (Open MPI's, MPICH's or a PMIx
// launcher's environment): MPI_Init, MPI_Finalize at exit. A no-op otherwise. An Error when the
// environment says mpirun but heed was built without MPI: N copies of one training would
// otherwise overwrite each other's model directory. Call once, before any collective.
void join_world();

// True when heed was built with MPI (libopenmpi-dev present at configure time).
bool mpi_built();

// Rank 0's value, on every rank (decisions taken by rank 0's clock or files).
bool agree(Communicator& c, bool value);
double agree(Communicator& c, double value);

// "" for a job of one process, " (rank R of N)" otherwise: for messages of every rank.
std::string where(const Communicator& c);

}  // namespace heed::dist
