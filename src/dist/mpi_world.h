// The MPI job, built only when heed is configured with MPI (src/dist/mpi_communicator.cc).
// Leaves out: the single-process job and the choice between them (communicator.cc).
#pragma once

#include <memory>

#include "heed/dist/communicator.h"

namespace heed::dist {

// MPI_Init (funnelled threads: only the main thread calls MPI; OpenMP's workers never do) and
// MPI_COMM_WORLD as a Communicator; MPI_Finalize at exit.
std::unique_ptr<Communicator> make_mpi_world();

}  // namespace heed::dist
